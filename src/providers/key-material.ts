import { UsageError } from '../util/errors.js';
import type { Provider } from './types.js';

/** What a command does with a secret: signs with it (send, check, chaos) or verifies with it (listen, verify). */
export type KeyRole = 'sign' | 'verify';

/**
 * The one gate every secret and key passes before any provider signs or verifies with it, built-in
 * or declared: blank is never a key (an HMAC keyed with nothing is one anyone can compute, so a
 * receiver holding it accepts forgeries: `--secret "$UNSET_VARIABLE"`), then the provider's own
 * shape — a key-pair provider's receiver holds a public key, which must be one, or it would start
 * and refuse every delivery. Invariants live here, not in each provider, so the next provider
 * cannot arrive without them (test/hostile-keys.test.ts runs over every provider).
 */
export function checkKeyMaterial(provider: Provider, secret: string, role: KeyRole): void {
  const noun = provider.keyPair === undefined ? 'secret' : role === 'verify' ? (provider.publicKeyName ?? 'public key') : 'private key';
  if (secret.trim() === '') {
    throw new UsageError(
      `${provider.name}: the ${noun} is ${secret === '' ? 'empty' : 'only whitespace'} (was the variable that holds it unset?)`,
    );
  }
  if (role === 'verify' && provider.keyPair) provider.checkVerifyingKey?.(secret);
  else provider.checkSecret(secret);
}

/** Every secret of a list through checkKeyMaterial; at least one. */
export function checkKeysMaterial(provider: Provider, secrets: readonly string[], role: KeyRole): void {
  if (secrets.length === 0) throw new UsageError(`${provider.name}: no secret to ${role} with`);
  for (const s of secrets) checkKeyMaterial(provider, s, role);
}
