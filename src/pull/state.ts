import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { UsageError } from '../util/errors.js';
import type { FeedPosition } from './feed.js';

/** What a state file holds: where the feed is, for one provider's account or hook. */
export interface PullState {
  version: 1;
  provider: 'stripe' | 'github';
  /** Whose events: "account test 3f2a…" or "repo acme/shop hook 7", and at which API. */
  source: string;
  position: FeedPosition;
  updatedAt: string;
}

/** Where pull keeps its state by default: under the project directory (the working directory). */
export const STATE_DIR = join('.hookdrill', 'pull');

/**
 * The default state file of one provider's account or hook: `.hookdrill/pull/<provider>-<host>-<who>.json`,
 * `who` being the label access gives it (a Stripe account by its mode and key fingerprint, never
 * the key; a GitHub hook by repository or organization and id).
 */
export function defaultStateFile(cwd: string, provider: 'stripe' | 'github', apiBase: string, label: string): string {
  const slug = (s: string) => s.replace(/[^A-Za-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '');
  return join(cwd, STATE_DIR, `${provider}-${slug(new URL(apiBase).host)}-${slug(label)}.json`);
}

/** The saved state, or undefined when there is none; a file that is not one is refused by name. */
export function readState(file: string, provider: 'stripe' | 'github', source: string): PullState | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new UsageError(`cannot read the state file ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  let state: PullState;
  try {
    state = JSON.parse(text) as PullState;
  } catch {
    throw new UsageError(`the state file ${file} is not JSON: move it away to start afresh (--since or --from-now)`);
  }
  if (state?.version !== 1 || typeof state.position !== 'object' || state.position === null)
    throw new UsageError(`the state file ${file} is not a hookdrill pull state: move it away, or give another --state`);
  if (state.provider !== provider)
    throw new UsageError(`the state file ${file} is ${state.provider}'s, not ${provider}'s: give another --state`);
  // Another account's or hook's cursor would skip, without a word, everything this one did before it.
  if (state.source !== source)
    throw new UsageError(`the state file ${file} keeps the cursor of ${state.source}, not of ${source}: give another --state`);
  return state;
}

/**
 * The state written whole or not at all: a temporary file, fsynced, renamed over the old one. A
 * crash at any moment leaves either the old cursor or the new, never half of one.
 */
export function writeState(file: string, state: PullState): void {
  const dir = dirname(file);
  mkdirSync(dir, { recursive: true });
  const tmp = join(dir, `.${basename(file)}.${process.pid}.tmp`);
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, `${JSON.stringify(state, null, 2)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}

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
