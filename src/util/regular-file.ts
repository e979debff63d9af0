import { closeSync, constants, fstatSync, openSync, readSync, statSync } from 'node:fs';
import type { Stats } from 'node:fs';
import { UsageError } from './errors.js';

/** How a file that must be a small regular one is named in the one line that refuses it. */
export interface RegularFileUse {
  /** What the file is to the command: "the state file". */
  what: string;
  /** What the user can do instead: "give --state a file path". */
  hint: string;
  /** More than this is not what the command keeps there: refused rather than read whole. */
  maxBytes: number;
}

/**
 * The text of a file that must be a regular one, or undefined when there is none. A FIFO, a
 * character device (/dev/zero, /dev/urandom), a socket or a directory is refused by name before
 * it is read: reading one blocks the event loop (so even SIGTERM goes unheard) and, for a device,
 * grows without bound. It is checked twice — statSync before opening, then fstat on what was
 * opened (O_NONBLOCK, so opening a FIFO does not wait for a writer) — so a file swapped for a FIFO
 * in between is refused too. A file larger than `maxBytes` is refused, not read.
 */
export function readRegularFile(path: string, use: RegularFileUse): string | undefined {
  const opened = openChecked(path, use);
  if (!opened) return undefined;
  const { fd } = opened;
  try {
    // In chunks, and never past the cap: the file may have grown since it was stat'ed.
    const chunks: Buffer[] = [];
    let length = 0;
    for (;;) {
      const chunk = Buffer.alloc(64 * 1024);
      const n = readSync(fd, chunk, 0, chunk.length, null);
      if (n === 0) break;
      chunks.push(chunk.subarray(0, n));
      length += n;
      if (length > use.maxBytes) throw new UsageError(tooLarge(path, use));
    }
    return Buffer.concat(chunks, length).toString('utf8');
  } catch (err) {
    if (err instanceof UsageError) throw err;
    throw new UsageError(`cannot read ${use.what} ${path}: ${errorCode(err)}`);
  } finally {
    closeSync(fd);
  }
}

/** A regular file opened for reading, whatever its size: the caller reads it (a stream, say) and closes `fd`. */
export interface OpenedRegularFile {
  fd: number;
  /** Its size when it was opened; it may grow while it is read. */
  size: number;
}

/**
 * Open a file that must be a regular one, with the same two checks as readRegularFile (stat,
 * then fstat on what was opened), for a reader that streams it rather than reading it whole:
 * no size cap, and a missing file is refused too ("cannot read … ENOENT"), not undefined.
 */
export function openRegularFile(path: string, use: Omit<RegularFileUse, 'maxBytes'>): OpenedRegularFile {
  const opened = openChecked(path, { ...use, maxBytes: Number.POSITIVE_INFINITY });
  if (!opened) throw new UsageError(`cannot read ${use.what} ${path}: ENOENT`);
  return opened;
}

function openChecked(path: string, use: RegularFileUse): OpenedRegularFile | undefined {
  let stat: Stats;
  try {
    stat = statSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UsageError(`cannot read ${use.what} ${path}: ${errorCode(err)}`);
  }
  refuseIfNotRegular(path, stat, use);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UsageError(`cannot read ${use.what} ${path}: ${errorCode(err)}`);
  }
  try {
    const opened = fstatSync(fd);
    refuseIfNotRegular(path, opened, use);
    return { fd, size: opened.size };
  } catch (err) {
    closeSync(fd);
    if (err instanceof UsageError) throw err;
    throw new UsageError(`cannot read ${use.what} ${path}: ${errorCode(err)}`);
  }
}

/** Absent, or a regular file: anything else refused in one line, without opening it. */
export function checkRegularOrAbsent(path: string, use: RegularFileUse): void {
  let stat: Stats;
  try {
    stat = statSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new UsageError(`cannot read ${use.what} ${path}: ${errorCode(err)}`);
  }
  refuseIfNotRegular(path, stat, use);
}

function refuseIfNotRegular(path: string, stat: Stats, use: RegularFileUse): void {
  if (stat.isDirectory()) throw new UsageError(`${use.what} ${path} is a directory: ${use.hint}`);
  if (!stat.isFile()) throw new UsageError(`${use.what} ${path} is not a regular file (a device, FIFO or socket): ${use.hint}`);
  if (stat.size > use.maxBytes) throw new UsageError(tooLarge(path, use));
}

function tooLarge(path: string, use: RegularFileUse): string {
  const cap = use.maxBytes >= 1024 * 1024 ? `${Math.round(use.maxBytes / 1024 / 1024)} MiB` : `${use.maxBytes} bytes`;
  return `${use.what} ${path} is larger than ${cap}, more than it ever holds: ${use.hint}`;
}

function errorCode(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? String(err);
}
