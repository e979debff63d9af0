/** send's defaults: the one place they are written (run and --help both read them). */
export const SEND_DEFAULTS = {
  concurrency: 16,
  duplicates: 1,
  expect: '2xx',
  /**
   * Answers that refuse the request itself (nearly always a wrong secret or provider): the delivery
   * ends there, with what to check, instead of following the provider's schedule — Stripe's would
   * retry a mistyped secret for three days. `--retry-refused` keeps the schedule.
   */
  refusedStatuses: [400, 401, 403],
} as const;
