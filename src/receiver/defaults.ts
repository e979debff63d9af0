/** The reference receiver's defaults (no dependencies: `--help` reads them without loading the receiver). */
export const RECEIVER_DEFAULTS = {
  /** Bodies larger than this are refused with 413. */
  maxBytes: 5 * 1024 * 1024,
  /** How old, or how far ahead, a signed timestamp may be: every provider's own 5 minutes. */
  toleranceSec: 300,
} as const;
