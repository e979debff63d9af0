/**
 * A declared scheme that sends a signed JWT as a bearer token (Google Cloud Pub/Sub push's OIDC ID
 * token; Jira apps, Plaid and Netlify sign JWTs too): checked here, as data, so reading a
 * declaration still costs no provider code (providers/declared-jwt.ts is the engine).
 *
 * The token is RS256 or ES256, signed with a private key whose public half the receiver fetches as a JWKS
 * (hookdrill's own key, served on a local server in test mode: delivery/key-server.ts). It binds
 * who sent it (`iss`), for whom (`aud`: by default the URL posted to, as Pub/Sub's default
 * audience is the push endpoint) and until when (`iat`, `exp`) — not the body: a body changed
 * under a valid token is accepted by the sender's own verifier, a property of the scheme — unless
 * a claim carries the body's hash (`bodyHash`: Plaid's `request_body_sha256`,
 * https://plaid.com/docs/api/webhooks/webhook-verification/), which binds the body too.
 */
export interface JwtSignature {
  scheme: 'jwt';
  /** The header the token travels in, as `Bearer <token>`: Authorization by default. */
  header?: string;
  /** false: the header holds the token alone, no `Bearer ` before it (Plaid's Plaid-Verification). */
  bearer?: boolean;
  /** The signing algorithm: RS256 (Google's ID tokens) or ES256, ECDSA over P-256 (Plaid's). */
  algorithm?: 'RS256' | 'ES256';
  /** The `iss` claim sent ("https://accounts.google.com"); left out, the token names no issuer (Plaid's). */
  issuer?: string;
  /** Other `iss` values a verifier accepts beside it (Google's "accounts.google.com"). */
  issuers?: string[];
  /** The `aud` claim: a fixed audience; left out, the URL posted to (Pub/Sub's default); false, none (Plaid's). */
  audience?: string | false;
  /** How long a token is valid, `exp` − `iat` (default "1h", as Google's ID tokens). */
  lifetime?: string;
  /**
   * A token with `iat` and no `exp`: a verifier refuses one issued longer ago than this (Plaid's
   * docs: "5 minutes"). Instead of lifetime.
   */
  maxAge?: string;
  /**
   * The claim that carries the hex SHA-256 of the raw body (Plaid's `request_body_sha256`): the
   * token then binds the body, and a changed body under it is refused.
   */
  bodyHash?: string;
  /** Other claims sent, as they are (`email`, `email_verified`): text, numbers or true/false. */
  claims?: Record<string, string | number | boolean>;
}

/** The claims the engine writes itself: a declaration cannot set them. */
export const REGISTERED_CLAIMS = ['iss', 'aud', 'exp', 'iat', 'nbf', 'jti'];

/** The algorithms a jwt scheme signs with: each an asymmetric one, whose public half a key server serves. */
export const JWT_ALGORITHMS = ['RS256', 'ES256'] as const;

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
  c.onlyKnown(
    s,
    ['scheme', 'header', 'bearer', 'algorithm', 'issuer', 'issuers', 'audience', 'lifetime', 'maxAge', 'bodyHash', 'claims'],
    'signature.',
  );
  if (s.algorithm !== undefined && !(JWT_ALGORITHMS as readonly unknown[]).includes(s.algorithm))
    throw c.bad('signature.algorithm', `must be ${JWT_ALGORITHMS.join(' or ')} (HS256 would make the receiver's key a signing key)`);
  const algorithm = (s.algorithm ?? 'RS256') as JwtSignature['algorithm'];
  if (s.bearer !== undefined && typeof s.bearer !== 'boolean') throw c.bad('signature.bearer', 'must be true or false');
  // A token naming no issuer is one only a body hash or a pinned key tells apart: said by the
  // declaration, never a default (Plaid's names none; Google's always does).
  const issuer = s.issuer === undefined && s.bodyHash !== undefined ? undefined : c.str(s.issuer, 'signature.issuer');
  if (s.maxAge !== undefined && s.lifetime !== undefined)
    throw c.bad('signature.maxAge', 'is for a token with iat and no exp: declare lifetime or maxAge, not both');
  const maxAge = s.maxAge === undefined ? undefined : c.str(s.maxAge, 'signature.maxAge');
  if (maxAge !== undefined) {
    const ms = c.durationMs(maxAge, 'signature.maxAge');
    if (ms < 60_000 || ms > 86_400_000) throw c.bad('signature.maxAge', `${maxAge} is outside 1m to 1d`);
  }
  const bodyHash = s.bodyHash === undefined ? undefined : c.str(s.bodyHash, 'signature.bodyHash');
  if (bodyHash !== undefined && REGISTERED_CLAIMS.includes(bodyHash))
    throw c.bad('signature.bodyHash', `${bodyHash} is a registered claim: name a claim of its own (Plaid's request_body_sha256)`);
  if (s.audience !== undefined && s.audience !== false && typeof s.audience !== 'string')
    throw c.bad('signature.audience', 'expected the audience, or false for a token with no aud');
  let issuers: string[] | undefined;
  if (s.issuers !== undefined && issuer === undefined) throw c.bad('signature.issuers', 'other issuers need signature.issuer');
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
      if (REGISTERED_CLAIMS.includes(k) || k === bodyHash)
        throw c.bad(`signature.claims.${k}`, 'is written by hookdrill from the scheme (issuer, audience, lifetime)');
      if (typeof v !== 'string' && typeof v !== 'number' && typeof v !== 'boolean')
        throw c.bad(`signature.claims.${k}`, 'must be text, a number, or true/false');
      claims[k] = v;
    }
  }
  return {
    scheme: 'jwt',
    ...(s.header !== undefined ? { header: c.headerName(s.header, 'signature.header') } : {}),
    ...(s.bearer === false ? { bearer: false } : {}),
    algorithm,
    ...(issuer !== undefined ? { issuer } : {}),
    ...(issuers ? { issuers } : {}),
    ...(s.audience === false
      ? { audience: false as const }
      : s.audience !== undefined
        ? { audience: c.str(s.audience, 'signature.audience') }
        : {}),
    ...(lifetime !== undefined ? { lifetime } : {}),
    ...(maxAge !== undefined ? { maxAge } : {}),
    ...(bodyHash !== undefined ? { bodyHash } : {}),
    ...(claims ? { claims } : {}),
  };
}
