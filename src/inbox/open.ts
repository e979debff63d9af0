import { UsageError } from '../errors.js';
import { openSqliteInbox } from './sqlite/index.js';
import type { SqliteInbox } from './sqlite/index.js';

/**
 * Open an existing inbox for inspect / requeue / replay: it must exist (these never create one),
 * and every failure to open is one line and exit 2.
 */
export async function openInboxForCommand(path: string | undefined, options: { readonly: boolean }): Promise<SqliteInbox> {
  if (!path) throw new UsageError('--inbox FILE is required');
  return openSqliteInbox(path, { create: false, readonly: options.readonly });
}

/** SQLite's "busy" after the busy timeout, as a user-facing error: another writer holds the lock. */
export function asLockError(err: unknown, path: string): unknown {
  const code = (err as { code?: string }).code;
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') {
    return new UsageError(`inbox ${path} is locked by another process (waited 5 s); nothing was changed`);
  }
  return err;
}
