/** replay's defaults: the one place they are written (run and --help both read them). */
export const REPLAY_DEFAULTS = {
  concurrency: 8,
  /** Rows replayed at most, so a broad selector cannot flood the target by accident. */
  limit: 10_000,
} as const;
