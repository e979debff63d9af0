import { createHash, createPrivateKey, createPublicKey, createSecretKey, generateKeyPairSync, timingSafeEqual } from 'node:crypto';
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
import type { BearerJwt, JsonObject, JwtChange, Provider, ProviderName, SignContext } from './types.js';
import { SignatureError } from './types.js';
import { requireHeader, requireSecrets } from './util.js';

/**
 * A declared scheme that sends a signed JWT as a bearer token (declaration-jwt.ts): RS256 or ES256
 * (Plaid's, with the body's hash in a claim) over claims that say who sent it (`iss`), for whom (`aud`: the URL posted to unless declared) and until
 * when (`iat`, `exp`). The secret to send with is an RSA private key — hookdrill's own
 * (providers/keys.ts) where none is given — and a receiver verifies with the public half, which it
 * fetches as a JWKS: in test mode from the local key server hookdrill starts (delivery/key-server.ts).
 * Tokens are made and read by `jsonwebtoken` (sync: a provider signs and verifies synchronously),
 * never by hand. What a receiver must check is every claim, not the signature alone: a token for
 * another audience is a valid token, signed by the right key, meant for someone else.
 */

/** The verifier's allowance for clocks apart, on iat and exp: google-auth-library's 300 s (its clockSkew default). */
export const JWT_LEEWAY_SEC = 300;

/** The curve ES256 signs over (RFC 7518 §3.4): P-256, prime256v1 to OpenSSL. */
const P256 = 'prime256v1';

/**
 * A private key as given, in PEM: RSA of 2048 bits or more (jsonwebtoken refuses fewer for RS256),
 * or an EC key on P-256 (ES256).
 */
function signingKey(secret: string): KeyObject {
  try {
    const key = createPrivateKey(secret.trim());
    if (key.asymmetricKeyType === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) >= 2048) return key;
    if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === P256) return key;
  } catch {
    // Named below, in one line: never the key itself.
  }
  throw new UsageError('the signing key must be an RSA private key of 2048 bits or more, or an EC key on P-256, in PEM');
}

/** RFC 7638's thumbprint of a public key (RSA or EC), base64url: the `kid` hookdrill names its key by. */
export function keyIdOf(publicKey: KeyObject): string {
  const jwk = publicKey.export({ format: 'jwk' });
  // The required members only, in name order (RFC 7638 §3.2).
  const members = jwk.kty === 'EC' ? { crv: jwk.crv, kty: 'EC', x: jwk.x, y: jwk.y } : { e: jwk.e, kty: 'RSA', n: jwk.n };
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url');
}

/** A public key as a JWK, as Google's certs endpoint writes each (kty, use, alg, kid, n, e), or Plaid's EC keys (crv, x, y). */
function jwkOf(publicKey: KeyObject): JsonObject {
  const jwk = publicKey.export({ format: 'jwk' });
  if (jwk.kty === 'EC')
    return { kty: 'EC', use: 'sig', alg: 'ES256', kid: keyIdOf(publicKey), crv: jwk.crv ?? '', x: jwk.x ?? '', y: jwk.y ?? '' };
  return { kty: 'RSA', use: 'sig', alg: 'RS256', kid: keyIdOf(publicKey), n: jwk.n ?? '', e: jwk.e ?? '' };
}

/** The hex SHA-256 of a body: what a body-hash claim carries (Plaid's request_body_sha256). */
export const bodySha256 = (body: Buffer) => createHash('sha256').update(body).digest('hex');

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
      const kty = typeof jwk === 'object' && jwk !== null ? (jwk as { kty?: unknown }).kty : undefined;
      if (kty !== 'RSA' && kty !== 'EC') continue;
      const key = createPublicKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' });
      const kid = (jwk as { kid?: unknown }).kid;
      out.set(typeof kid === 'string' ? kid : keyIdOf(key), key);
    }
    return out;
  }
  const key = text.includes('PRIVATE KEY') ? createPublicKey(signingKey(text)) : createPublicKey(text);
  if (key.asymmetricKeyType === 'rsa' || key.asymmetricKeyType === 'ec') out.set(keyIdOf(key), key);
  return out;
}

const signers = new Map<string, KeyObject>();
const verifiers = new Map<string, Map<string, KeyObject>>();
const others = new Map<string, string>();

export function jwtProvider(d: CheckedDeclaration, sig: JwtSignature, extras: DeclaredExtras = {}): Provider {
  const name = signatureHeaderOf(sig);
  const identity = declaredIdentity(d);
  const { idHeader, typeHeader, typePath } = identity;
  const title = d.title ?? d.name;
  const algorithm = sig.algorithm ?? 'RS256';
  const keyKind = algorithm === 'ES256' ? 'p256' : 'rsa';
  const iatOnly = sig.maxAge !== undefined;
  const lifetimeSec = sig.maxAge
    ? parseDuration(sig.maxAge, 'maxAge') / 1000
    : sig.lifetime
      ? parseDuration(sig.lifetime, 'lifetime') / 1000
      : 3600;
  // A token checked for its age alone is checked as the provider's docs say (Plaid's: "more than 5
  // minutes old" is refused, no skew beside it); one with exp as google-auth-library checks it.
  const leewaySec = iatOnly ? 0 : JWT_LEEWAY_SEC;
  const issuers = sig.issuer === undefined ? [] : [sig.issuer, ...(sig.issuers ?? [])];
  const bearerPrefix = sig.bearer === false ? '' : 'Bearer ';

  /** A token for this body's delivery, with the claims changed where check asks (another aud, iss, kid or algorithm). */
  const tokenFor = (secret: string, rawBody: Buffer, ctx: SignContext, change: JwtChange = {}): string => {
    const key = cachedKey(signers, secret, signingKey);
    const iat = Math.floor(ctx.nowMs / 1000);
    const claims: Record<string, string | number | boolean> = {
      ...sig.claims,
      ...(sig.audience === false ? {} : { aud: change.aud ?? sig.audience ?? ctx.url ?? '' }),
      ...(sig.issuer === undefined && change.iss === undefined ? {} : { iss: change.iss ?? sig.issuer ?? '' }),
      iat,
      ...(iatOnly ? {} : { exp: iat + lifetimeSec }),
      ...(sig.bodyHash ? { [sig.bodyHash]: bodySha256(change.hashedBody ?? rawBody) } : {}),
    };
    // In name order, as Google's ID tokens have them (aud, azp, email, email_verified, exp, iat, iss,
    // sub) and Plaid's (iat, request_body_sha256).
    const sorted = Object.fromEntries(Object.entries(claims).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    const keyid = change.kid ?? keyIdOf(createPublicKey(key));
    if (change.alg === 'none') return jwt.sign(sorted, '', { algorithm: 'none', keyid });
    if (change.alg === 'HS256') {
      // The classic confusion: a verifier that takes the algorithm from the token HMACs with the
      // public key it holds (its PEM text) — a key everyone has.
      const pem = createPublicKey(key).export({ type: 'spki', format: 'pem' }).toString();
      return jwt.sign(sorted, createSecretKey(Buffer.from(pem)), { algorithm: 'HS256', keyid });
    }
    return jwt.sign(sorted, key, { algorithm, keyid });
  };

  const headersFor = (token: string, ctx: SignContext) => {
    const value = `${bearerPrefix}${token}`;
    const placed = { signature: value, id: ctx.deliveryId, event: ctx.eventType };
    return placeHeaders(d, placed, [
      ['Content-Type', d.contentType ?? 'application/json'],
      [name, value],
      [idHeader, ctx.deliveryId],
      [typeHeader, ctx.eventType],
    ]);
  };

  const bearer: BearerJwt = {
    ...(sig.issuer !== undefined ? { issuer: sig.issuer } : {}),
    issuers,
    ...(sig.audience !== undefined ? { audience: sig.audience } : {}),
    algorithm,
    lifetimeSec,
    ...(iatOnly ? { iatOnly: true as const } : {}),
    ...(sig.bodyHash ? { bodyHash: sig.bodyHash } : {}),
    leewaySec,
    signWith(rawBody, secrets, ctx, change) {
      return headersFor(tokenFor(secrets[0] ?? '', rawBody, ctx, change), ctx);
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
    ownKey: () => ownPrivateKey(d.name, keyKind),
    publicKey: (privateKey) => JSON.stringify(jwksOf(privateKey)),
    publicKeyName: 'JWKS (JSON Web Key Set)',
    ...declaredDelivery(d, title),
    verifier: {
      official: `the ${d.name} declaration in ${d.file} (an ${algorithm} JWT: signature, ${[
        ...(issuers.length ? ['iss'] : []),
        ...(sig.audience === false ? [] : ['aud']),
        iatOnly ? 'iat' : 'exp',
        ...(sig.bodyHash ? [sig.bodyHash] : []),
      ].join(', ')})`,
      futureTimestamp: 'refused', // the token's own iat is judged by the jwt cases
      parsesJson: false,
      // The token's signature is its third part: edited there, the token is still three parts.
      editSignatures: (v, edit) => {
        const m = /^((?:\S+\s+)?[^.\s]*\.[^.]*\.)(\S*)$/.exec(v);
        return m ? `${m[1]}${edit(m[2] as string)}` : edit(v);
      },
      unknownType: typePath ? { path: typePath, value: 'hookdrill.unknown_event_type' } : { eventName: 'hookdrill.unknown_event_type' },
    },

    checkSecret(secret) {
      const kind = signingKey(secret).asymmetricKeyType;
      if (kind !== (algorithm === 'ES256' ? 'ec' : 'rsa'))
        throw new UsageError(
          `${d.name} signs ${algorithm}: the signing key must be ${algorithm === 'ES256' ? 'an EC key on P-256' : 'an RSA key'}, in PEM`,
        );
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
          `${d.name}: the key to verify with must be an ${algorithm === 'ES256' ? 'EC (P-256)' : 'RSA'} public key: a JWKS, a JWK or PEM (\`hookdrill keys ${d.name}\` prints it)`,
        );
    },

    sign(rawBody, secrets, ctx) {
      const [secret] = secrets;
      if (secret === undefined) throw new UsageError(`${d.name} signs with a private key: none was given`);
      return headersFor(tokenFor(secret, rawBody, ctx), ctx);
    },

    verify(rawBody, headers, secrets, opts = {}) {
      requireSecrets(secrets);
      const v = requireHeader(headers, name);
      let token = v.trim();
      if (bearerPrefix) {
        // The auth-scheme is case-insensitive (RFC 9110 §11.1).
        const m = /^(\S+)\s+(\S+)$/.exec(token);
        if (!m || (m[1] as string).toLowerCase() !== 'bearer')
          throw new SignatureError('malformed_header', `${name} is not "Bearer <token>"`);
        token = m[2] as string;
      }
      const decoded = jwt.decode(token, { complete: true });
      if (!decoded || typeof decoded.payload !== 'object') throw new SignatureError('malformed_header', `${name} holds no JWT`);
      // Pinned, never read from the token: `none` or HS256 keyed by the public key would verify.
      if (decoded.header.alg !== algorithm)
        throw new SignatureError('malformed_header', `the token is signed ${decoded.header.alg}, not ${algorithm}`);
      const kid = decoded.header.kid;
      if (typeof kid !== 'string') throw new SignatureError('malformed_header', 'the token names no key (kid)');
      const key = secrets.map((s) => cachedKeys(s).get(kid)).find((k) => k !== undefined);
      if (!key) throw new SignatureError('no_match', `the token is signed by key ${kid}, which is none of the keys verified with`);
      const nowSec = Math.floor((opts.nowMs ?? Date.now()) / 1000);
      let claims: jwt.JwtPayload;
      try {
        claims = jwt.verify(token, key, {
          algorithms: [algorithm],
          clockTimestamp: nowSec,
          clockTolerance: leewaySec,
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
      if (typeof claims.iat !== 'number') throw new SignatureError('malformed_header', 'the token has no iat');
      if (iatOnly) {
        // Its age is all its time says (Plaid's docs check nothing of a future iat).
        if (nowSec - claims.iat > lifetimeSec)
          throw new SignatureError('stale_timestamp', `the token was issued (iat) ${nowSec - claims.iat}s ago, more than ${lifetimeSec}s`);
      } else {
        if (typeof claims.exp !== 'number') throw new SignatureError('malformed_header', 'the token has no exp');
        if (claims.iat > nowSec + leewaySec)
          throw new SignatureError('future_timestamp', `the token is issued (iat) ${claims.iat - nowSec}s in the future`);
      }
      if (issuers.length && (typeof claims.iss !== 'string' || !issuers.includes(claims.iss)))
        throw new SignatureError('no_match', `the token's issuer (iss) is ${JSON.stringify(claims.iss)}, not ${issuers.join(' or ')}`);
      // The body is judged once it is read: a request refused on its headers alone (admission) never hashes it.
      if (sig.bodyHash && !opts.headersOnly) {
        const said = claims[sig.bodyHash];
        const ours = Buffer.from(bodySha256(rawBody));
        if (typeof said !== 'string' || said.length !== ours.length || !timingSafeEqual(Buffer.from(said), ours))
          throw new SignatureError('no_match', `the token's ${sig.bodyHash} is not the body's SHA-256: the body was changed`);
      }
      if (sig.audience === false) return;
      const expected = sig.audience ?? opts.url;
      if (expected === undefined)
        throw new SignatureError('no_match', 'the token is for an audience (aud), and no URL was given to verify it with');
      const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
      if (!aud.includes(expected))
        throw new SignatureError('no_match', `the token is for another audience (aud ${JSON.stringify(claims.aud)}, not ${expected})`);
    },

    otherSecret() {
      // Another key of the same kind, made once a process (2048 bits of RSA take a moment).
      let other = others.get(keyKind);
      if (other === undefined) {
        const pair =
          keyKind === 'p256' ? generateKeyPairSync('ec', { namedCurve: P256 }) : generateKeyPairSync('rsa', { modulusLength: 2048 });
        other = pair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
        others.set(keyKind, other);
      }
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
