// No driver import: the commands' error path (inbox/open.ts) reads this without loading SQLite.

/** SQLite's errors in words a person can act on. */
export function describeSqliteError(err: unknown): string {
  const code = (err as { code?: string }).code ?? '';
  const message = (err as Error).message ?? String(err);
  if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return 'it is locked by another process (waited 5 s); nothing was changed';
  if (code === 'SQLITE_FULL') return 'the disk holding it is full';
  if (code === 'SQLITE_READONLY' || code.startsWith('SQLITE_READONLY')) return 'it cannot be written (read-only file or file system)';
  if (code.startsWith('SQLITE_IOERR')) return `disk I/O error (${code}); is it a regular file on a working disk?`;
  if (code === 'SQLITE_CANTOPEN') return 'it cannot be opened (a missing directory, or no permission)';
  if (code === 'SQLITE_CORRUPT' || code === 'SQLITE_NOTADB') return 'it is damaged or not a SQLite database';
  return message;
}
