import { existsSync } from 'node:fs';

/**
 * The Python that runs the test receivers. Debian's own when it is there: a pyenv shim in front of
 * `python3` costs ~250 ms a start (measured: 284 ms against 26 ms for `-c pass`), and check runs a
 * receiver's --stored command for every case, so the shim alone was most of the verdict tests' time.
 * The receivers use only the standard library, so any Python 3 judges the same.
 */
export const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
