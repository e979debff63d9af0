import { createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../util/errors.js';
import { createKeyFile, ensureKeysDir, readKeyFile } from './key-file.js';

/**
 * Keys for the providers that sign with a private key and are verified with the public one
 * (Discord's Ed25519, SendGrid's P-256). A sender needs the private key; a receiver is configured with the public key.
 * hookdrill makes its own pair once per provider (kept 0600 where HOOKDRILL_KEYS_DIR, else
 * ~/.config/hookdrill/keys, says; see key-file.ts for how it is kept) so the receiver's configuration survives runs, and takes the
 * user's own private key as the secret when given. A private key is never printed: only
 * publicKeyHex's answer is shown.
 */

/**
 * A key made once per secret and kept (at most 64, then all dropped): listen verifies every
 * request with one, send signs every attempt.
 */
export function cachedKey(map: Map<string, KeyObject>, secret: string, make: (s: string) => KeyObject): KeyObject {
  let key = map.get(secret);
  if (!key) {
    key = make(secret);
    if (map.size > 64) map.clear();
    map.set(secret, key);
  }
  return key;
}

/** Where hookdrill keeps its own key pairs. */
export function keysDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.HOOKDRILL_KEYS_DIR || join(env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'hookdrill', 'keys');
}

/** The DER prefix of an Ed25519 SubjectPublicKeyInfo: what precedes the 32 raw bytes. */
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
/** The DER prefix of an Ed25519 PKCS#8 private key: what precedes the 32-byte seed. */
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

/** The kinds of key pair the providers sign with: Discord's Ed25519, SendGrid's ECDSA over P-256, RSA (SNS's, 2048 bits as Amazon's signing certificates are; a JWT's RS256). */
export type KeyKind = 'ed25519' | 'p256' | 'rsa';

/** hookdrill's own private key for this provider (PEM), made on first use. */
export function ownPrivateKey(provider: string, kind: KeyKind = 'ed25519', env: NodeJS.ProcessEnv = process.env): string {
  const dir = keysDir(env);
  const file = join(dir, `${provider}-${kind}.pem`);
  ensureKeysDir(dir);
  const held = readKeyFile(file, kind);
  if (held !== undefined) return held;
  const { privateKey } =
    kind === 'p256'
      ? generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
      : kind === 'rsa'
        ? generateKeyPairSync('rsa', { modulusLength: 2048 })
        : generateKeyPairSync('ed25519');
  createKeyFile(file, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString());
  // What the file holds, not what this process made: another process may have made it first.
  const made = readKeyFile(file, kind);
  if (made === undefined) throw new UsageError(`${file} vanished just after it was made: run again`);
  return made;
}

/** A private key as given: PKCS#8 PEM, or the 32-byte seed in hex (64 characters), as Discord's examples hold one. */
export function signingKey(secret: string): KeyObject {
  const text = secret.trim();
  try {
    if (text.includes('-----BEGIN')) {
      const key = createPrivateKey(text);
      if (key.asymmetricKeyType === 'ed25519') return key;
    } else if (/^[0-9a-fA-F]{64}$/.test(text)) {
      return createPrivateKey({ key: Buffer.concat([PKCS8_PREFIX, Buffer.from(text, 'hex')]), format: 'der', type: 'pkcs8' });
    }
  } catch {
    // Named below, in one line: never the key itself.
  }
  throw new UsageError('the signing key must be an Ed25519 private key: a PKCS#8 PEM, or its 32-byte seed as 64 hex characters');
}

/** The public key a receiver holds: 64 hex characters (Discord's "public key"), or derived from a private key. */
export function verifyingKey(secret: string): KeyObject {
  const text = secret.trim();
  if (/^[0-9a-fA-F]{64}$/.test(text) && !text.includes('-----')) {
    // 64 hex characters are a public key to a receiver (as Discord shows it); a seed signs, below.
    return createPublicKey({ key: Buffer.concat([SPKI_PREFIX, Buffer.from(text, 'hex')]), format: 'der', type: 'spki' });
  }
  return createPublicKey(signingKey(text));
}

/** The public key of a private one, as a receiver is configured with it: 64 hex characters. */
export function publicKeyHex(secret: string): string {
  const der = createPublicKey(signingKey(secret)).export({ type: 'spki', format: 'der' });
  return der.subarray(SPKI_PREFIX.length).toString('hex');
}
