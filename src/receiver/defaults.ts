import { STORED_BODY_MAX_BYTES } from '../inbox/types.js';

/** The reference receiver's defaults (no dependencies: `--help` reads them without loading the receiver). */
export const RECEIVER_DEFAULTS = {
  /** Bodies larger than this are refused with 413 (the limit every door to the inbox keeps). */
  maxBytes: STORED_BODY_MAX_BYTES,
  /**
   * Body bytes held across all requests at once: four bodies at the 32 MiB limit, or thousands of
   * ordinary ones. A flood of forged bodies pins at most this; past it, 503 with Retry-After.
   */
  maxInFlightBytes: 4 * STORED_BODY_MAX_BYTES,
  /** How old, or how far ahead, a signed timestamp may be: every provider's own 5 minutes. */
  toleranceSec: 300,
  /**
   * A delivery whose store has not committed within this gets 503, so that the sender hears
   * "try again" before its own timeout (Slack's 3 s is the shortest) rather than a timeout it may
   * count as a failure. A late commit is harmless: stored, unacknowledged, a duplicate on retry.
   */
  storeDeadlineMs: 2_000,
} as const;
