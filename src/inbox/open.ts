import { resolve } from 'node:path';
import { UsageError } from '../util/errors.js';
import type { GroupCommitOptions } from './batch.js';
import { InboxOpenError, InboxUnavailableError } from './types.js';
import type { Inbox } from './types.js';
import { displayPostgres, isPostgresTarget } from './postgres/target.js';
import { displayRedis, isRedisTarget } from './bullmq/target.js';
import { describeSqliteError } from './sqlite/errors.js';
import { checkRegularOrAbsent } from '../util/regular-file.js';

export { isPostgresTarget } from './postgres/target.js';
export { isRedisTarget } from './bullmq/target.js';

export interface OpenInboxOptions {
  /** Create the inbox (file, or schema) when it does not exist. Default true. */
  create?: boolean;
  /** Open without writing anything: for inspect. */
  readonly?: boolean;
  /** Postgres: the schema (overrides `?schema=` in the URL; default `hookdrill`). */
  schema?: string;
  /**
   * For a receiver: group commit of puts, and "stuck" in health() after this long. On SQLite this
   * also moves every write to a writer thread, so the event loop never waits on the disk.
   */
  receiver?: { groupCommit?: GroupCommitOptions; stuckAfterMs?: number; onWarning?: (text: string) => void };
}

/** A target as given on the command line: a file made absolute, a URL as it is. */
export function resolveTarget(target: string): string {
  if (isPostgresTarget(target) || isRedisTarget(target)) return target;
  refuseOtherScheme(target);
  return resolve(target);
}

/**
 * `mysql://…`, `sqlite://…`, `file://…`: a URL of a store hookdrill does not speak would otherwise
 * be taken for a relative file path (a folder named `mysql:`), and an inbox silently made there.
 */
function refuseOtherScheme(target: string): void {
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(target)?.[1];
  if (scheme !== undefined) throw new UsageError(`${scheme}:// is not an inbox hookdrill speaks: a file path, postgres://…, or redis://…`);
}

/** What is said about a SQLite inbox path that is not a regular file. */
const SQLITE_FILE = {
  what: 'the inbox',
  hint: 'give --inbox a file path, postgres://…, or redis://…',
  // An inbox may be any size: the cap is for files read whole, which an inbox never is.
  maxBytes: Number.MAX_SAFE_INTEGER,
};

/** How a target is shown: a file as its absolute path, a URL without its password. */
export function displayTarget(target: string): string {
  if (isPostgresTarget(target)) return displayPostgres(target);
  if (isRedisTarget(target)) return displayRedis(target);
  return resolve(target);
}

/**
 * Open an inbox by its target: `postgres://…` (or `postgresql://…`) is the Postgres backend,
 * `redis://host:port/QUEUE` (or `rediss://…`) a BullMQ queue, anything else a SQLite file. Each
 * backend is imported only when used, so `--help` loads no driver.
 */
export async function openInbox(target: string, o: OpenInboxOptions = {}): Promise<Inbox> {
  if (isPostgresTarget(target)) {
    const { openPostgresInbox } = await import('./postgres/index.js');
    return openPostgresInbox(target, {
      ...(o.create !== undefined ? { create: o.create } : {}),
      ...(o.readonly !== undefined ? { readonly: o.readonly } : {}),
      ...(o.schema !== undefined ? { schema: o.schema } : {}),
      ...(o.receiver?.groupCommit ? { groupCommit: o.receiver.groupCommit } : {}),
      ...(o.receiver?.stuckAfterMs !== undefined ? { stuckAfterMs: o.receiver.stuckAfterMs } : {}),
      // A look (inspect, the inspector) asks one query at a time: on the database the receiver writes to,
      // it takes one core at most (the overview's five queries at once took both of a small machine).
      poolSize: o.receiver ? 16 : o.readonly ? 1 : 4,
    });
  }
  if (isRedisTarget(target)) {
    if (o.schema !== undefined)
      throw new UsageError('--schema is for a postgres:// inbox, not a redis:// one (the queue is named in the URL)');
    const { openBullmqInbox } = await import('./bullmq/index.js');
    return openBullmqInbox(target, {
      ...(o.create !== undefined ? { create: o.create } : {}),
      ...(o.readonly !== undefined ? { readonly: o.readonly } : {}),
      ...(o.receiver?.groupCommit ? { groupCommit: o.receiver.groupCommit } : {}),
      ...(o.receiver?.stuckAfterMs !== undefined ? { stuckAfterMs: o.receiver.stuckAfterMs } : {}),
      ...(o.receiver?.onWarning ? { onWarning: o.receiver.onWarning } : {}),
    });
  }
  refuseOtherScheme(target);
  if (o.schema !== undefined) throw new UsageError('--schema is for a postgres:// inbox, not a file');
  const path = resolve(target);
  // SQLite opening /dev/zero or a FIFO blocks the event loop (inspect hangs, deaf even to SIGTERM):
  // an existing path must be a regular file, refused by name before SQLite touches it.
  checkRegularOrAbsent(path, SQLITE_FILE);
  if (o.receiver) {
    const { ThreadedSqliteInbox } = await import('./sqlite/threaded.js');
    return ThreadedSqliteInbox.open(path, {
      ...(o.receiver.groupCommit ? { groupCommit: o.receiver.groupCommit } : {}),
      ...(o.receiver.stuckAfterMs !== undefined ? { stuckAfterMs: o.receiver.stuckAfterMs } : {}),
    });
  }
  const { openSqliteInbox } = await import('./sqlite/index.js');
  return openSqliteInbox(path, { ...(o.create !== undefined ? { create: o.create } : {}), readonly: o.readonly ?? false });
}

/**
 * Open an existing inbox for inspect / requeue / replay: it must exist (these never create one),
 * and every failure to open is one line and exit 2.
 */
export async function openInboxForCommand(target: string | undefined, options: { readonly: boolean; schema?: string }): Promise<Inbox> {
  if (!target) throw new UsageError('--inbox FILE|postgres://…|redis://… is required');
  return openInbox(target, { create: false, ...options });
}

/**
 * A store error during a command, as one line for the user: locked by another writer, read-only,
 * a full disk, Postgres gone. Anything else is a bug and stays as it is.
 */
export function asInboxError(err: unknown, target: string): unknown {
  if (err instanceof InboxOpenError) return err;
  if (err instanceof InboxUnavailableError) return new UsageError(err.message);
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && code.startsWith('SQLITE_'))
    return new UsageError(`inbox ${displayTarget(target)}: ${describeSqliteError(err)}`);
  return err;
}
