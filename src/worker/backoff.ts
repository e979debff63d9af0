export interface BackoffOptions {
  /** Delay after the first failure. */
  baseMs: number;
  /** No delay grows beyond this. */
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 1_000, maxMs: 10 * 60_000 };

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
