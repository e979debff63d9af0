/** The limits every request to a provider's API keeps (reconcile and pull share them). */
export const REMOTE_DEFAULTS = {
  /** One request, headers and body. */
  timeoutMs: 30_000,
  /** A page of 100 Stripe events is a few MB at most; a GitHub delivery's payload at most 25 MB. */
  maxBytes: 64 * 1024 * 1024,
  /** Pages of one listing: 1,000,000 events at 100 a page, more than either provider keeps for most accounts. */
  maxPages: 10_000,
  /** Tries again for an API that is down, outside --follow. */
  transientRetries: 2,
} as const;
