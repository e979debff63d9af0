import { readFileSync } from 'node:fs';
import { UsageError } from '../util/errors.js';
import { getProvider } from './index.js';
import { keysDir } from './keys.js';

export interface KeysOptions {
  /** A provider that signs with a key pair (Discord). */
  provider: string;
  /** The user's own private key (PEM or 64 hex); else hookdrill's own, made on first use. */
  secrets?: readonly string[];
}

export interface KeysResult {
  command: 'keys';
  ok: true;
  provider: string;
  /** What the receiver is configured with (Discord: the application's "public key"). */
  publicKey: string;
  /** What the provider calls it: Discord's "application public key", SendGrid's "verification key". */
  publicKeyName: string;
  /** Whose private key signs: hookdrill's own (kept in `keysDir`) or the one given. */
  signer: 'own' | 'given';
  /** Where hookdrill's own keys are kept (never the key itself). */
  keysDir: string;
  /**
   * Where the scheme has the receiver fetch the public half (SNS's certificate URL): the host
   * hookdrill serves while send or check runs, the variable that names it, and the file that
   * holds the certificate, for a receiver to trust the host through.
   */
  served?: { host: string; hostVariable: string; trustFile: string };
}

/**
 * The public key a receiver of a key-pair provider is configured with: of hookdrill's own private
 * key (made once, kept 0600) or of the one given. The private key is never part of the result.
 */
export async function run(o: KeysOptions): Promise<KeysResult> {
  const provider = getProvider(o.provider);
  if (!provider.keyPair && provider.servedAt) {
    // A certificate scheme whose secret is no key (PayPal's webhook id): its certificate is hookdrill's own key's, always.
    const served = provider.servedAt();
    return {
      command: 'keys',
      ok: true,
      provider: provider.name,
      publicKey: readFileSync(served.trustFile, 'utf8'),
      publicKeyName: `${provider.title}'s signing certificate`,
      signer: 'own',
      keysDir: keysDir(),
      served,
    };
  }
  if (!provider.keyPair || !provider.publicKey || !provider.ownKey) {
    throw new UsageError(`${provider.name} signs with a shared secret, not a key pair: there is no public key to give a receiver`);
  }
  const given = o.secrets?.[0];
  const publicKey = provider.publicKey(given ?? provider.ownKey());
  return {
    command: 'keys',
    ok: true,
    provider: provider.name,
    publicKey,
    publicKeyName: `${provider.title}'s ${provider.publicKeyName ?? 'public key'}`,
    signer: given ? 'given' : 'own',
    keysDir: keysDir(),
    ...(provider.servedAt && !given ? { served: provider.servedAt() } : {}),
  };
}
