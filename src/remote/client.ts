import { UsageError } from '../util/errors.js';
import { sleep } from '../util/wait.js';
import { REMOTE_DEFAULTS } from './defaults.js';

export interface ApiRequest {
  /** For messages: "the Stripe API". */
  name: string;
  headers: Record<string, string>;
  /** The credential in the headers: never shown, whole or in part, in any message. */
  secret: string;
  /** How often a rate limit is waited out before giving up (default 6; Infinity under --follow). */
  maxRateLimited?: number;
  /** The longest single wait a rate limit may ask for before we give up instead (default 120 s). */
  maxWaitMs?: number;
  /** One request, headers and body, from start to end (default 30 s). */
  timeoutMs?: number;
  /** The largest answer read (default 64 MiB): a body that never ends is cut off here. */
  maxBytes?: number;
  /**
   * How often an API that is down (no answer, a dropped connection, a 5xx, a timeout) is tried
   * again, waiting 0.5 s doubling up to 30 s, before giving up (default 2; Infinity under --follow).
   */
  transientRetries?: number;
  /** Hears each wait (a rate limit, an API that is down) before it starts: the CLI says it once. */
  onWait?: (wait: ApiWait) => void;
  signal?: AbortSignal;
}

/** How a client's requests behave: limits, waits, interruption (everything of ApiRequest but who and what). */
export type RequestLimits = Omit<ApiRequest, 'name' | 'headers' | 'secret'>;

export interface ApiWait {
  kind: 'rate-limited' | 'unavailable';
  ms: number;
  /** What happened, in a few words, credential masked: "answered 503", "did not answer within 30 s". */
  detail: string;
}

export interface ApiResponse {
  body: unknown;
  headers: Headers;
}

/**
 * GET a JSON document from a provider's API. A rate limit (429, or GitHub's 403 with
 * x-ratelimit-remaining: 0) is waited out — Retry-After when given, else x-ratelimit-reset, else
 * doubling from 1 s — as the providers ask. An API that is down is tried again a few times. Any
 * other error is one line carrying the API's own message (Stripe: error.message; GitHub: message),
 * with the credential masked out of it.
 *
 * The timeout is a plain timer held for the whole request: `AbortSignal.timeout` combined with
 * `AbortSignal.any` is dropped by a garbage collection on Node 20, and the request then never ends.
 */
export async function apiGet(url: URL, o: ApiRequest): Promise<ApiResponse> {
  const timeoutMs = o.timeoutMs ?? REMOTE_DEFAULTS.timeoutMs;
  const transientRetries = o.transientRetries ?? REMOTE_DEFAULTS.transientRetries;
  let rateLimited = 0;
  for (let down = 0; ; ) {
    const answer = await getOnce(url, o, timeoutMs);
    if (answer.kind === 'unavailable') {
      if (down >= transientRetries) {
        const tries = down + 1;
        throw new UsageError(`${o.name} at ${url.origin} ${answer.detail}${tries > 1 ? ` (${tries} tries)` : ''}`);
      }
      const ms = Math.min(30_000, 500 * 2 ** down++);
      o.onWait?.({ kind: 'unavailable', ms, detail: answer.detail });
      if (!(await sleep(ms, o.signal))) throw new ApiInterrupted(o.name);
      continue;
    }
    const { res, text } = answer;
    const wait = rateLimitWait(res, rateLimited);
    if (wait !== undefined && rateLimited < (o.maxRateLimited ?? 6)) {
      if (wait > (o.maxWaitMs ?? 120_000))
        throw new UsageError(`${o.name} is rate-limiting this key for another ${Math.ceil(wait / 1000)} s: try again later`);
      rateLimited++;
      down = 0; // it answered: an outage before the rate limit is over
      o.onWait?.({ kind: 'rate-limited', ms: wait, detail: `answered ${res.status} (rate limit)` });
      if (!(await sleep(wait, o.signal))) throw new ApiInterrupted(o.name);
      continue;
    }
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!res.ok)
      throw new ApiError(res.status, `${o.name} answered ${res.status}: ${mask(apiMessage(body) ?? text, o.secret).slice(0, 300)}`);
    if (body === undefined) throw new UsageError(`${o.name} at ${url.origin} answered something that is not JSON`);
    return { body, headers: res.headers };
  }
}

type Answer = { kind: 'answered'; res: Response; text: string } | { kind: 'unavailable'; detail: string };

/** One request, whole or not at all: a 5xx, a timeout or a lost connection is `unavailable` (worth another try). */
async function getOnce(url: URL, o: ApiRequest, timeoutMs: number): Promise<Answer> {
  if (o.signal?.aborted) throw new ApiInterrupted(o.name);
  const controller = new AbortController();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    controller.abort();
  }, timeoutMs);
  const onAbort = () => controller.abort();
  o.signal?.addEventListener('abort', onAbort, { once: true });
  try {
    const res = await fetch(url, { headers: o.headers, signal: controller.signal });
    const text = await readCapped(res, o.maxBytes ?? REMOTE_DEFAULTS.maxBytes, o.name);
    if (res.status >= 500) return { kind: 'unavailable', detail: `answered ${res.status}` };
    return { kind: 'answered', res, text };
  } catch (err) {
    if (o.signal?.aborted) throw new ApiInterrupted(o.name);
    if (err instanceof UsageError) throw err;
    if (timedOut) return { kind: 'unavailable', detail: `did not answer within ${formatSeconds(timeoutMs)}` };
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return { kind: 'unavailable', detail: `did not answer: ${mask(cause?.code ?? cause?.message ?? (err as Error).message, o.secret)}` };
  } finally {
    clearTimeout(timer);
    o.signal?.removeEventListener('abort', onAbort);
  }
}

/** The body as text, refusing (and cancelling) one larger than `maxBytes`. */
async function readCapped(res: Response, maxBytes: number, name: string): Promise<string> {
  const tooLarge = () =>
    new UsageError(`${name} answered more than ${Math.round(maxBytes / 1024 / 1024)} MiB: not a page of its API; stopped reading`);
  const declared = Number(res.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes) {
    await res.body?.cancel();
    throw tooLarge();
  }
  if (!res.body) return '';
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}

/** How long a rate-limited answer asks us to wait, or undefined when it is not one. */
function rateLimitWait(res: Response, attempt: number): number | undefined {
  // GitHub: a primary limit is a 403 (or 429) with x-ratelimit-remaining 0; a secondary one a 403
  // (or 429) with Retry-After (https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api).
  const limited =
    res.status === 429 ||
    (res.status === 403 && (res.headers.get('x-ratelimit-remaining') === '0' || res.headers.get('retry-after') !== null));
  if (!limited) return undefined;
  const retryAfter = Number(res.headers.get('retry-after') ?? Number.NaN);
  if (Number.isFinite(retryAfter) && retryAfter >= 0) return retryAfter * 1_000;
  const reset = Number(res.headers.get('x-ratelimit-reset') ?? Number.NaN);
  if (Number.isFinite(reset) && reset > 0) return Math.max(0, reset * 1_000 - Date.now()) + 1_000;
  return 1_000 * 2 ** attempt;
}

function apiMessage(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const b = body as { message?: unknown; error?: { message?: unknown } };
  if (typeof b.error?.message === 'string') return b.error.message;
  if (typeof b.message === 'string') return b.message;
  return undefined;
}

/**
 * The credential out of a message: whole, and the last four characters Stripe echoes of a bad key
 * (`sk_test_****1234`), so none of it is shown.
 */
export function mask(text: string, secret: string): string {
  if (!secret) return text;
  const masked = text.split(secret).join('***');
  return secret.length > 8 ? masked.split(`****${secret.slice(-4)}`).join('****') : masked;
}

/** The API refused the request (a 4xx past the rate limits): one line for the user, and the status for callers that tell them apart. */
export class ApiError extends UsageError {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** The run was interrupted (Ctrl-C, SIGTERM) while it read the sender's API. */
export class ApiInterrupted extends UsageError {
  constructor(name: string) {
    super(`interrupted while reading ${name}`);
  }
}

/**
 * A credential fit for an HTTP header: printable ASCII on one line. Anything else (a PEM key where a
 * token belongs, a pasted line break) is refused by name — fetch would quote the whole value in its error.
 */
export function checkCredential(value: string, variable: string, hint: string): void {
  if (/[^\x21-\x7e]/.test(value))
    throw new UsageError(`${variable} holds spaces, line breaks or other characters no API token has${hint ? ` (${hint})` : ''}`);
}

/** `path` under the API base, keeping the base's own path (GitHub Enterprise: https://host/api/v3). */
export function apiUrl(base: string, path: string): URL {
  const b = new URL(base);
  return new URL(`${b.pathname.replace(/\/+$/, '')}${path}`, b);
}

/**
 * The pages of one listing, guarded: at most `maxPages` of them, and never the same cursor twice
 * (an API that answers "has more, after X" with X again would otherwise be read for ever).
 */
export class PageGuard {
  private readonly seen = new Set<string>();
  private pages = 0;
  constructor(
    private readonly name: string,
    private readonly maxPages: number = REMOTE_DEFAULTS.maxPages,
  ) {}

  /** Before reading the page at `cursor` (undefined: the first). */
  next(cursor: string | undefined): void {
    if (++this.pages > this.maxPages)
      throw new UsageError(`${this.name} had more than ${this.maxPages} pages for one listing: stopped (narrow --since or --type)`);
    if (cursor === undefined) return;
    if (this.seen.has(cursor))
      throw new UsageError(
        `${this.name} pointed back to a page it had already given (cursor ${cursor.slice(0, 40)}): stopped rather than loop`,
      );
    this.seen.add(cursor);
  }
}
