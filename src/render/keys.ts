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
  if (r.served)
    // A certificate is many lines: its file on a line of its own, and how a receiver in test mode uses it.
    return [
      r.served.trustFile,
      chalk.dim(
        `the certificate of ${whose}, served as ${r.publicKeyName} on ${r.served.host} while send or check runs: in test mode your receiver pins that host (${r.served.hostVariable}) and trusts this file (NODE_EXTRA_CA_CERTS for Node, SSL_CERT_FILE for Python)`,
      ),
      '',
    ].join('\n');
  return [r.publicKey, chalk.dim(`the public key of ${whose}: configure your receiver with it, as ${r.publicKeyName}`), ''].join('\n');
}
