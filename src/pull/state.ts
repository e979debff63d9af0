import { closeSync, fsyncSync, mkdirSync, openSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { UsageError } from '../util/errors.js';
import { checkRegularOrAbsent, readRegularFile } from '../util/regular-file.js';
import type { RegularFileUse } from '../util/regular-file.js';
import type { FeedPosition } from './feed.js';
import { parseStateShape } from './state-shape.js';
import type { SavedState } from './state-shape.js';

export type { SavedState } from './state-shape.js';

/** What a state file holds: where the feed is, for one provider's account or hook, under one filter. */
export interface PullState {
  version: 2;
  provider: 'stripe' | 'github';
  /** Whose events: "account test 3f2a…" or "repo acme/shop hook 7", and at which API. */
  source: string;
  /**
   * The --type filter the cursor was made under, sorted ([] = every type). A cursor moved past
   * events the filter left out: resumed under another filter, it would skip them without a word.
   */
  types: string[];
  position: FeedPosition;
  updatedAt: string;
}

/** Where pull keeps its state by default: under the project directory (the working directory). */
export const STATE_DIR = join('.hookdrill', 'pull');

/** A state file holds a cursor and the ids of the last few seconds: kilobytes. More is not one. */
const STATE_FILE: RegularFileUse = { what: 'the state file', hint: 'give --state a file path', maxBytes: 16 * 1024 * 1024 };

/**
 * The default state file of one provider's account or hook: `.hookdrill/pull/<provider>-<host>-<who>.json`,
 * `who` being the label access gives it (a Stripe account by its mode and key fingerprint, never
 * the key; a GitHub hook by repository or organization and id).
 */
export function defaultStateFile(cwd: string, provider: 'stripe' | 'github', apiBase: string, label: string): string {
  const slug = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '');
  return join(cwd, STATE_DIR, `${provider}-${slug(new URL(apiBase).host)}-${slug(label)}.json`);
}

/** The state file is absent or a regular file: a FIFO or a device is refused before anything touches it. */
export function checkStateFile(file: string): void {
  checkRegularOrAbsent(file, STATE_FILE);
}

/**
 * The saved state, or undefined when there is none. A file that is not one (not JSON, another
 * shape, a time that is not one), or another provider's, account's or hook's, is refused in one
 * line naming the file and what is wrong.
 */
export function readState(file: string, expect: { provider: 'stripe' | 'github'; source: string; nowMs: number }): SavedState | undefined {
  const text = readRegularFile(file, STATE_FILE);
  if (text === undefined) return undefined;
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new UsageError(`the state file ${file} is not JSON: move it away to start afresh (--since or --from-now)`);
  }
  const state = parseStateShape(json, Math.floor(expect.nowMs / 1000));
  if ('kind' in state) {
    throw new UsageError(
      state.kind === 'foreign'
        ? `the state file ${file} is not a hookdrill pull state (${state.detail}): move it away, or give another --state`
        : `the state file ${file} is damaged: ${state.detail}; move it away to start afresh (--since or --from-now), or give another --state`,
    );
  }
  if (state.provider !== expect.provider)
    throw new UsageError(`the state file ${file} is ${state.provider}'s, not ${expect.provider}'s: give another --state`);
  // Another account's or hook's cursor would skip, without a word, everything this one did before it.
  if (state.source !== expect.source)
    throw new UsageError(`the state file ${file} keeps the cursor of ${state.source}, not of ${expect.source}: give another --state`);
  return state;
}

/** --type as the state records it: each type once, sorted ([] = every type). */
export function filterOf(types: readonly string[] | undefined): string[] {
  return [...new Set(types ?? [])].sort();
}

/**
 * Whether the saved cursor may be resumed under this run's filter. A cursor made under another
 * --type has moved past the events that filter left out (or, made with none, past events of every
 * type): resuming would skip them, so a mismatch is refused, as another account's cursor is —
 * unless the run does not resume (--since, --from-now), and then it is said. Returns what to note.
 */
export function checkFilter(file: string, saved: SavedState, types: readonly string[], resuming: boolean): string | undefined {
  const wanted = filterOf(types);
  if (saved.types === undefined)
    return resuming
      ? `the state file ${file} was written before pull recorded its --type filter: resumed as made with ${filterName(wanted)}`
      : undefined;
  if (saved.types.join('\n') === wanted.join('\n')) return undefined;
  if (!resuming) return `the state file ${file} was made with ${filterName(saved.types)}: started afresh with ${filterName(wanted)}`;
  throw new UsageError(
    `the state file ${file} keeps the cursor of a pull of ${filterName(saved.types)}, not of ${filterName(wanted)}: resuming would skip the events one filter left out; give another --state, or start afresh with --reset-cursor and --since TIME or --from-now`,
  );
}

function filterName(types: readonly string[]): string {
  return types.length ? types.map((t) => `--type ${t}`).join(' ') : 'every type (no --type)';
}

/**
 * The state written whole or not at all: a temporary file, fsynced, renamed over the old one. A
 * crash at any moment leaves either the old cursor or the new, never half of one. A write that
 * fails (a full disk, a refused rename) is one line, and leaves no temporary file behind.
 */
export function writeState(file: string, state: PullState): void {
  const dir = dirname(file);
  const tmp = join(dir, `.${basename(file)}.${process.pid}.tmp`);
  try {
    mkdirSync(dir, { recursive: true });
    const fd = openSync(tmp, 'w');
    try {
      writeFileSync(fd, `${JSON.stringify(state, null, 2)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(tmp, file);
  } catch (err) {
    try {
      unlinkSync(tmp);
    } catch {
      // Never made, or already renamed: nothing to remove.
    }
    const code = (err as NodeJS.ErrnoException).code ?? String(err);
    throw new UsageError(
      `cannot write the state file ${file}: ${code}${WRITE_ERRORS[code] ? ` (${WRITE_ERRORS[code]})` : ''}; the cursor stays where it was last saved, so the next run may deliver the last events again (same ids)`,
    );
  }
}

const WRITE_ERRORS: Record<string, string> = {
  ENOSPC: 'the disk is full',
  EDQUOT: 'over the disk quota',
  EACCES: 'permission denied',
  EPERM: 'not permitted',
  EROFS: 'a read-only file system',
  EISDIR: 'a directory is in its place',
  ENOTDIR: 'a file is in the place of its folder',
};

/** Fail before reading any event when the state cannot be kept there. */
export function checkStateWritable(file: string): void {
  try {
    mkdirSync(dirname(file), { recursive: true });
    const probe = join(dirname(file), `.${basename(file)}.${process.pid}.probe`);
    closeSync(openSync(probe, 'w'));
    unlinkSync(probe);
  } catch (err) {
    throw new UsageError(
      `cannot keep pull's state in ${dirname(file)}: ${(err as NodeJS.ErrnoException).code ?? String(err)} (--state names another file)`,
    );
  }
}
