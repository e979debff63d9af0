import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * The Python that runs the test receivers. Debian's own when it is there: a pyenv shim in front of
 * `python3` costs ~250 ms a start (measured: 284 ms against 26 ms for `-c pass`), and check runs a
 * receiver's --stored command for every case, so the shim alone was most of the verdict tests' time.
 * The receivers use only the standard library, but for Discord's Ed25519 (PyNaCl, as Discord's
 * docs verify it: Debian's python3-nacl) and SendGrid's ECDSA (Debian's python3-cryptography).
 */
export const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

/** The Debian package each provider's Python receiver needs beyond the standard library, and the module it imports. */
const NEEDS: Record<string, [module: string, pkg: string, why: string]> = {
  discord: ['nacl.signing', 'python3-nacl', "Discord's Ed25519"],
  sendgrid: ['cryptography', 'python3-cryptography', "SendGrid's ECDSA"],
  sns: ['cryptography', 'python3-cryptography', "SNS's RSA over named fields"],
};
const found = new Map<string, string | false>();

/**
 * undefined when the Python receiver can verify this provider's signatures; otherwise why not (the
 * test is skipped — a failure under HOOKDRILL_REQUIRE_TOOLS=1, as in CI).
 */
export function pythonLibMissing(provider: string): string | undefined {
  const need = NEEDS[provider];
  if (!need) return undefined;
  const [module, pkg, why] = need;
  let missing = found.get(module);
  if (missing === undefined) {
    try {
      execFileSync(PYTHON, ['-c', `import ${module}`], { stdio: 'ignore' });
      missing = false;
    } catch {
      missing = `${PYTHON} has no ${module} (apt-get install ${pkg}): the Python receiver cannot verify ${why}`;
    }
    found.set(module, missing);
  }
  if (missing && process.env.HOOKDRILL_REQUIRE_TOOLS === '1')
    throw new Error(`${missing} (HOOKDRILL_REQUIRE_TOOLS=1: required, not skipped)`);
  return missing || undefined;
}
