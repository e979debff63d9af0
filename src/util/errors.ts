/**
 * The few error kinds hookdrill distinguishes. The CLI maps each to one exit code in one place
 * (src/cli.ts): usage/input → 2, an expectation that did not hold → 1, anything else is a bug → 70.
 */

/** Bad flags, unreadable or invalid input: the user can fix it. Exit 2, one line, no stack. */
export class UsageError extends Error {
  override readonly name: string = 'UsageError';
}

/** The run worked, but what the user asserted did not hold (e.g. `--expect 2xx` and a 500). Exit 1. */
export class ExpectationError extends Error {
  override readonly name = 'ExpectationError';
}

export const EXIT = {
  ok: 0,
  expectationFailed: 1,
  usage: 2,
  bug: 70,
} as const;
