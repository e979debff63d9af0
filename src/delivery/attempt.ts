import { Readable } from 'node:stream';
import zlib from 'node:zlib';
import type { Dispatcher } from 'undici';
import { basicAuth } from '../util/options.js';
import { setLongTimeout } from '../util/wait.js';
import type { Interrupt } from '../util/wait.js';
import type { RetryReason } from '../providers/index.js';

export type TransportError = 'timeout' | 'refused' | 'reset' | 'dns' | 'tls' | 'too_many_redirects' | 'interrupted' | 'other';

/** What one HTTP attempt came to: a status, or a transport error, never both. */
export interface AttemptOutcome {
  status?: number;
  error?: TransportError;
  /** The underlying error's message or code, for people (never includes request headers). */
  detail?: string;
  latencyMs: number;
  redirects: number;
  /** Response headers the sender acts on (Retry-After, X-Slack-No-Retry), lowercased. */
  headers: Record<string, string>;
  /** The first bytes of the answer (a non-2xx one usually says why, e.g. "invalid signature"). */
  bodySnippet?: string;
  /** With `wire`: every response header and the first 4 KiB of the body, for --verbose. */
  wire?: { headers: Record<string, string>; body: string };
}

const SNIPPET_BYTES = 200;
const WIRE_BYTES = 4096;
const KEPT_HEADERS = ['retry-after', 'x-slack-no-retry', 'location', 'content-encoding'];

export interface AttemptRequest {
  url: URL;
  headers: Record<string, string>;
  body: Buffer;
  timeoutMs: number;
  maxRedirects: number;
  dispatcher: Dispatcher;
  /**
   * Called synchronously the moment a final answer is complete, from the HTTP client's own
   * callback, before any promise settles: chaos signals the receiver from here, so nothing else
   * the process has queued runs between the ack and the kill.
   */
  onAnswer?: (status: number) => void;
  /** Aborts the attempt in flight (Ctrl-C must not wait out a 30 s timeout). */
  interrupt?: Interrupt;
  /** Keep the whole answer's headers and more of its body (send --verbose). */
  wire?: boolean;
  /**
   * Send the body in these pieces (which together are `body`), a moment apart, as a network
   * delivers a large body in segments: a receiver reads each as a chunk of its own. check cuts a
   * multi-byte body inside characters, so a receiver that decodes chunks one by one is found out.
   */
  pieces?: readonly Buffer[];
}

/** The pause between pieces: long enough for each to be read on its own, short enough not to matter. */
const PIECE_GAP_MS = 2;

async function* inPieces(pieces: readonly Buffer[]): AsyncGenerator<Buffer> {
  for (const [i, piece] of pieces.entries()) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, PIECE_GAP_MS));
    yield piece;
  }
}

/**
 * POST once, following redirects only as far as the provider does. The timeout covers the whole
 * exchange, connect to the last byte, as a provider's does: a receiver that answers its headers in
 * time but dribbles the body still times out.
 */
export async function attempt(req: AttemptRequest): Promise<AttemptOutcome> {
  const started = performance.now();
  // Credentials in the URL (user:pass@) travel as Basic auth, as senders that accept such URLs
  // send them; an Authorization header the user set explicitly wins. Every sender passes here.
  const auth = basicAuth(req.url);
  if (auth && !Object.keys(req.headers).some((k) => k.toLowerCase() === 'authorization')) {
    req = { ...req, headers: { ...req.headers, Authorization: auth } };
  }
  const deadline = started + req.timeoutMs;
  let url = req.url;
  for (let redirects = 0; ; redirects++) {
    const res = await exchange(req, url, deadline - performance.now());
    const latencyMs = performance.now() - started;
    if (res.error) {
      const detail = res.error === 'timeout' ? `no complete answer within ${Math.round(req.timeoutMs)}ms` : (res.detail ?? res.error);
      return { status: undefined, error: res.error, detail, latencyMs, redirects, headers: {}, bodySnippet: undefined };
    }
    const status = res.status as number;
    const location = res.headers.location;
    if (status >= 300 && status < 400 && location !== undefined && req.maxRedirects > 0) {
      if (redirects < req.maxRedirects) {
        try {
          url = new URL(location, url);
        } catch {
          const detail = `redirect to an invalid Location: ${location.slice(0, 100)}`;
          return { status: undefined, error: 'other', detail, latencyMs, redirects, headers: res.headers, bodySnippet: undefined };
        }
        continue;
      }
      const detail = `more than ${req.maxRedirects} redirects`;
      return { status: undefined, error: 'too_many_redirects', detail, latencyMs, redirects, headers: res.headers, bodySnippet: undefined };
    }
    return {
      status,
      error: undefined,
      detail: undefined,
      latencyMs,
      redirects,
      headers: res.headers,
      bodySnippet: res.bodySnippet,
      ...(res.wire ? { wire: res.wire } : {}),
    };
  }
}

interface Exchange {
  wire?: { headers: Record<string, string>; body: string };
  status?: number;
  headers: Record<string, string>;
  bodySnippet?: string;
  error?: TransportError;
  detail?: string;
}

/**
 * One request/response on undici's dispatcher API. `send` makes tens of thousands of these a
 * second; the dispatcher API skips the stream and AbortSignal machinery of `request()`, which
 * measured about twice as fast on loopback (see bench/send.ts).
 */
function exchange(req: AttemptRequest, url: URL, timeoutMs: number): Promise<Exchange> {
  return new Promise((resolve) => {
    let status: number | undefined;
    let headers: Record<string, string> = {};
    let snippet: Buffer[] | undefined;
    let snippetBytes = 0;
    let wireHeaders: Record<string, string> | undefined;
    let stopListening: (() => void) | undefined;
    let timedOut = false;
    let settled = false;
    let controller: { abort(reason: Error): void } | undefined;
    const settle = (result: Exchange) => {
      if (settled) return;
      settled = true;
      timer.clear();
      stopListening?.();
      resolve(result);
    };
    const timer = setLongTimeout(
      () => {
        timedOut = true;
        controller?.abort(new Error('timeout'));
        settle({ status: undefined, error: 'timeout', detail: undefined, headers: {}, bodySnippet: undefined });
      },
      Math.max(0, timeoutMs),
    );
    const onAbort = () => {
      // Settled first: aborting makes undici report an error of its own, which must not win.
      settle({ status: undefined, error: 'interrupted', detail: 'the run was interrupted', headers: {}, bodySnippet: undefined });
      controller?.abort(new Error('interrupted'));
    };
    if (req.interrupt?.aborted) return onAbort(); // interrupted before it began: nothing is sent
    stopListening = req.interrupt?.on(onAbort);

    try {
      dispatch();
    } catch (err) {
      // undici refuses some requests up front, e.g. a header value with a newline in it.
      settle({ ...classify(err), headers: {} });
    }

    function dispatch() {
      req.dispatcher.dispatch(
        {
          origin: url.origin,
          path: url.pathname + url.search,
          method: 'POST',
          // Pieces go out under the whole body's Content-Length, as a provider sends (never chunked).
          headers: req.pieces ? { ...req.headers, 'content-length': String(req.body.length) } : req.headers,
          body: req.pieces ? Readable.from(inPieces(req.pieces), { objectMode: false }) : req.body,
        },
        {
          onRequestStart(c) {
            controller = c;
            if (settled) c.abort(new Error(timedOut ? 'timeout' : 'interrupted'));
          },
          onResponseStart(_c, statusCode, responseHeaders) {
            status = statusCode;
            headers = keptHeaders(responseHeaders);
            if (req.wire) wireHeaders = allHeaders(responseHeaders);
            snippet = [];
          },
          onResponseData(_c, chunk) {
            if (snippet && snippetBytes < (req.wire ? WIRE_BYTES : SNIPPET_BYTES)) {
              snippet.push(chunk);
              snippetBytes += chunk.length;
            }
          },
          onResponseEnd() {
            const final =
              status !== undefined && !(status >= 300 && status < 400 && headers.location !== undefined && req.maxRedirects > 0);
            if (final && !settled) req.onAnswer?.(status as number);
            const text = snippet ? snippetText(decoded(snippet, headers['content-encoding'])) : undefined;
            const wire = wireHeaders
              ? {
                  headers: wireHeaders,
                  body: Buffer.concat(snippet ?? [])
                    .subarray(0, WIRE_BYTES)
                    .toString('utf8'),
                }
              : undefined;
            settle({ status, headers, bodySnippet: text, error: undefined, detail: undefined, ...(wire ? { wire } : {}) });
          },
          onResponseError(_c, err) {
            settle(timedOut ? { error: 'timeout', headers: {} } : { ...classify(err), headers: {} });
          },
        },
      );
    }
  });
}

/**
 * The answer's first bytes as the receiver meant them: every provider but GitHub sends
 * `Accept-Encoding: gzip`, so a receiver may compress its answer (Slack's challenge echoed in it).
 * Decoded as far as the bytes kept go; what cannot be decoded is shown as it came.
 */
function decoded(chunks: Buffer[], encoding: string | undefined): Buffer[] {
  if (encoding !== 'gzip' && encoding !== 'deflate') return chunks;
  const raw = Buffer.concat(chunks);
  const flush = { finishFlush: zlib.constants.Z_SYNC_FLUSH };
  try {
    return [encoding === 'gzip' ? zlib.gunzipSync(raw, flush) : zlib.inflateSync(raw, flush)];
  } catch {
    return chunks;
  }
}

function snippetText(chunks: Buffer[]): string | undefined {
  const text = Buffer.concat(chunks).subarray(0, SNIPPET_BYTES).toString('utf8').replace(/\s+/g, ' ').trim();
  return text === '' ? undefined : text;
}

function allHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) if (value !== undefined) out[name] = Array.isArray(value) ? value.join(', ') : value;
  return out;
}

function keptHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = raw[name];
    if (value !== undefined) out[name] = Array.isArray(value) ? (value[0] as string) : value;
  }
  return out;
}

/** A transport failure in hookdrill's few kinds (refused, reset, dns, timeout, tls, other), with its code for people. */
export function classify(err: unknown): { error: TransportError; detail: string } {
  const e = err as { code?: string; message?: string; cause?: { code?: string } };
  const code = e.code ?? e.cause?.code ?? '';
  const detail = code || e.message || String(err);
  if (code === 'ECONNREFUSED') return { error: 'refused', detail };
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET' || code === 'UND_ERR_CLOSED') {
    return { error: 'reset', detail };
  }
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return { error: 'dns', detail };
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return { error: 'timeout', detail };
  }
  if (/^(ERR_TLS|ERR_SSL|CERT_|DEPTH_ZERO|UNABLE_TO_VERIFY|SELF_SIGNED)/.test(code)) return { error: 'tls', detail };
  return { error: 'other', detail };
}

/** Slack's names for why an attempt failed; hookdrill uses them for every provider. */
export function retryReason(outcome: AttemptOutcome): RetryReason {
  switch (outcome.error) {
    case 'timeout':
      return 'http_timeout';
    case 'refused':
    case 'reset':
    case 'dns':
      return 'connection_failed';
    case 'tls':
      return 'ssl_error';
    case 'too_many_redirects':
      return 'too_many_redirects';
    case 'other':
    case 'interrupted':
      return 'unknown_error';
    default:
      return 'http_error';
  }
}
