/** check's defaults: the one place they are written (run and --help both read them). */
export const CHECK_DEFAULTS = {
  /**
   * A request that must be refused waits at most this long (Stripe's own timeout is 20 s; no
   * provider sends a forgery, so its timeout is not the provider's rule to keep).
   */
  refusalTimeoutMs: 5_000,
} as const;
