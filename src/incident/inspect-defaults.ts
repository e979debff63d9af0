/** inspect's defaults: the one place they are written (run and --help both read them). */
export const INSPECT_DEFAULTS = {
  /** Rows listed. */
  limit: 50,
  /** Rows listed newest first: at 3 a.m. what just arrived is what is looked for. */
  order: 'newest',
} as const;
