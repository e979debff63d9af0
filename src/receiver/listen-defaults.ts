/** listen's own defaults; the worker's and the receiver's live beside them (worker/defaults.ts, receiver/defaults.ts). */
export const LISTEN_DEFAULTS = {
  port: 3000,
  host: '127.0.0.1',
  inbox: 'hookdrill-inbox.db',
  /** How long the app may take per forward: one deadline for the whole exchange. */
  forwardTimeoutMs: 10_000,
  /**
   * Deliveries per transaction at most (group commit); 1 commits each on its own. Measured at 64
   * in flight from another process (npm run bench): ~3.5x the acks/s of one commit per delivery,
   * p99 ~3x lower.
   */
  commitBatch: 64,
  /** Without --forward-to: rows marked done at once (one claim, one commit for all of them). */
  markDoneConcurrency: 64,
  /** With --commit-batch above 1: how long a batch waits for more (0: the current event-loop turn). */
  commitWaitMs: 0,
} as const;
