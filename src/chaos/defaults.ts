/** chaos's defaults: the one place they are written (run and --help both read them). */
export const CHAOS_DEFAULTS = {
  events: 20,
  concurrency: 8,
  /**
   * Each round is one kill right after an acknowledgement: one chance to catch a receiver that
   * answers before it stores. Against one that stores ~2 ms after its 200 (the Python test
   * receiver's --flaw ack-first) one round misses about one run in ten; three catch it in nearly
   * every run, for about 1.5 s more per round (docs/commands/chaos.md has the measurements).
   */
  rounds: 3,
  killAfter: 1,
  killPoint: 'after-ack',
  signal: 'KILL',
  readyTimeoutMs: 10_000,
  settleMs: 1_000,
  /** With --inbox and --processed: the longest wait for rows a killed worker still leases. */
  settleMaxMs: 120_000,
  /** The provider's schedule, compressed: Stripe's first retry (1 min) comes after 600 ms. */
  timeScale: 0.01,
  /**
   * After each restart, this many of the last round's acknowledged deliveries are sent again, as
   * providers re-send what they never heard answered: each must get 2xx and be stored once.
   */
  duplicates: 5,
} as const;
