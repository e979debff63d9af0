import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * The Python that runs the test receivers. Debian's own when it is there: a pyenv shim in front of
 * `python3` costs ~250 ms a start (measured: 284 ms against 26 ms for `-c pass`), and check runs a
 * receiver's --stored command for every case, so the shim alone was most of the verdict tests' time.
 * The receivers use only the standard library, but for Discord's Ed25519 (PyNaCl, as Discord's
 * docs verify it: Debian's python3-nacl).
 */
export const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

let nacl: string | false | undefined;
/**
 * undefined when the Python receiver can verify Discord's signatures; otherwise why not (the test
 * is skipped — a failure under HOOKDRILL_REQUIRE_TOOLS=1, as in CI).
 */
export function pynaclMissing(provider: string): string | undefined {
  if (provider !== 'discord') return undefined;
  if (nacl === undefined) {
    try {
      execFileSync(PYTHON, ['-c', 'import nacl.signing'], { stdio: 'ignore' });
      nacl = false;
    } catch {
      nacl = `${PYTHON} has no PyNaCl (apt-get install python3-nacl): the Python receiver cannot verify Discord's Ed25519`;
    }
  }
  if (nacl && process.env.HOOKDRILL_REQUIRE_TOOLS === '1') throw new Error(`${nacl} (HOOKDRILL_REQUIRE_TOOLS=1: required, not skipped)`);
  return nacl || undefined;
}
