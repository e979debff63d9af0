import { UsageError } from '../errors.js';
import { describeSqliteError, openSqliteInbox } from './sqlite/index.js';
import type { SqliteInbox } from './sqlite/index.js';

/**
 * Open an existing inbox for inspect / requeue / replay: it must exist (these never create one),
 * and every failure to open is one line and exit 2.
 */
export async function openInboxForCommand(path: string | undefined, options: { readonly: boolean }): Promise<SqliteInbox> {
  if (!path) throw new UsageError('--inbox FILE is required');
  return openSqliteInbox(path, { create: false, readonly: options.readonly });
}

/**
 * A store error during a command, as one line for the user: locked by another writer, read-only,
 * a full disk, an I/O error. Anything else is a bug and stays as it is.
 */
export function asInboxError(err: unknown, path: string): unknown {
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && code.startsWith('SQLITE_')) return new UsageError(`inbox ${path}: ${describeSqliteError(err)}`);
  return err;
}
