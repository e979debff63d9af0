import type { PreparedEvent } from '../../fixtures/index.js';
import type { JwtChange, Provider } from '../../providers/index.js';
import { NEEDS_SIGNATURE, lower, rejection, signedUrl } from './common.js';
import type { CheckCase, CheckContext } from './common.js';

/**
 * A JWT scheme's claims (Google Pub/Sub push's OIDC token): a token signed by the right key is
 * still to be refused when it is meant for another audience, has expired, names another issuer —
 * or when its signature is another key's under the right key's kid. Each is what the official
 * verifier (google-auth-library's verifyIdToken) refuses, and what a receiver that only decodes
 * the token, or checks the signature alone, takes.
 */

/** An audience no receiver is: a token Google signed for another service. */
export const OTHER_AUDIENCE = 'https://another-service.example/push';
/** An issuer no JWT scheme names. */
export const OTHER_ISSUER = 'https://issuer.hookdrill.example';

const needsJwt = (p: Provider) => (p.jwt ? undefined : `${p.title} sends no JWT`);
const needsAudience = (p: Provider) =>
  needsJwt(p) ?? (p.jwt?.audience === false ? `${p.title}'s token names no audience (aud): nothing to judge` : undefined);
const needsIssuer = (p: Provider) =>
  needsJwt(p) ?? (p.jwt?.issuer === undefined ? `${p.title}'s token names no issuer (iss): nothing to judge` : undefined);
// Plaid's docs refuse a token by its age alone ("more than 5 minutes old"): a future iat is not refused by them.
const needsFutureCheck = (p: Provider) =>
  needsJwt(p) ?? (p.jwt?.iatOnly ? `${p.verifier.official} judges the token's age only, not an iat ahead` : undefined);

/** How far back a stale token is issued: past exp (or the oldest iat taken) and the skew, by a minute. */
const staleBackSec = (p: Provider) => (p.jwt?.lifetimeSec ?? 0) + (p.jwt?.leewaySec ?? 0) + 60;

/** The request with a token whose claims are changed, at `offsetMs` from now. */
function withToken(
  ctx: CheckContext,
  e: PreparedEvent,
  change: JwtChange,
  o: { offsetMs?: number; secrets?: readonly string[] } = {},
): { body: Buffer; headers: Record<string, string> } {
  const jwt = ctx.provider.jwt;
  if (!jwt) throw new Error(`${ctx.provider.name} sends no JWT`);
  const headers = jwt.signWith(
    e.rawBody,
    o.secrets ?? ctx.secrets,
    {
      nowMs: Date.now() + (o.offsetMs ?? 0),
      deliveryId: e.deliveryId,
      eventType: e.eventType,
      facts: e.facts,
      url: signedUrl(ctx),
    },
    change,
  );
  return { body: e.rawBody, headers: lower(headers) };
}

/** The kid the right key's tokens name: read from a token it signs. */
function rightKid(ctx: CheckContext, e: PreparedEvent): string | undefined {
  const value = withToken(ctx, e, {}).headers[ctx.provider.signatureHeader.toLowerCase()] ?? '';
  // The token is the header's last word: after `Bearer `, or alone (Plaid's).
  const head = value.trim().split(/\s+/).pop()?.split('.')[0] ?? '';
  try {
    const kid = (JSON.parse(Buffer.from(head, 'base64url').toString('utf8')) as { kid?: unknown }).kid;
    return typeof kid === 'string' ? kid : undefined;
  } catch {
    return undefined;
  }
}

export const JWT_CASES: readonly CheckCase[] = [
  rejection(
    'wrong-audience',
    'a token signed by the right key for another audience (aud): 4xx, nothing stored',
    (ctx, e) => withToken(ctx, e, { aud: OTHER_AUDIENCE }),
    (ctx) =>
      `your receiver accepts a token meant for another audience (aud ${OTHER_AUDIENCE}): check that aud is your endpoint's (${ctx.provider.jwt?.audience || signedUrl(ctx)}), as ${ctx.provider.verifier.official} does — without it, any token the same key signed for any other service is taken as one for you`,
    needsAudience,
  ),
  rejection(
    'expired-token',
    "a token past its time — exp passed, or iat older than the provider's limit (Plaid's 5 minutes) — by a minute beyond the allowed clock skew: 4xx, nothing stored",
    (ctx, e) => withToken(ctx, e, {}, { offsetMs: -staleBackSec(ctx.provider) * 1_000 }),
    (ctx) =>
      ctx.provider.jwt?.iatOnly
        ? `your receiver accepts a token issued (iat) ${staleBackSec(ctx.provider)}s ago: refuse one older than ${ctx.provider.jwt.lifetimeSec}s, as ${ctx.provider.verifier.official} does, or a captured request can be replayed for ever`
        : `your receiver accepts a token that expired (exp) ${(ctx.provider.jwt?.leewaySec ?? 0) + 60}s ago: check exp (allowing at most ${ctx.provider.jwt?.leewaySec ?? 0}s of clock skew), or a captured request can be replayed for ever`,
    needsJwt,
  ),
  {
    // A token issued in the future: verifyIdToken refuses it ("used too early"). A receiver with no
    // clock check at all fails expired-token already: one defect, one finding.
    ...rejection(
      'future-token',
      'a token issued (iat) a minute beyond the allowed clock skew in the future: 4xx, nothing stored',
      (ctx, e) => withToken(ctx, e, {}, { offsetMs: ((ctx.provider.jwt?.leewaySec ?? 0) + 60) * 1_000 }),
      (ctx) =>
        `your receiver accepts a token issued (iat) ${(ctx.provider.jwt?.leewaySec ?? 0) + 60}s in the future: check iat too (at most ${ctx.provider.jwt?.leewaySec ?? 0}s ahead), as ${ctx.provider.verifier.official} does`,
      needsFutureCheck,
    ),
    needs: [...NEEDS_SIGNATURE, { case: 'expired-token' }],
  },
  rejection(
    'wrong-issuer',
    'a token signed by the right key naming another issuer (iss): 4xx, nothing stored',
    (ctx, e) => withToken(ctx, e, { iss: OTHER_ISSUER }),
    (ctx) =>
      `your receiver accepts a token issued by ${OTHER_ISSUER}: check that iss is ${ctx.provider.jwt?.issuers.join(' or ') ?? 'the issuer'}, as ${ctx.provider.verifier.official} does`,
    needsIssuer,
  ),
  rejection(
    'forged-kid',
    "a token signed by another key under the right key's kid: 4xx, nothing stored",
    (ctx, e) => {
      const kid = rightKid(ctx, e);
      return withToken(ctx, e, kid ? { kid } : {}, { secrets: [ctx.provider.otherSecret(ctx.secrets[0] ?? '')] });
    },
    (ctx) =>
      `your receiver accepts a token whose signature is not the key's its kid names: it decodes the token without verifying it — verify the ${ctx.provider.jwt?.algorithm ?? 'RS256'} signature with that key`,
    needsJwt,
  ),
  // Algorithm confusion (RFC 8725 §2.1, §3.1): a verifier that takes the algorithm from the token's
  // own header verifies what an attacker chose. Plaid's docs: "ensure that the alg is ES256".
  rejection(
    'alg-none',
    "a token whose header says alg none, with no signature, under the right key's kid: 4xx, nothing stored",
    (ctx, e) => {
      const kid = rightKid(ctx, e);
      return withToken(ctx, e, { alg: 'none', ...(kid ? { kid } : {}) });
    },
    (ctx) =>
      `your receiver accepts an unsigned token (alg none): it takes the algorithm from the token — pin it to ${ctx.provider.jwt?.algorithm ?? 'RS256'} and refuse any other`,
    needsJwt,
  ),
  rejection(
    'alg-hs256',
    "a token signed HS256 with the right public key's PEM as the HMAC key, under its kid: 4xx, nothing stored",
    (ctx, e) => {
      const kid = rightKid(ctx, e);
      return withToken(ctx, e, { alg: 'HS256', ...(kid ? { kid } : {}) });
    },
    (ctx) =>
      `your receiver accepts a token signed HS256 with the public key as the secret (algorithm confusion): anyone holding the public key signs as ${ctx.provider.title} — pin the algorithm to ${ctx.provider.jwt?.algorithm ?? 'RS256'}`,
    needsJwt,
  ),
];
