import { request } from 'undici';
import type { Dispatcher } from 'undici';
import type { RetryReason } from '../providers/index.js';

export type TransportError = 'timeout' | 'refused' | 'reset' | 'dns' | 'tls' | 'too_many_redirects' | 'other';

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
  /** The first bytes of a non-2xx answer, which usually say why (e.g. "invalid signature"). */
  bodySnippet?: string;
}

const SNIPPET_BYTES = 200;
const KEPT_HEADERS = ['retry-after', 'x-slack-no-retry', 'location'];

export interface AttemptRequest {
  url: URL;
  headers: Record<string, string>;
  body: Buffer;
  timeoutMs: number;
  maxRedirects: number;
  dispatcher: Dispatcher;
}

/**
 * POST once, following redirects only as far as the provider does. The timeout covers the whole
 * exchange, connect to the last byte, as a provider's does: a receiver that answers its headers in
 * time but dribbles the body still times out.
 */
export async function attempt(req: AttemptRequest): Promise<AttemptOutcome> {
  const started = performance.now();
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(), req.timeoutMs);
  let url = req.url;
  let redirects = 0;
  try {
    for (;;) {
      const res = await request(url, {
        method: 'POST',
        headers: req.headers,
        body: req.body,
        dispatcher: req.dispatcher,
        signal: controller.signal,
      });
      const headers = keptHeaders(res.headers);
      const status = res.statusCode;
      const isRedirect = status >= 300 && status < 400 && headers.location !== undefined;
      if (isRedirect && redirects < req.maxRedirects) {
        await res.body.dump();
        url = new URL(headers.location as string, url);
        redirects++;
        continue;
      }
      let bodySnippet: string | undefined;
      if (status >= 200 && status < 300) await res.body.dump();
      else bodySnippet = await readSnippet(res.body);
      const latencyMs = performance.now() - started;
      if (isRedirect && req.maxRedirects > 0) {
        return { error: 'too_many_redirects', detail: `more than ${req.maxRedirects} redirects`, latencyMs, redirects, headers };
      }
      return { status, latencyMs, redirects, headers, ...(bodySnippet ? { bodySnippet } : {}) };
    }
  } catch (err) {
    const latencyMs = performance.now() - started;
    if (controller.signal.aborted) {
      return { error: 'timeout', detail: `no complete answer within ${Math.round(req.timeoutMs)}ms`, latencyMs, redirects, headers: {} };
    }
    const { error, detail } = classify(err);
    return { error, detail, latencyMs, redirects, headers: {} };
  } finally {
    clearTimeout(timer);
  }
}

function keptHeaders(raw: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of KEPT_HEADERS) {
    const value = raw[name];
    if (value !== undefined) out[name] = Array.isArray(value) ? (value[0] as string) : value;
  }
  return out;
}

async function readSnippet(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= SNIPPET_BYTES) {
      body.destroy();
      break;
    }
  }
  const text = Buffer.concat(chunks).subarray(0, SNIPPET_BYTES).toString('utf8').replace(/\s+/g, ' ').trim();
  return text === '' ? undefined : text;
}

function classify(err: unknown): { error: TransportError; detail: string } {
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
      return 'unknown_error';
    default:
      return 'http_error';
  }
}
