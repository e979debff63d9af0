/** check's defaults: the one place they are written (run and --help both read them). */
export const CHECK_DEFAULTS = {
  /** A receiver that hangs costs each case at most this long (Stripe's own timeout is 20 s). */
  timeoutMs: 5_000,
} as const;
