/** listen's own defaults; the worker's and the receiver's live beside them (worker/defaults.ts, receiver/defaults.ts). */
export const LISTEN_DEFAULTS = {
  port: 3000,
  host: '127.0.0.1',
  inbox: 'hookdrill-inbox.db',
  /** How long the app may take per forward: one deadline for the whole exchange. */
  forwardTimeoutMs: 10_000,
} as const;
