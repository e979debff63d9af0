/** inspect's defaults: the one place they are written (run and --help both read them). */
export const INSPECT_DEFAULTS = {
  /** Rows listed. */
  limit: 50,
} as const;
