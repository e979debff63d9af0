import type { PreparedEvent } from '../../fixtures/index.js';
import type { Provider } from '../../providers/index.js';
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

/** The request with a token whose claims are changed, at `offsetMs` from now. */
function withToken(
  ctx: CheckContext,
  e: PreparedEvent,
  change: { aud?: string; iss?: string; kid?: string },
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
  const head = value.split(/\s+/)[1]?.split('.')[0] ?? '';
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
      `your receiver accepts a token meant for another audience (aud ${OTHER_AUDIENCE}): check that aud is your endpoint's (${ctx.provider.jwt?.audience ?? signedUrl(ctx)}), as ${ctx.provider.verifier.official} does — without it, any token the same key signed for any other service is taken as one for you`,
    needsJwt,
  ),
  rejection(
    'expired-token',
    'a token whose exp passed a minute beyond the allowed clock skew: 4xx, nothing stored',
    (ctx, e) => {
      const jwt = ctx.provider.jwt;
      const back = ((jwt?.lifetimeSec ?? 0) + (jwt?.leewaySec ?? 0) + 60) * 1_000;
      return withToken(ctx, e, {}, { offsetMs: -back });
    },
    (ctx) =>
      `your receiver accepts a token that expired (exp) ${(ctx.provider.jwt?.leewaySec ?? 0) + 60}s ago: check exp (allowing at most ${ctx.provider.jwt?.leewaySec ?? 0}s of clock skew), or a captured request can be replayed for ever`,
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
      needsJwt,
    ),
    needs: [...NEEDS_SIGNATURE, { case: 'expired-token' }],
  },
  rejection(
    'wrong-issuer',
    'a token signed by the right key naming another issuer (iss): 4xx, nothing stored',
    (ctx, e) => withToken(ctx, e, { iss: OTHER_ISSUER }),
    (ctx) =>
      `your receiver accepts a token issued by ${OTHER_ISSUER}: check that iss is ${ctx.provider.jwt?.issuers.join(' or ') ?? 'the issuer'}, as ${ctx.provider.verifier.official} does`,
    needsJwt,
  ),
  rejection(
    'forged-kid',
    "a token signed by another key under the right key's kid: 4xx, nothing stored",
    (ctx, e) => {
      const kid = rightKid(ctx, e);
      return withToken(ctx, e, kid ? { kid } : {}, { secrets: [ctx.provider.otherSecret(ctx.secrets[0] ?? '')] });
    },
    () =>
      "your receiver accepts a token whose signature is not the key's its kid names: it decodes the token without verifying it — verify the RS256 signature with that key",
    needsJwt,
  ),
];
