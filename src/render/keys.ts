import chalk from 'chalk';
import type { KeysResult } from '../providers/keys-run.js';
import { escapeStrings } from '../util/terminal.js';

/** The public key on a line of its own (for `$(...)` and copying), then where it comes from. */
export function renderKeys(keys: KeysResult): string {
  const r = escapeStrings(keys);
  const whose =
    r.signer === 'own'
      ? `hookdrill's own ${r.provider} signing key (kept in ${r.keysDir}; its private half is never printed)`
      : 'the private key given';
  return [r.publicKey, chalk.dim(`the public key of ${whose}: configure your receiver with it, as ${r.publicKeyName}`), ''].join('\n');
}
