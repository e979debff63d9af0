export * from './types.js';
export { openSqliteInbox, SqliteInbox, InboxOpenError } from './sqlite/index.js';
export type { SqliteOpenOptions } from './sqlite/index.js';
