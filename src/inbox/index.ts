export * from './types.js';
export { openInbox, openInboxForCommand, isPostgresTarget, displayTarget, resolveTarget } from './open.js';
export type { OpenInboxOptions } from './open.js';
