import { UsageError } from '../util/errors.js';
import { sleep } from '../util/wait.js';

export interface ApiRequest {
  /** For messages: "the Stripe API". */
  name: string;
  headers: Record<string, string>;
  /** The credential in the headers: never shown, whole or in part, in any message. */
  secret: string;
  /** How often a rate limit is waited out before giving up (default 6). */
  maxRateLimited?: number;
  /** The longest single wait a rate limit may ask for before we give up instead (default 120 s). */
  maxWaitMs?: number;
  signal?: AbortSignal;
}

export interface ApiResponse {
  body: unknown;
  headers: Headers;
}

/**
 * GET a JSON document from a provider's API. A rate limit (429, or GitHub's 403 with
 * x-ratelimit-remaining: 0) is waited out — Retry-After when given, else x-ratelimit-reset, else
 * doubling from 1 s — as the providers ask. Any other error is one line carrying the API's own
 * message (Stripe: error.message; GitHub: message), with the credential masked out of it.
 */
export async function apiGet(url: URL, o: ApiRequest): Promise<ApiResponse> {
  for (let attempt = 0; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(url, {
        headers: o.headers,
        signal: o.signal ? AbortSignal.any([o.signal, AbortSignal.timeout(30_000)]) : AbortSignal.timeout(30_000),
      });
    } catch (err) {
      if (o.signal?.aborted) throw new ApiInterrupted(o.name);
      throw new UsageError(`${o.name} at ${url.origin} did not answer: ${mask((err as Error).message, o.secret)}`);
    }
    const wait = rateLimitWait(res, attempt);
    if (wait !== undefined && attempt < (o.maxRateLimited ?? 6)) {
      await res.arrayBuffer();
      if (wait > (o.maxWaitMs ?? 120_000))
        throw new UsageError(`${o.name} is rate-limiting this key for another ${Math.ceil(wait / 1000)} s: try again later`);
      if (!(await sleep(wait, o.signal))) throw new ApiInterrupted(o.name);
      continue;
    }
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!res.ok) throw new UsageError(`${o.name} answered ${res.status}: ${mask(apiMessage(body) ?? text, o.secret).slice(0, 300)}`);
    if (body === undefined) throw new UsageError(`${o.name} at ${url.origin} answered something that is not JSON`);
    return { body, headers: res.headers };
  }
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

/** The run was interrupted (Ctrl-C, SIGTERM) while it read the sender's API: nothing compared or changed yet. */
export class ApiInterrupted extends UsageError {
  constructor(name: string) {
    super(`interrupted while reading ${name}: nothing was compared, nothing changed`);
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
