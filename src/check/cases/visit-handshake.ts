import { compileFixture, listShippedFixtures, loadFixtureFile } from '../../fixtures/index.js';
import { answer, is2xx, is4xx, mustNotStore, NEEDS_ANSWERED, NEEDS_SIGNATURE, post, sign, stranger } from './common.js';
import type { CheckCase, CheckContext } from './common.js';

/**
 * The cases of a scheme whose receiver fetches or visits what the provider serves (SNS): a
 * handshake judged by its effect — the receiver visited the URL — and a certificate fetched from
 * the URL the message names, which a receiver must take only from the provider's host.
 */

/** How long after its answer a receiver has to visit a handshake's URL: it may confirm from a queue, a moment later. */
const VISIT_WAIT_MS = 5_000;

/** The provider's shipped fixture that is a handshake (SNS's subscription-confirmation), made into an event. */
function handshakeEvent(ctx: CheckContext) {
  const p = ctx.provider;
  const shipped = listShippedFixtures().find(
    (f) => f.provider === p.name && p.handshakeVisit?.(Buffer.from(JSON.stringify(loadFixtureFile(f.path).body))) !== undefined,
  );
  return shipped ? compileFixture(p, loadFixtureFile(shipped.path, p.name), []).make(Date.now()) : undefined;
}

/** Why a provider has none of these cases: it sends no handshake completed by visiting a URL it serves. */
function noVisitHandshake(p: CheckContext['provider']): string | undefined {
  return p.handshakeVisit && p.serve ? undefined : `${p.title} sends no handshake completed by visiting a URL`;
}

/** The handshake to send, the URL whose visit completes it, and the host that sees the visit; undefined when any is missing. */
function handshakeOf(ctx: CheckContext) {
  const e = handshakeEvent(ctx);
  const visit = e ? ctx.provider.handshakeVisit?.(e.rawBody) : undefined;
  return e && visit && ctx.served ? { e, visit, served: ctx.served } : undefined;
}

export const HANDSHAKE_CASES: readonly CheckCase[] = [
  {
    name: 'subscription-confirmation',
    summary:
      "the provider's handshake is completed by its effect: SNS's SubscriptionConfirmation answered 2xx and its SubscribeURL visited (SNS sends nothing until it is)",
    skipFor: noVisitHandshake,
    needs: NEEDS_ANSWERED,
    async run(ctx) {
      const h = handshakeOf(ctx);
      if (!h) return { status: 'skipped', observed: 'no handshake fixture is shipped' };
      const { e, visit, served } = h;
      const res = await post(ctx, e.rawBody, sign(ctx, e));
      const seen = await served.visitOf(visit.token, is2xx(res.status) ? VISIT_WAIT_MS : 500);
      const title = ctx.provider.title;
      if (is2xx(res.status) && seen) return { status: 'pass', observed: `${answer(res)}, ${visit.what} visited` };
      if (!is2xx(res.status))
        return {
          status: 'fail',
          observed: `${answer(res)}${seen ? `, ${visit.what} visited` : ''}`,
          diagnosis: `your receiver refuses a ${e.eventType}, a message ${title} signs like any other: verify it, then visit its ${visit.what} and answer 2xx`,
        };
      return {
        status: 'fail',
        observed: `${answer(res)}, ${visit.what} not visited within ${VISIT_WAIT_MS / 1000} s`,
        diagnosis: `your receiver answers the ${e.eventType} but never visits its ${visit.what}: the subscription stays pending and ${title} sends the endpoint nothing — after verifying the message, GET ${visit.what} (on the pinned host)`,
      };
    },
  },
  {
    name: 'forged-confirmation',
    summary:
      'the handshake signed with another key: 4xx, and its URL never visited — a receiver that confirms before verifying lets anyone subscribe it to a topic of theirs',
    skipFor: noVisitHandshake,
    needs: NEEDS_SIGNATURE,
    async run(ctx) {
      const h = handshakeOf(ctx);
      if (!h) return { status: 'skipped', observed: 'no handshake fixture is shipped' };
      const { e, visit, served } = h;
      const res = await post(ctx, e.rawBody, sign(ctx, e, { secrets: [stranger(ctx)] }), { refusal: true });
      // A visit made before verifying comes with the request; a moment more for one made from a queue.
      const seen = await served.visitOf(visit.token, 1_000);
      const observed = `${answer(res)}${seen ? `, ${visit.what} VISITED` : `, ${visit.what} not visited`}`;
      if (is4xx(res.status) && !seen) return { status: 'pass', observed };
      return {
        status: 'fail',
        observed: `${observed} (expected 4xx, no visit)`,
        diagnosis: seen
          ? `your receiver visits the ${visit.what} of a ${e.eventType} it has not verified: anyone who posts one confirms a subscription of their choosing (and has your server fetch a URL of theirs) — verify the message first, then visit ${visit.what} on the pinned host`
          : `a ${e.eventType} signed with another key must get 4xx; it got ${answer(res)}`,
      };
    },
  },
  {
    name: 'forged-certificate',
    summary:
      "signed with another key whose certificate is on another host (SigningCertURL points there): 4xx, nothing stored — a receiver takes SNS's certificate only from SNS's host",
    skipFor: (p) => (p.serve ? undefined : `${p.title} names no certificate URL in its messages`),
    needs: NEEDS_SIGNATURE,
    async run(ctx) {
      const forge = ctx.served?.forgedElsewhere;
      if (!forge) return { status: 'skipped', observed: 'the provider serves no certificate' };
      const e = ctx.factory.make(Date.now());
      const signed = sign(ctx, e);
      const forged = await forge(e.rawBody, { headers: signed, secret: ctx.secrets[0] ?? '' });
      try {
        const headers = { ...signed };
        // The forged message's own signature, so the request carries it where the body does.
        const sig = /"Signature"\s*:\s*"([^"]*)"/.exec(forged.body.toString('utf8'))?.[1];
        if (sig !== undefined) headers[ctx.provider.signatureHeader.toLowerCase()] = sig;
        // A scheme that carries its signature and certificate URL in headers (PayPal's): those, forged.
        for (const [name, value] of Object.entries(forged.headers ?? {})) headers[name.toLowerCase()] = value;
        const res = await post(ctx, forged.body, headers, { refusal: true });
        const stored = await mustNotStore(ctx, e.deliveryId);
        if (is4xx(res.status) && !stored.bad) return { status: 'pass', observed: `${answer(res)}${stored.text}` };
        return {
          status: 'fail',
          observed: `${answer(res)}${stored.text} (expected 4xx, nothing stored)`,
          diagnosis: is2xx(res.status)
            ? `your receiver fetched the signing certificate from ${forged.certUrl}, a host that is not ${ctx.provider.title}'s, and took a message signed with that host's key: anyone can sign as ${ctx.provider.title} — ${forged.headers ? `accept the certificate URL only as https on ${ctx.provider.title}'s own host (in hookdrill's test mode, the host ${ctx.provider.servedAt?.().hostVariable ?? 'HOOKDRILL_CERT_HOST'} names)` : "accept SigningCertURL only as https on sns.<region>.amazonaws.com (in hookdrill's test mode, the host HOOKDRILL_SNS_HOST names)"}, before fetching anything`
            : is4xx(res.status)
              ? 'your receiver stores a message before it verifies its signature: verify first, then store'
              : `a forged message must get 4xx; it got ${answer(res)}`,
        };
      } finally {
        await forged.close();
      }
    },
  },
];
