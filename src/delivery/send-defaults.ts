/** send's defaults: the one place they are written (run and --help both read them). */
export const SEND_DEFAULTS = {
  concurrency: 16,
  duplicates: 1,
  expect: '2xx',
} as const;
