import { UsageError } from '../util/errors.js';

/** What `--expect` accepts: `2xx`, `4xx`, `401`, or a comma list such as `401,403`. */
export interface Expectation {
  text: string;
  matches(status: number): boolean;
}

export function parseExpectation(text: string): Expectation {
  const parts = text.split(',').map((p) => p.trim().toLowerCase());
  const tests: ((s: number) => boolean)[] = [];
  for (const part of parts) {
    const cls = /^([1-5])xx$/.exec(part);
    if (cls) {
      const hundred = Number(cls[1]) * 100;
      tests.push((s) => s >= hundred && s < hundred + 100);
    } else if (/^[1-5]\d\d$/.test(part)) {
      const code = Number(part);
      tests.push((s) => s === code);
    } else {
      throw new UsageError(`--expect ${text}: expected a status (401), a class (2xx) or a comma list (401,403)`);
    }
  }
  return { text: parts.join(','), matches: (s) => tests.some((t) => t(s)) };
}
