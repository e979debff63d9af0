import { resolve } from 'node:path';
import { UsageError } from '../util/errors.js';
import type { GroupCommitOptions } from './batch.js';
import { InboxOpenError, InboxUnavailableError } from './types.js';
import type { Inbox } from './types.js';
import { displayPostgres, isPostgresTarget } from './postgres/target.js';
import { displayRedis, isRedisTarget } from './bullmq/target.js';
import { describeSqliteError } from './sqlite/errors.js';

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
  return isPostgresTarget(target) || isRedisTarget(target) ? target : resolve(target);
}

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
      poolSize: o.receiver ? 16 : 4,
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
  if (o.schema !== undefined) throw new UsageError('--schema is for a postgres:// inbox, not a file');
  const path = resolve(target);
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
