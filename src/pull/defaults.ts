/**
 * pull's defaults. Stripe allows 100 read requests a second in live mode and 25 in test mode
 * (https://docs.stripe.com/rate-limits): one poll every 2 s is 1,800 an hour, nothing against that.
 * GitHub allows a token 5,000 requests an hour (https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api):
 * one poll every 10 s is 360 an hour, 7.2% of it, plus one request per new delivery (its payload).
 */
export const PULL_DEFAULTS = {
  intervalMs: { stripe: 2_000, github: 10_000 },
  concurrency: 1,
  /** Events read ahead of the receiver at most (GitHub fetches each one's payload just before). */
  batch: 20,
  /** Reads in a row that brought nothing but said "more" before pull waits an interval anyway. */
  emptyReads: 20,
} as const;
