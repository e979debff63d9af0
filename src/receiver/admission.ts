import type { IncomingHeaders, Provider, VerifyOptions } from '../providers/index.js';
import { SignatureError } from '../providers/index.js';

/**
 * What the receiver can refuse before it reads a body: a body costs memory while it is read, and
 * anyone who can reach the port can send one. A forger who cannot sign can still write a header.
 */

const EMPTY = Buffer.alloc(0);

/**
 * The signature headers judged alone: a missing or malformed header, or a timestamp outside the
 * tolerance, is a refusal whatever the body holds. Every provider's verify checks its headers
 * before it computes an HMAC over the body, and with `headersOnly` stops there
 * (test/admission.test.ts holds each to giving the same verdict as a whole verify), so the answer
 * comes in the provider's own code and words, for no HMAC.
 */
export function headerRefusal(
  provider: Provider,
  headers: IncomingHeaders,
  secrets: readonly string[],
  opts: VerifyOptions,
): SignatureError | undefined {
  try {
    provider.verify(EMPTY, headers, secrets, { ...opts, headersOnly: true });
  } catch (err) {
    if (err instanceof SignatureError) return err;
  }
  return undefined;
}

/**
 * Body bytes held across every request at once (Kafka's `queued.max.request.bytes`): a request
 * takes its declared length before its body is read, or each chunk as it comes when it declares
 * none, and gives it back once answered. Past the cap it is answered 503 with Retry-After, so the
 * memory a flood of forged bodies can pin is this, not connections × --max-bytes.
 */
export class BodyBudget {
  private held = 0;
  constructor(readonly capBytes: number) {}

  /** Take n bytes, or nothing and false when they would pass the cap. */
  take(n: number): boolean {
    if (this.held + n > this.capBytes) return false;
    this.held += n;
    return true;
  }

  give(n: number): void {
    this.held = Math.max(0, this.held - n);
  }

  get inUse(): number {
    return this.held;
  }
}
