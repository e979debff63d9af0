import { FORM_KEY, compileFixture, listShippedFixtures, loadFixtureFile } from '../../fixtures/index.js';
import type { EventFactory } from '../../fixtures/index.js';
import type { JsonValue, Provider } from '../../providers/types.js';
import { NEEDS_VALID, answer, is2xx, post, sign } from './common.js';
import type { CheckCase } from './common.js';

/**
 * A scheme that signs a JSON body only through its hash in the URL (Twilio's Event Streams and
 * other JSON webhooks: X-Twilio-Signature covers the URL with `bodySHA256=<hex SHA-256 of the
 * body>` in its query, no parameters — twilio's validateRequestWithBody). The signature alone
 * binds the URL, not the body: a receiver that checks the signature over the URL it was posted to
 * and never hashes the body takes any body a captured URL and signature are replayed with.
 * Judged with a JSON fixture of the provider's own, apart from its default (form) one.
 */
export const BODY_HASH_IN_URL: CheckCase = {
  name: 'json-body-hash',
  summary:
    "a JSON delivery signed through its body's hash in the URL (Twilio Event Streams' bodySHA256) gets 2xx; the same with its body changed after signing (URL, hash and signature left as signed) is refused",
  skipFor: (p) =>
    !p.queryPlaced
      ? `${p.title} signs no body through a hash in its URL`
      : jsonFixtures(p).length === 0
        ? `no JSON fixture of ${p.title}'s is shipped`
        : undefined,
  needs: NEEDS_VALID,
  async run(ctx) {
    const p = ctx.provider;
    const param = p.queryPlaced?.param ?? 'the hash';
    const judge = p.queryPlaced?.verifiedBy ?? p.verifier.official;
    const [factory] = jsonFixtures(p) as [EventFactory];
    const valid = factory.make(Date.now());
    const taken = await post(ctx, valid.rawBody, sign(ctx, valid));
    if (!is2xx(taken.status))
      return {
        status: 'warn',
        observed: `a valid ${valid.eventType} (JSON, ${param} in the URL) ${answer(taken)}`,
        diagnosis: `your receiver refuses a valid JSON delivery signed through the URL's ${param} — if ${p.title} sends this endpoint none (no Event Streams sink points here), nothing is wrong; else verify it as ${judge} does: the signature over the URL as posted (${param} included, no parameters), then the raw body's SHA-256 against ${param}`,
      };
    const e = factory.make(Date.now());
    const headers = sign(ctx, e);
    const refused = await post(ctx, changedAfterSigning(e.rawBody), headers, { refusal: true });
    const observed = `valid: ${answer(taken)}; its body changed after signing, URL and ${p.signatureHeader} as signed: ${answer(refused)}`;
    if (!is2xx(refused.status)) return { status: 'pass', observed };
    return {
      status: 'fail',
      observed,
      diagnosis: `your receiver accepts a JSON delivery whose body is not the one signed — its SHA-256 is not the URL's ${param}: it verifies ${p.signatureHeader} over the URL (${param} included) and never hashes the body, so anyone holding one delivery's URL and signature can post any body with them. Compare the hex SHA-256 of the raw body with ${param} in constant time, as ${judge} does`,
    };
  },
};

/** The provider's shipped fixtures that are not forms (Twilio's Event Streams deliveries), compiled. */
function jsonFixtures(p: Provider): EventFactory[] {
  return listShippedFixtures(p.name)
    .map((f) => loadFixtureFile(f.path, p.name))
    .filter((f) => !(FORM_KEY in f.body))
    .map((f) => compileFixture(p, f, []));
}

/** The body with a value of its (first) event's data changed, still JSON, written as it was: what a body edited in transit looks like. */
function changedAfterSigning(raw: Buffer): Buffer {
  const body = JSON.parse(raw.toString('utf8')) as JsonValue;
  const first = Array.isArray(body) ? body[0] : body;
  const target = isRecord(first) && isRecord(first.data) ? first.data : isRecord(first) ? first : undefined;
  if (!target) return Buffer.concat([raw, Buffer.from(' ')]);
  target.to = target.to === '+15005550006' ? '+15005550009' : '+15005550006';
  return Buffer.from(JSON.stringify(body));
}

function isRecord(v: JsonValue | undefined): v is { [key: string]: JsonValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
