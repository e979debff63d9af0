import { randomBytes } from 'node:crypto';
import { linkSync, openSync, closeSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { UsageError } from '../util/errors.js';
import { readRegularFile } from '../util/regular-file.js';
import type { RegularFileUse } from '../util/regular-file.js';

/** A state file held by this run: no other pull resumes from it (nor writes it) until release(). */
export interface StateLock {
  /** `<state file>.lock`. */
  readonly file: string;
  release(): void;
}

/** Who holds a lock: written whole into the lock file. `token` tells two holders with one pid apart. */
interface Holder {
  pid: number;
  host: string;
  since: string;
  token: string;
}

/** The lock files this process holds: a second run in this process is refused like another process. */
const held = new Set<string>();

const LOCK_FILE: RegularFileUse = { what: 'the lock file', hint: 'remove it if no pull is running', maxBytes: 4096 };

/**
 * Take the lock of a state file, or refuse in one line naming the pid that holds it.
 *
 * Why this scheme: two pulls on one state file each deliver the same backlog and overwrite each
 * other's cursor. Node has no flock(), and a lock held by a kernel object would not tell the user
 * who holds it, so the lock is a file beside the state holding the holder's pid (and host):
 * - It is made whole, then hard-linked into place: link() fails with EEXIST when the lock exists
 *   (atomic, as O_EXCL is) and, unlike an O_EXCL open followed by a write, no other pull ever sees
 *   it empty, half-written, and takes it for a dead one's. Where links are not supported (FAT, some
 *   network shares) an O_EXCL open is the fallback.
 * - A lock whose pid is dead (a pull SIGKILLed, a machine that lost power) is taken over, not left
 *   blocking for ever: process.kill(pid, 0) tells a live pid (or EPERM: another user's) from a
 *   dead one (ESRCH). Its own pid in a lock this process does not hold is a previous process's
 *   (a container restarted gets the same pid). On another host the pid cannot be checked: it is
 *   refused, naming the host, and the line says how to remove it.
 * - A takeover is compare-and-remove: the stale lock is renamed aside (atomic), and removed only
 *   if what was moved is still the dead holder's; if another pull took it over meanwhile, its lock
 *   is linked back. Two pulls finding one stale lock at once: one wins, the other is refused.
 * - A pid reused by an unrelated process looks alive: the line names the pid and the lock file,
 *   so the user can check it and remove the file.
 */
export function lockState(stateFile: string): StateLock {
  const file = `${stateFile}.lock`;
  const key = resolve(file);
  const me: Holder = { pid: process.pid, host: hostname(), since: new Date().toISOString(), token: randomBytes(8).toString('hex') };
  const text = `${JSON.stringify(me)}\n`;
  if (held.has(key)) throw inUse(stateFile, file, me);
  for (let attempt = 0; attempt < 5; attempt++) {
    if (create(file, text)) {
      held.add(key);
      const release = () => {
        process.off('exit', release);
        held.delete(key);
        // Only our own lock: one taken over after this process was thought dead is another's now.
        if (readLock(file) === text) unlinkQuietly(file);
      };
      // A second Ctrl-C ends the process at once (process.exit): the lock goes with it.
      process.on('exit', release);
      return { file, release };
    }
    const found = readLock(file);
    if (found === undefined) continue; // released in between: try again
    const holder = parseHolder(found);
    if (!holder)
      throw new UsageError(`the lock file ${file} does not say which pull holds it: remove it if no pull is running on ${stateFile}`);
    if (isAlive(holder, key)) throw inUse(stateFile, file, holder);
    takeOver(file, found);
  }
  throw new UsageError(`the lock file ${file} keeps changing hands: other pulls are starting on ${stateFile}; give another --state`);
}

function inUse(stateFile: string, file: string, holder: Holder): UsageError {
  const where = holder.host === hostname() ? '' : ` on host ${holder.host}`;
  return new UsageError(
    `the state file ${stateFile} is in use by another pull (pid ${holder.pid}${where}, since ${holder.since}): wait for it to end, or give another --state; if no pull is running, remove ${file}`,
  );
}

/** The lock made whole beside it, then linked into place; false when a lock is there already. */
function create(file: string, text: string): boolean {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    writeFileSync(tmp, text, { flag: 'wx' });
    linkSync(tmp, file);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP' || code === 'ENOSYS') return createExclusive(file, text);
    throw new UsageError(`cannot lock the state file beside it (${file}): ${code ?? String(err)} (--state names another file)`);
  } finally {
    unlinkQuietly(tmp);
  }
}

/** No hard links here: an O_EXCL open, then the write (a pull reading it empty meanwhile refuses it, never takes it over). */
function createExclusive(file: string, text: string): boolean {
  let fd: number;
  try {
    fd = openSync(file, 'wx');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    throw new UsageError(`cannot lock the state file beside it (${file}): ${code ?? String(err)} (--state names another file)`);
  }
  try {
    writeFileSync(fd, text);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** The stale lock removed if it is still the one read; another pull's fresh lock, moved by mistake, put back. */
function takeOver(file: string, stale: string): void {
  const aside = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.stale`;
  try {
    renameSync(file, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return; // another pull removed it first
    throw new UsageError(`cannot take over the stale lock ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  if (readLock(aside) !== stale) {
    try {
      linkSync(aside, file);
    } catch {
      // A third pull took the lock meanwhile: it holds it now.
    }
  }
  unlinkQuietly(aside);
}

function isAlive(holder: Holder, key: string): boolean {
  if (holder.host !== hostname()) return true; // its pid means nothing here: never taken over
  if (holder.pid === process.pid) return held.has(key);
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readLock(file: string): string | undefined {
  return readRegularFile(file, LOCK_FILE);
}

function parseHolder(text: string): Holder | undefined {
  try {
    const h = JSON.parse(text) as Partial<Holder>;
    if (typeof h.pid === 'number' && Number.isSafeInteger(h.pid) && h.pid > 0 && typeof h.host === 'string' && typeof h.since === 'string')
      return { pid: h.pid, host: h.host, since: h.since, token: String(h.token) };
  } catch {
    // Not JSON: not a lock this code wrote.
  }
  return undefined;
}

function unlinkQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // Already gone.
  }
}
