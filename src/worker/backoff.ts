export interface BackoffOptions {
  /** Delay after the first failure. */
  baseMs: number;
  /** No delay grows beyond this. */
  maxMs: number;
}

/**
 * 5 s doubling to 10 minutes: with the default 14 attempts (WORKER_DEFAULTS) a row is dead only
 * after 35 to 71 minutes of failures, which outlives a common downstream outage — the
 * old 1 s over 8 attempts buried every row two minutes into one.
 */
export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 5_000, maxMs: 10 * 60_000 };

/**
 * How long a row that fails every attempt takes to die: the sum of the waits between its
 * attempts, shortest (every jitter at its half) and longest.
 */
export function deadAfter(maxAttempts: number, options: BackoffOptions = DEFAULT_BACKOFF): { minMs: number; maxMs: number } {
  let full = 0;
  for (let attempt = 1; attempt < maxAttempts; attempt++) full += Math.min(options.maxMs, options.baseMs * 2 ** Math.min(attempt - 1, 40));
  return { minMs: Math.round(full / 2), maxMs: full };
}

/**
 * Exponential backoff with "equal jitter": half the exponential delay is kept, half is random.
 * The kept half guarantees a failing downstream gets room to recover; the random half spreads out
 * a burst of rows that failed together so they do not retry in lockstep. Pure: pass `random` to
 * make it deterministic.
 */
export function backoffDelay(attempt: number, options: BackoffOptions = DEFAULT_BACKOFF, random: () => number = Math.random): number {
  const exponent = Math.max(0, attempt - 1);
  // Cap the exponent before Math.pow so a large attempt count cannot overflow to Infinity.
  const full = Math.min(options.maxMs, options.baseMs * 2 ** Math.min(exponent, 40));
  return Math.round(full / 2 + random() * (full / 2));
}
