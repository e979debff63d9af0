import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { parseDuration } from '../util/duration.js';
import { UsageError } from '../util/errors.js';
import type { CheckedDeclaration } from './declaration.js';
import type { JwtSignature } from './declaration-jwt.js';
import { signatureHeaderOf } from './declaration.js';
import { declaredDelivery, declaredIdentity, placeHeaders, withExtras } from './declared-common.js';
import type { DeclaredExtras } from './declared-common.js';
import { cachedKey, ownPrivateKey } from './keys.js';
import type { BearerJwt, JsonObject, Provider, ProviderName, SignContext } from './types.js';
import { SignatureError } from './types.js';
import { requireHeader, requireSecrets } from './util.js';

/**
 * A declared scheme that sends a signed JWT as a bearer token (declaration-jwt.ts): RS256 over
 * claims that say who sent it (`iss`), for whom (`aud`: the URL posted to unless declared) and until
 * when (`iat`, `exp`). The secret to send with is an RSA private key — hookdrill's own
 * (providers/keys.ts) where none is given — and a receiver verifies with the public half, which it
 * fetches as a JWKS: in test mode from the local key server hookdrill starts (delivery/key-server.ts).
 * Tokens are made and read by `jsonwebtoken` (sync: a provider signs and verifies synchronously),
 * never by hand. What a receiver must check is every claim, not the signature alone: a token for
 * another audience is a valid token, signed by the right key, meant for someone else.
 */

/** The verifier's allowance for clocks apart, on iat and exp: google-auth-library's 300 s (its clockSkew default). */
export const JWT_LEEWAY_SEC = 300;

/** An RSA private key as given: PEM (PKCS#8 or PKCS#1), 2048 bits or more (jsonwebtoken refuses fewer for RS256). */
function signingKey(secret: string): KeyObject {
  try {
    const key = createPrivateKey(secret.trim());
    if (key.asymmetricKeyType === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) >= 2048) return key;
  } catch {
    // Named below, in one line: never the key itself.
  }
  throw new UsageError('the signing key must be an RSA private key of 2048 bits or more, in PEM');
}

/** RFC 7638's thumbprint of an RSA public key, base64url: the `kid` hookdrill names its key by. */
export function keyIdOf(publicKey: KeyObject): string {
  const { e, n } = publicKey.export({ format: 'jwk' });
  return createHash('sha256')
    .update(JSON.stringify({ e, kty: 'RSA', n }))
    .digest('base64url');
}

/** A public key as a JWK, as Google's certs endpoint writes each (kty, use, alg, kid, n, e). */
function jwkOf(publicKey: KeyObject): JsonObject {
  const { e, n } = publicKey.export({ format: 'jwk' });
  return { kty: 'RSA', use: 'sig', alg: 'RS256', kid: keyIdOf(publicKey), n: n ?? '', e: e ?? '' };
}

/** The JWKS of a private key: one key, its public half. */
export function jwksOf(privateKey: string): { keys: JsonObject[] } {
  return { keys: [jwkOf(createPublicKey(signingKey(privateKey)))] };
}

/**
 * The keys a receiver verifies with, by kid: a JWKS (as the key server serves it), one JWK, a
 * public key in PEM, or a private key (its public half).
 */
function verifyingKeys(secret: string): Map<string, KeyObject> {
  const text = secret.trim();
  const out = new Map<string, KeyObject>();
  if (text.startsWith('{')) {
    const parsed = JSON.parse(text) as { keys?: unknown };
    const list = Array.isArray(parsed.keys) ? parsed.keys : [parsed];
    for (const jwk of list) {
      if (typeof jwk !== 'object' || jwk === null || (jwk as { kty?: unknown }).kty !== 'RSA') continue;
      const key = createPublicKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' });
      const kid = (jwk as { kid?: unknown }).kid;
      out.set(typeof kid === 'string' ? kid : keyIdOf(key), key);
    }
    return out;
  }
  const key = text.includes('PRIVATE KEY') ? createPublicKey(signingKey(text)) : createPublicKey(text);
  if (key.asymmetricKeyType === 'rsa') out.set(keyIdOf(key), key);
  return out;
}

const signers = new Map<string, KeyObject>();
const verifiers = new Map<string, Map<string, KeyObject>>();
let other: string | undefined;

export function jwtProvider(d: CheckedDeclaration, sig: JwtSignature, extras: DeclaredExtras = {}): Provider {
  const name = signatureHeaderOf(sig);
  const identity = declaredIdentity(d);
  const { idHeader, typeHeader, typePath } = identity;
  const title = d.title ?? d.name;
  const lifetimeSec = sig.lifetime ? parseDuration(sig.lifetime, 'lifetime') / 1000 : 3600;
  const issuers = [sig.issuer, ...(sig.issuers ?? [])];

  /** A token for this body's delivery, with the claims changed where check asks (another aud, iss or kid). */
  const tokenFor = (secret: string, ctx: SignContext, change: { aud?: string; iss?: string; kid?: string } = {}): string => {
    const key = cachedKey(signers, secret, signingKey);
    const iat = Math.floor(ctx.nowMs / 1000);
    const claims: Record<string, string | number | boolean> = {
      ...sig.claims,
      aud: change.aud ?? sig.audience ?? ctx.url ?? '',
      iss: change.iss ?? sig.issuer,
      iat,
      exp: iat + lifetimeSec,
    };
    // In name order, as Google's ID tokens have them (aud, azp, email, email_verified, exp, iat, iss, sub).
    const sorted = Object.fromEntries(Object.entries(claims).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    return jwt.sign(sorted, key, { algorithm: 'RS256', keyid: change.kid ?? keyIdOf(createPublicKey(key)) });
  };

  const headersFor = (token: string, ctx: SignContext) => {
    const value = `Bearer ${token}`;
    const placed = { signature: value, id: ctx.deliveryId, event: ctx.eventType };
    return placeHeaders(d, placed, [
      ['Content-Type', d.contentType ?? 'application/json'],
      [name, value],
      [idHeader, ctx.deliveryId],
      [typeHeader, ctx.eventType],
    ]);
  };

  const bearer: BearerJwt = {
    issuer: sig.issuer,
    issuers,
    ...(sig.audience !== undefined ? { audience: sig.audience } : {}),
    lifetimeSec,
    leewaySec: JWT_LEEWAY_SEC,
    signWith(_rawBody, secrets, ctx, change) {
      return headersFor(tokenFor(secrets[0] ?? '', ctx, change), ctx);
    },
    jwks: jwksOf,
  };

  const provider: Provider = {
    ...identity.members,
    // A declared name is registered at run time (providers/index.ts) and passes as a known one.
    name: d.name as ProviderName,
    title,
    signatureHeader: name,
    signedHeaders: [name],
    timestamped: false,
    rotation: false,
    keyPair: true,
    jwt: bearer,
    ...(sig.audience === undefined ? { urlBound: true as const } : {}),
    ownKey: () => ownPrivateKey(d.name, 'rsa'),
    publicKey: (privateKey) => JSON.stringify(jwksOf(privateKey)),
    publicKeyName: 'JWKS (JSON Web Key Set)',
    ...declaredDelivery(d, title),
    verifier: {
      official: `the ${d.name} declaration in ${d.file} (an RS256 JWT: signature, iss, aud, exp)`,
      futureTimestamp: 'refused', // the token's own iat is judged by the jwt cases
      parsesJson: false,
      // The token's signature is its third part: edited there, the token is still three parts.
      editSignatures: (v, edit) => {
        const m = /^(\S+\s+[^.]*\.[^.]*\.)(\S*)$/.exec(v);
        return m ? `${m[1]}${edit(m[2] as string)}` : edit(v);
      },
      unknownType: typePath ? { path: typePath, value: 'hookdrill.unknown_event_type' } : { eventName: 'hookdrill.unknown_event_type' },
    },

    checkSecret(secret) {
      signingKey(secret);
    },

    checkVerifyingKey(key) {
      let keys: Map<string, KeyObject> | undefined;
      try {
        keys = verifyingKeys(key);
      } catch {
        // Named below.
      }
      if (!keys?.size)
        throw new UsageError(
          `${d.name}: the key to verify with must be an RSA public key: a JWKS, a JWK or PEM (\`hookdrill keys ${d.name}\` prints it)`,
        );
    },

    sign(_rawBody, secrets, ctx) {
      const [secret] = secrets;
      if (secret === undefined) throw new UsageError(`${d.name} signs with a private key: none was given`);
      return headersFor(tokenFor(secret, ctx), ctx);
    },

    verify(_rawBody, headers, secrets, opts = {}) {
      requireSecrets(secrets);
      const v = requireHeader(headers, name);
      // The auth-scheme is case-insensitive (RFC 9110 §11.1).
      const m = /^(\S+)\s+(\S+)$/.exec(v.trim());
      if (!m || (m[1] as string).toLowerCase() !== 'bearer')
        throw new SignatureError('malformed_header', `${name} is not "Bearer <token>"`);
      const token = m[2] as string;
      const decoded = jwt.decode(token, { complete: true });
      if (!decoded || typeof decoded.payload !== 'object') throw new SignatureError('malformed_header', `${name} holds no JWT`);
      if (decoded.header.alg !== 'RS256')
        throw new SignatureError('malformed_header', `the token is signed ${decoded.header.alg}, not RS256`);
      const kid = decoded.header.kid;
      if (typeof kid !== 'string') throw new SignatureError('malformed_header', 'the token names no key (kid)');
      const key = secrets.map((s) => cachedKeys(s).get(kid)).find((k) => k !== undefined);
      if (!key) throw new SignatureError('no_match', `the token is signed by key ${kid}, which is none of the keys verified with`);
      const nowSec = Math.floor((opts.nowMs ?? Date.now()) / 1000);
      let claims: jwt.JwtPayload;
      try {
        claims = jwt.verify(token, key, {
          algorithms: ['RS256'],
          clockTimestamp: nowSec,
          clockTolerance: JWT_LEEWAY_SEC,
        }) as jwt.JwtPayload;
      } catch (err) {
        if (err instanceof jwt.TokenExpiredError)
          throw new SignatureError(
            'stale_timestamp',
            `the token expired (exp) ${nowSec - Math.floor(err.expiredAt.getTime() / 1000)}s ago`,
          );
        if (err instanceof jwt.JsonWebTokenError && /signature/.test(err.message))
          throw new SignatureError('no_match', `the token's signature does not verify with key ${kid}`);
        throw new SignatureError('malformed_header', `the token does not verify: ${err instanceof Error ? err.message : String(err)}`);
      }
      if (typeof claims.exp !== 'number' || typeof claims.iat !== 'number')
        throw new SignatureError('malformed_header', 'the token has no exp or no iat');
      if (claims.iat > nowSec + JWT_LEEWAY_SEC)
        throw new SignatureError('future_timestamp', `the token is issued (iat) ${claims.iat - nowSec}s in the future`);
      if (typeof claims.iss !== 'string' || !issuers.includes(claims.iss))
        throw new SignatureError('no_match', `the token's issuer (iss) is ${JSON.stringify(claims.iss)}, not ${issuers.join(' or ')}`);
      const expected = sig.audience ?? opts.url;
      if (expected === undefined)
        throw new SignatureError('no_match', 'the token is for an audience (aud), and no URL was given to verify it with');
      const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
      if (!aud.includes(expected))
        throw new SignatureError('no_match', `the token is for another audience (aud ${JSON.stringify(claims.aud)}, not ${expected})`);
    },

    otherSecret() {
      // Another RSA key, made once a process (2048 bits take a moment).
      other ??= generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
      return other;
    },
  };
  return withExtras(provider, extras);
}

/** The keys of a secret by kid, read once: listen verifies every request with them. */
function cachedKeys(secret: string): Map<string, KeyObject> {
  let keys = verifiers.get(secret);
  if (!keys) {
    try {
      keys = verifyingKeys(secret);
    } catch {
      keys = new Map();
    }
    if (verifiers.size > 64) verifiers.clear();
    verifiers.set(secret, keys);
  }
  return keys;
}
