import { createPrivateKey, randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  fsyncSync,
  linkSync,
  lstatSync,
  mkdirSync,
  openSync,
  readSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import type { Stats } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { UsageError } from '../util/errors.js';
import type { KeyKind } from './keys.js';

/**
 * How hookdrill keeps its own private keys on disk, as OpenSSH keeps its own: a directory (0700)
 * and key files (0600) that are the user's alone, neither symlinks nor special files, made whole
 * and exactly once however many processes want one at the same moment. The keys directory may be
 * in a shared place (HOOKDRILL_KEYS_DIR=/tmp/…): a key planted there by someone else would sign
 * with a key they hold, and a symlink planted there could make hookdrill write its key where they
 * choose. Every refusal is one line naming the file, what is wrong and the fix; never the key.
 */

/** A PEM private key is under 4 KiB: anything much larger is no key of ours and is not read whole. */
const MAX_KEY_BYTES = 64 * 1024;

// Windows has neither flag (0 leaves them out), nor POSIX owners and modes (getuid is undefined).
const NOFOLLOW = constants.O_NOFOLLOW ?? 0;
const NONBLOCK = constants.O_NONBLOCK ?? 0;
const myUid = (): number | undefined => process.getuid?.();

const errno = (e: unknown): string | undefined => (e as NodeJS.ErrnoException | null)?.code;
const octal = (st: Stats): string => (st.mode & 0o777).toString(8).padStart(4, '0');

/** A system call's failure as one line (Node's message up to the path it repeats); a non-system error is a bug, left as it is. */
function cannot(action: string, path: string, e: unknown): Error {
  if (!errno(e)) return e instanceof Error ? e : new Error(String(e));
  const why = String((e as Error).message).split(',')[0];
  return new UsageError(`cannot ${action} ${path} (${why}): set HOOKDRILL_KEYS_DIR to a directory of your own`);
}

/** What a file that is not a regular one is, for the user who has to remove it. */
function kindOf(st: Stats): string {
  if (st.isDirectory()) return 'a directory';
  if (st.isFIFO()) return 'a FIFO';
  if (st.isSocket()) return 'a socket';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  return 'a special file';
}

/**
 * The directory and any missing parents, made 0700 one at a time. Not mkdirSync's recursive
 * option: under /proc a parent it cannot make reports ENOENT, and it tries again forever.
 */
function makeDirs(dir: string): void {
  const missing: string[] = [];
  for (let d = dir; !exists(d); d = dirname(d)) {
    missing.unshift(d);
    if (dirname(d) === d) break;
  }
  for (const d of missing) {
    try {
      mkdirSync(d, { mode: 0o700 });
    } catch (e) {
      // Another process made it between our look and our mkdir: as good as ours, checked below.
      if (errno(e) !== 'EEXIST') throw cannot('make the keys directory', d, e);
    }
  }
}

/** Whether anything (a dangling symlink too) is at the path. */
function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * The keys directory, made (0700) if missing, and refused unless it is a directory of the user's
 * own that no one else can write to: whoever can write to it can plant a key or a symlink there.
 */
export function ensureKeysDir(dir: string): void {
  makeDirs(dir);
  let st: Stats;
  try {
    st = lstatSync(dir);
  } catch (e) {
    throw cannot('read the keys directory', dir, e);
  }
  if (st.isSymbolicLink()) {
    throw new UsageError(
      `${dir} is a symlink: hookdrill keeps its keys only in a real directory; point HOOKDRILL_KEYS_DIR at the directory itself`,
    );
  }
  if (!st.isDirectory()) {
    throw new UsageError(`${dir} is not a directory: hookdrill keeps its keys in one; set HOOKDRILL_KEYS_DIR to a directory of your own`);
  }
  const uid = myUid();
  if (uid === undefined) return;
  if (st.uid !== uid) {
    throw new UsageError(
      `${dir} is owned by uid ${st.uid}, not you (uid ${uid}): hookdrill keeps its keys only in a directory of your own; set HOOKDRILL_KEYS_DIR to one`,
    );
  }
  if (st.mode & 0o022) {
    throw new UsageError(`${dir} is writable by group or others (mode ${octal(st)}): anyone could plant a key in it; chmod 700 ${dir}`);
  }
}

/** Refused unless a regular file of the user's own that only they can read, of a key's size. */
function checkKeyFile(file: string, st: Stats): void {
  const remedy = `remove it (rm ${file}) and hookdrill makes a new key`;
  if (!st.isFile()) throw new UsageError(`${file} is not a regular file (${kindOf(st)}): ${remedy}`);
  const uid = myUid();
  if (uid !== undefined && st.uid !== uid) {
    throw new UsageError(`${file} is owned by uid ${st.uid}, not you (uid ${uid}): hookdrill signs only with a key of your own; ${remedy}`);
  }
  if (uid !== undefined && st.mode & 0o077) {
    throw new UsageError(
      `${file} is readable or writable by group or others (mode ${octal(st)}): a private key must be yours alone; chmod 600 ${file}`,
    );
  }
  if (st.size > MAX_KEY_BYTES) throw new UsageError(`${file} is too large for a private key (over 64 KiB): ${remedy}`);
}

/** At most MAX_KEY_BYTES from the open file: a file that grew since fstat is still not read whole. */
function readBounded(fd: number, file: string): string {
  const buf = Buffer.alloc(MAX_KEY_BYTES + 1);
  let length = 0;
  for (let n = -1; n !== 0 && length < buf.length; length += n) n = readSync(fd, buf, length, buf.length - length, null);
  if (length > MAX_KEY_BYTES)
    throw new UsageError(`${file} is too large for a private key (over 64 KiB): remove it (rm ${file}) and hookdrill makes a new key`);
  return buf.subarray(0, length).toString('utf8');
}

/** Refused unless the text is a private key of the kind this file is named for. */
function checkKey(file: string, pem: string, kind: KeyKind): void {
  let ok = false;
  try {
    const key = createPrivateKey(pem);
    ok =
      kind === 'p256'
        ? key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1'
        : kind === 'rsa'
          ? key.asymmetricKeyType === 'rsa' && (key.asymmetricKeyDetails?.modulusLength ?? 0) >= 2048
          : key.asymmetricKeyType === 'ed25519';
  } catch {
    // Named below, in one line: never the file's text.
  }
  if (!ok) {
    const what = kind === 'p256' ? 'a P-256' : kind === 'rsa' ? 'an RSA (2048 bits or more)' : 'an Ed25519';
    throw new UsageError(`${file} does not hold ${what} private key: remove it (rm ${file}) and hookdrill makes a new one`);
  }
}

/**
 * The key a key file holds, or undefined if there is none. Opened without following a symlink and
 * without blocking (a FIFO would block forever), then judged by what was opened (fstat), so what is
 * checked is what is read.
 */
export function readKeyFile(file: string, kind: KeyKind): string | undefined {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | NOFOLLOW | NONBLOCK);
  } catch (e) {
    if (errno(e) === 'ENOENT') return undefined;
    // O_NOFOLLOW on a symlink: ELOOP (Linux), EMLINK (FreeBSD).
    if (errno(e) === 'ELOOP' || errno(e) === 'EMLINK') {
      throw new UsageError(
        `${file} is a symlink: hookdrill reads its key only from a regular file of your own; put the key file itself there, or remove it (rm ${file}) and hookdrill makes a new key`,
      );
    }
    throw cannot('read', file, e);
  }
  try {
    checkKeyFile(file, fstatSync(fd));
    const pem = readBounded(fd, file);
    checkKey(file, pem, kind);
    return pem;
  } finally {
    closeSync(fd);
  }
}

/**
 * Makes the key file holding `pem` unless another process made it first (then theirs stays, and the
 * caller reads it). Written whole to a temporary file no one can guess or plant (random name,
 * O_EXCL, O_NOFOLLOW, 0600) and hard-linked into place: link fails if the name is taken, so the
 * first key stays the only key, and a reader never sees a half-written file.
 */
export function createKeyFile(file: string, pem: string): void {
  const tmp = join(dirname(file), `.${basename(file)}.${randomBytes(8).toString('hex')}.tmp`);
  let fd: number;
  try {
    fd = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | NOFOLLOW, 0o600);
  } catch (e) {
    throw cannot('write a key in', dirname(file), e);
  }
  try {
    try {
      const bytes = Buffer.from(pem);
      for (let at = 0; at < bytes.length; ) at += writeSync(fd, bytes, at);
      // On disk before it has its name: a crash must not leave an empty key file behind.
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    try {
      linkSync(tmp, file);
    } catch (e) {
      if (errno(e) !== 'EEXIST') throw cannot('write', file, e);
    }
  } finally {
    try {
      unlinkSync(tmp);
    } catch {
      // Gone already; nothing else can be done about a temporary file.
    }
  }
}
