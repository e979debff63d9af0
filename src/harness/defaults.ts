/** A receiver started as a process (startReceiver, check --receiver): how long to wait for it. */
export const RECEIVER_PROCESS_DEFAULTS = {
  /** How long it may take to accept connections. */
  readyTimeoutMs: 10_000,
  /** After SIGTERM, how long before SIGKILL. */
  stopGraceMs: 5_000,
} as const;
