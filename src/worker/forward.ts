import { request } from 'undici';
import { formatDuration } from '../util/duration.js';
import { endToEnd, headerSafe, headerValueProblem } from '../util/http-headers.js';
import { basicAuth } from '../util/options.js';
import type { Provider } from '../providers/index.js';
import { resignStored } from '../delivery/signer.js';
import { withSecret } from '../providers/kept-body.js';
import { placeQuery } from '../providers/query-placed.js';
import type { Handler } from './index.js';
import { PermanentError } from './index.js';

export interface ForwardOptions {
  /** One deadline for the whole exchange, connect to the last byte of the answer. */
  timeoutMs: number;
  /**
   * Sign each forward anew (fresh timestamp, original delivery id) with these secrets. Absent:
   * forward the headers exactly as received (`listen --forward-original-headers`).
   */
  signer?: { provider: Provider; secrets: readonly string[] };
  /**
   * The secrets the receiver verifies with. A row it did not verify itself (imported from a
   * capture) is signed anew only when its captured signature verifies with one of them, as of when
   * it was captured; else it is forwarded unsigned and marked: re-signing would vouch for a forgery.
   */
  verifySecrets?: readonly string[];
  /**
   * Whose rows these are, signed anew or not: a secret its scheme carries in the body (Graph's
   * clientState), which the inbox does not keep, is written back with the signer's secret, else
   * with the first the receiver verifies with — the original headers forwarded need it too.
   */
  provider?: Provider;
}

/** What a proxy in front of listen says of the URL it was asked for: that hop's, not the forward's. */
const PROXY_HEADERS = new Set(['x-forwarded-proto', 'x-forwarded-host', 'x-forwarded-port', 'forwarded']);

/** The header that marks a forward hookdrill does not vouch for, and why. */
export const UNVERIFIED_HEADER = 'x-hookdrill-unverified';

/**
 * A handler that POSTs each stored delivery to the user's app: the raw body, the sender's headers
 * with the signature made anew at forward time (a retry or requeue hours later still verifies),
 * plus X-Hookdrill-* headers saying which delivery and attempt this is.
 * A 2xx means done; anything else throws, and the worker retries with backoff, then buries it.
 */
export function forwardHandler(target: URL, options: ForwardOptions): Handler {
  // Failures are recorded in words a person can select on: `requeue --error timeout`.
  const timedOut = () => new Error(`forward timeout: ${target.origin} gave no complete answer within ${formatDuration(options.timeoutMs)}`);
  const isTimeout = (err: unknown) => ['TimeoutError', 'AbortError'].includes((err as { name?: string }).name ?? '');
  return async (item) => {
    const body = item.body ?? Buffer.alloc(0);
    const received = endToEnd(item.headers);
    // A stored header no request can carry fails every attempt the same way: said by name, at once.
    for (const [name, value] of Object.entries(received)) {
      const problem = typeof value === 'string' ? headerValueProblem(value) : `a ${typeof value}, not text`;
      if (problem) throw new PermanentError(`stored header ${name} cannot be forwarded: its value holds ${problem}`);
    }
    const signer = options.signer;
    const vouched = signer === undefined || capturedSignatureHolds(signer.provider, received, body, item.receivedAt, options.verifySecrets);
    const headers = !signer
      ? received
      : vouched
        ? resignStored(signer.provider, received, body, signer.secrets, {
            deliveryId: item.deliveryId,
            eventType: item.eventType,
            url: target.href,
          })
        : unsigned(signer.provider, received);
    // A secret the scheme carries in the body (Graph's clientState) was kept out of the inbox: written back, as the sender sends it.
    // Unsigned, only into a row listen verified itself: an imported capture keeps what it held.
    const owner = signer?.provider ?? options.provider;
    const restore = signer ? vouched : received['x-hookdrill-origin'] !== 'import';
    const sent = owner && restore ? withSecret(owner, body, signer?.secrets ?? options.verifySecrets ?? []) : body;
    if (!vouched) headers[UNVERIFIED_HEADER] = 'imported; its captured signature does not verify, so it is forwarded unsigned';
    Object.assign(headers, forwardMarks(item));
    const auth = basicAuth(target);
    if (auth) headers.authorization = auth;
    // Signed anew for the target's URL, a URL-bound delivery (Twilio's, Square's) must not carry the
    // proxy's X-Forwarded-Proto and -Host from the hop before listen: an app that trusts its proxy
    // would rebuild the public URL from them, not the one this signature covers.
    if (signer?.provider.urlBound && vouched)
      for (const name of Object.keys(headers)) if (PROXY_HEADERS.has(name.toLowerCase())) delete headers[name];
    // A hash the signature covers in the URL (Twilio's bodySHA256) goes into the target's query.
    const to = signer ? placeQuery(signer.provider, target, headers) : { url: target, headers };
    const res = await request(to.url, {
      method: 'POST',
      headers: to.headers,
      body: sent,
      // One deadline for the whole exchange: undici's own timeouts reset with every chunk, so an
      // app that dribbles its answer could otherwise hold the row past its lease.
      signal: AbortSignal.timeout(options.timeoutMs),
    }).catch((err: unknown) => {
      if (isTimeout(err)) throw timedOut();
      const e = err as { code?: string; message?: string };
      throw new Error(`forward to ${target.origin} failed: ${e.code ?? e.message ?? String(err)}`);
    });
    const text = (
      await res.body.text().catch((err: unknown) => {
        throw isTimeout(err) ? timedOut() : new Error(`forward target broke off its answer: ${(err as Error).message}`);
      })
    )
      .slice(0, 200)
      .replace(/\s+/g, ' ')
      .trim();
    if (res.statusCode < 200 || res.statusCode >= 300) {
      throw new Error(`forward target answered ${res.statusCode}${text ? `: ${text}` : ''}`);
    }
  };
}

/** What a forward carries beside the provider's headers: which provider, delivery and attempt it is (check --route sends them too). */
export function forwardMarks(item: { source: string; deliveryId: string; attempt: number }): Record<string, string> {
  return {
    'x-hookdrill-source': item.source,
    // The id comes from the body, where anything goes: what a header cannot carry is percent-encoded.
    'x-hookdrill-delivery-id': headerSafe(item.deliveryId),
    'x-hookdrill-attempt': String(item.attempt),
  };
}

/**
 * Whether a row may be signed anew: one this receiver stored it verified itself; an imported one
 * (x-hookdrill-origin: import) only if the signature it was captured with verifies, as of its capture.
 */
function capturedSignatureHolds(
  provider: Provider,
  headers: Record<string, string>,
  body: Buffer,
  capturedAt: number,
  secrets: readonly string[] | undefined,
): boolean {
  if (headers['x-hookdrill-origin'] !== 'import') return true;
  if (!secrets?.length) return false;
  try {
    provider.verify(body, headers, secrets, { nowMs: capturedAt });
    return true;
  } catch {
    return false;
  }
}

/** The headers without the provider's signature: nothing in them vouches for the body. */
function unsigned(provider: Provider, headers: Record<string, string>): Record<string, string> {
  const signed = new Set(provider.signedHeaders.map((h) => h.toLowerCase()));
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !signed.has(name.toLowerCase())));
}
