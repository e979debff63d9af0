/** The worker's defaults: the one place they are written (the library, listen and its --help read them here). */
export const WORKER_DEFAULTS = {
  /** Rows processed at once. */
  concurrency: 4,
  /** How long a claim holds a row; a worker that dies releases it when this runs out. */
  leaseMs: 30_000,
  /** Attempts before a row is buried as dead: with DEFAULT_BACKOFF, about an hour of failures. */
  maxAttempts: 14,
  /** How often an idle worker looks for due rows. */
  pollMs: 200,
} as const;
