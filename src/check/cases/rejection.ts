import {
  answer,
  formPayloadOf,
  is2xx,
  likeBody,
  is4xx,
  mustNotStore,
  needsTimestamp,
  post,
  rejection,
  sigHeader,
  tokenSignsNothing,
  signsFieldsOnly,
  sign,
  signedAt,
  stranger,
  NEEDS_SIGNATURE,
  windowWords,
  withSignaturesEdited,
  withoutSignatures,
} from './common.js';
import type { CheckCase, CheckContext } from './common.js';
import { windowSec } from '../../providers/util.js';

/**
 * How old stale-timestamp's signature is (and how far ahead future-timestamp's): 6 minutes, past the
 * 5-minute window most verifiers keep, or a minute past a longer one (Twitch's 10 minutes, a declared
 * 10m), so a receiver right by its window passes.
 */
const staleAgeMs = (p: { toleranceSec?: number }) => Math.max(360_000, Math.ceil((windowSec(p) + 60) / 60) * 60_000);

export const REJECTION: readonly CheckCase[] = [
  rejection(
    'wrong-secret',
    'signed with another secret: 4xx, nothing stored',
    (ctx, e) => ({ body: e.rawBody, headers: sign(ctx, e, { secrets: [stranger(ctx)] }) }),
    (ctx) =>
      `your receiver accepts a signature made with a secret it does not hold: it does not compare ${ctx.provider.signatureHeader} at all`,
  ),
  rejection(
    'flipped-byte',
    'one byte of the body changed after signing: 4xx, nothing stored',
    (ctx, e) => {
      const headers = sign(ctx, e);
      const body = Buffer.from(e.rawBody);
      // The last letter in the body, case flipped: still JSON, no longer what was signed. Where the
      // signature covers named fields only (SNS), the last letter of those.
      const end = Math.min(body.length, ctx.provider.verifier.signedUpTo?.(body) ?? body.length);
      for (let i = end - 1; i >= 0; i--) {
        const c = body[i] as number;
        if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a)) {
          body[i] = c ^ 0x20;
          break;
        }
      }
      return { body, headers };
    },
    () => 'your receiver accepts a body changed after signing: the signature is not checked against the bytes received',
    // A token receiver takes a changed body under the right token: that is its scheme, not a defect.
    (p) => {
      const token = tokenSignsNothing(p);
      return token
        ? `${token}: a receiver that compares it rightly accepts a body changed in transit — a property of the scheme (TLS is what protects the body), so a refusal is not demanded`
        : signsFieldsOnly(p);
    },
  ),
  rejection(
    'reserialized',
    'the same JSON re-serialised (whitespace): 4xx — signatures cover bytes, not JSON',
    (ctx, e) => ({ body: reserialized(ctx, e.rawBody), headers: sign(ctx, e) }),
    () =>
      'your receiver verifies a re-serialised copy of the JSON, not the raw bytes: read the body as bytes (express.raw, not express.json) and verify those',
    (p) =>
      tokenSignsNothing(p) ??
      signsFieldsOnly(p) ??
      (p.verifier.signsParsedForm
        ? `${p.verifier.official} signs the form's parameters as it parses them, not the body's bytes: the same parameters written another way are the same delivery, rightly accepted`
        : undefined) ??
      (p.verifier.verifiesParsedJson
        ? `${p.verifier.official} itself verifies the parsed JSON written again: re-serialising is ${p.title}'s documented way${p.verifier.officialVersions ? ` (${p.verifier.officialVersions})` : ''}`
        : undefined),
  ),
  rejection(
    'missing-signature',
    'no signature header: 4xx, nothing stored',
    (ctx, e) => ({ body: e.rawBody, headers: withoutSignatures(ctx, sign(ctx, e)) }),
    (ctx) => `your receiver accepts a request with no ${signatureWords(ctx)} at all: anyone can post to it`,
  ),
  rejection(
    'malformed-signature',
    'a signature header that does not parse: 4xx, nothing stored',
    (ctx, e) => ({ body: e.rawBody, headers: withSignaturesEdited(ctx, sign(ctx, e), () => 'hookdrill:not-a-signature') }),
    (ctx) => `your receiver accepts ${signatureWords(ctx, 'a ')} that holds no signature`,
  ),
  rejection(
    'wrong-length-signature',
    'the right signature(s), each two characters short: 4xx, nothing stored',
    (ctx, e) => {
      // Every signature in the header, not only the last: with two secrets (rotation) the receiver
      // must not find the untouched one and rightly accept. A legacy header (GitHub's SHA-1) is cut
      // short too: left whole, a receiver that verifies it would rightly accept.
      const headers = withSignaturesEdited(ctx, sign(ctx, e), (value, h) =>
        h === sigHeader(ctx) ? ctx.provider.verifier.editSignatures(value, (sig) => sig.slice(0, -2)) : value.slice(0, -2),
      );
      return { body: e.rawBody, headers };
    },
    () =>
      'your receiver accepts a signature that is only a prefix of the right one: compare the whole value (and its length) in constant time',
  ),
  rejection(
    'stale-timestamp',
    "signed 6 minutes ago (past every window: 5 minutes, Paddle's 5 seconds; a minute past a longer one, Twitch's 10 minutes): 4xx, nothing stored",
    (ctx, e) => signedAt(ctx, e, -staleAgeMs(ctx.provider)),
    (ctx) =>
      `your receiver accepts a signature ${staleAgeMs(ctx.provider) / 60_000} minutes old: a captured request can be replayed forever; refuse timestamps older than ${windowWords(ctx.provider)}, as ${ctx.provider.verifier.official} does`,
    needsTimestamp,
  ),
  {
    name: 'future-timestamp',
    summary:
      "signed 6 minutes ahead (a minute past a longer window): 4xx where the provider's own verifier refuses it (Standard Webhooks); Stripe's and Paddle's accept it (a pass), Slack's bolt too though Slack's docs refuse it (a warning)",
    skipFor: needsTimestamp,
    // No timestamp check at all fails both sides; stale-timestamp names it.
    needs: [...NEEDS_SIGNATURE, { case: 'stale-timestamp' }],
    async run(ctx) {
      const e = ctx.factory.make(Date.now());
      const aheadMs = staleAgeMs(ctx.provider);
      const ahead = signedAt(ctx, e, aheadMs);
      const res = await post(ctx, ahead.body, ahead.headers);
      const stored = await mustNotStore(ctx, e.deliveryId);
      const rule = ctx.provider.verifier.futureTimestamp;
      const official = ctx.provider.verifier.official;
      if (is4xx(res.status) && !stored.bad) return { status: 'pass', observed: `${answer(res)}${stored.text}` };
      if (is2xx(res.status) && rule === 'accepted')
        return { status: 'pass', observed: `${answer(res)}: accepted, as ${official} does (its tolerance is one-sided)` };
      if (is2xx(res.status) && rule === 'accepted-documented-refused')
        return {
          status: 'warn',
          observed: `${answer(res)}: accepted, as ${official} does`,
          diagnosis: `${ctx.provider.title}'s docs refuse a timestamp more than ${windowWords(ctx.provider)} from now either way; the official library checks only the old side`,
        };
      return {
        status: 'fail',
        observed: `${answer(res)}${stored.text} (expected 4xx, nothing stored)`,
        diagnosis: is2xx(res.status)
          ? `your receiver accepts a timestamp ${aheadMs / 60_000} minutes in the future; ${official} refuses it ("too new"): check both sides of the ${windowWords(ctx.provider).replace(' minutes', '-minute').replace(' seconds', '-second')} window`
          : `a request signed outside the window must get 4xx; it got ${answer(res)}`,
      };
    },
  },
];

/**
 * The same JSON written another way: pretty-printed, or compact where the provider's own bytes are
 * pretty already (Stripe's): either way other bytes than were signed. A form's JSON (`payload=`)
 * is written another way inside the same form.
 */
function reserialized(ctx: CheckContext, raw: Buffer): Buffer {
  const payload = formPayloadOf(ctx.provider, raw);
  const text = payload ?? raw.toString('utf8');
  const value = JSON.parse(text) as unknown;
  const pretty = JSON.stringify(value, null, 2);
  return Buffer.from(likeBody(ctx.provider, raw, pretty === text ? JSON.stringify(value) : pretty));
}

/** The signature header by name, and the legacy one beside it where the provider still sends one: "X-Hub-Signature-256 (nor X-Hub-Signature)". */
function signatureWords(ctx: CheckContext, article = ''): string {
  const legacy = ctx.provider.verifier.legacySignature;
  return `${article}${ctx.provider.signatureHeader}${legacy ? ` ${article ? 'or' : 'nor'} ${legacy.header}` : ''}`;
}
