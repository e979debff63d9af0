/**
 * A declared scheme that sends a signed JWT as a bearer token (Google Cloud Pub/Sub push's OIDC ID
 * token; Jira apps, Plaid and Netlify sign JWTs too): checked here, as data, so reading a
 * declaration still costs no provider code (providers/declared-jwt.ts is the engine).
 *
 * The token is RS256, signed with a private key whose public half the receiver fetches as a JWKS
 * (hookdrill's own key, served on a local server in test mode: delivery/key-server.ts). It binds
 * who sent it (`iss`), for whom (`aud`: by default the URL posted to, as Pub/Sub's default
 * audience is the push endpoint) and until when (`iat`, `exp`) — not the body: a body changed
 * under a valid token is accepted by the sender's own verifier, a property of the scheme.
 */
export interface JwtSignature {
  scheme: 'jwt';
  /** The header the token travels in, as `Bearer <token>`: Authorization by default. */
  header?: string;
  /** The signing algorithm: RS256 (what Google's ID tokens use). */
  algorithm?: 'RS256';
  /** The `iss` claim sent ("https://accounts.google.com"). */
  issuer: string;
  /** Other `iss` values a verifier accepts beside it (Google's "accounts.google.com"). */
  issuers?: string[];
  /** The `aud` claim: a fixed audience; left out, the URL posted to (Pub/Sub's default). */
  audience?: string;
  /** How long a token is valid, `exp` − `iat` (default "1h", as Google's ID tokens). */
  lifetime?: string;
  /** Other claims sent, as they are (`email`, `email_verified`): text, numbers or true/false. */
  claims?: Record<string, string | number | boolean>;
}

/** The claims the engine writes itself: a declaration cannot set them. */
export const REGISTERED_CLAIMS = ['iss', 'aud', 'exp', 'iat', 'nbf', 'jti'];

/** Whether a declared signature is a signed JWT. */
export function isJwtScheme(sig: { scheme?: string }): sig is JwtSignature {
  return sig.scheme === 'jwt';
}

interface Checks {
  bad(field: string, what: string): Error;
  str(v: unknown, field: string): string;
  headerName(v: unknown, field: string): string;
  onlyKnown(o: Record<string, unknown>, known: readonly string[], prefix: string): void;
  durationMs(text: string, field: string): number;
}

/** Every fault one line naming the field, as the rest of the declaration's. */
export function checkJwtSignature(s: Record<string, unknown>, c: Checks): JwtSignature {
  c.onlyKnown(s, ['scheme', 'header', 'algorithm', 'issuer', 'issuers', 'audience', 'lifetime', 'claims'], 'signature.');
  if (s.algorithm !== undefined && s.algorithm !== 'RS256')
    throw c.bad('signature.algorithm', 'must be RS256 (the only one a jwt scheme signs with yet)');
  const issuer = c.str(s.issuer, 'signature.issuer');
  let issuers: string[] | undefined;
  if (s.issuers !== undefined) {
    if (!Array.isArray(s.issuers)) throw c.bad('signature.issuers', 'expected a list of issuers');
    issuers = s.issuers.map((v, i) => c.str(v, `signature.issuers[${i}]`));
  }
  const lifetime = s.lifetime === undefined ? undefined : c.str(s.lifetime, 'signature.lifetime');
  if (lifetime !== undefined) {
    const ms = c.durationMs(lifetime, 'signature.lifetime');
    // A token valid for longer is one a captured request replays for that long.
    if (ms < 60_000 || ms > 86_400_000) throw c.bad('signature.lifetime', `${lifetime} is outside 1m to 1d`);
  }
  let claims: Record<string, string | number | boolean> | undefined;
  if (s.claims !== undefined) {
    if (typeof s.claims !== 'object' || s.claims === null || Array.isArray(s.claims))
      throw c.bad('signature.claims', 'expected an object of claim names and values');
    claims = {};
    for (const [k, v] of Object.entries(s.claims)) {
      if (REGISTERED_CLAIMS.includes(k))
        throw c.bad(`signature.claims.${k}`, 'is written by hookdrill from the scheme (issuer, audience, lifetime)');
      if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')
        throw c.bad(`signature.claims.${k}`, 'must be text, a number, or true/false');
      claims[k] = v;
    }
  }
  return {
    scheme: 'jwt',
    ...(s.header !== undefined ? { header: c.headerName(s.header, 'signature.header') } : {}),
    algorithm: 'RS256',
    issuer,
    ...(issuers ? { issuers } : {}),
    ...(s.audience !== undefined ? { audience: c.str(s.audience, 'signature.audience') } : {}),
    ...(lifetime !== undefined ? { lifetime } : {}),
    ...(claims ? { claims } : {}),
  };
}
