/** replay's defaults: the one place they are written (run and --help both read them). */
export const REPLAY_DEFAULTS = {
  concurrency: 8,
  /** Rows replayed at most, so a broad selector cannot flood the target by accident. */
  limit: 10_000,
  /** Answers that say the request is wrong (signature, route, endpoint gone): never retried. */
  finalStatuses: [400, 401, 403, 404, 410],
} as const;
