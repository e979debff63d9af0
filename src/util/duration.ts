import { UsageError } from './errors.js';

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
};

/**
 * Parse a human duration: `250ms`, `3s`, `1.5m`, `2h`, `3d`. On the command line a bare number is
 * seconds, because every provider documents its timeouts and retry intervals in seconds or larger.
 * From the library a number is milliseconds, as everywhere in JavaScript: `{ timeout: 500 }` is
 * half a second — one rule for every duration option, whatever its name.
 */
export function parseDuration(text: string | number, what: string): number {
  if (typeof text === 'number') {
    if (!Number.isFinite(text) || text < 0) throw new UsageError(`${what}: ${text} is not a duration in milliseconds (0 or more)`);
    return text;
  }
  if (typeof text !== 'string')
    throw new UsageError(`${what}: expected milliseconds (a number) or a duration string ('3s'), not ${typeof text}`);
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!match) {
    throw new UsageError(`${what}: "${text}" is not a duration (examples: 500ms, 3s, 1m, 2h)`);
  }
  const value = Number(match[1]);
  const unit = match[2] ?? 's';
  // Any length: waits longer than Node's timer limit are made in steps (wait.ts), and a look back
  // (--since 30d) is no wait at all.
  return value * (UNIT_MS[unit] as number);
}

/** The widest window a signed timestamp is given (a declaration's tolerance, listen --tolerance). */
export const MAX_TOLERANCE_MS = 86_400_000;

/**
 * Why a signed timestamp's tolerance cannot be meant, or undefined. Under a second refuses every
 * request; a window of years is no replay protection at all, which is all a signed timestamp is for.
 */
export function toleranceProblem(ms: number): string | undefined {
  if (ms < 1_000) return 'under 1s: every signed timestamp would be refused';
  if (ms > MAX_TOLERANCE_MS) return 'over 1d: a captured delivery could be replayed for that long';
  return undefined;
}

/**
 * Format milliseconds for people: 30ms, 2.5s, 5m, 1h4m, 1d10h. At most two units: a retry
 * schedule reads at a glance, and the exact figures are in --json.
 */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.round(ms)}ms`;
  if (ms < 60_000) return `${trim(ms / 1_000)}s`;
  const units: [string, number][] = [
    ['d', 86_400_000],
    ['h', 3_600_000],
    ['m', 60_000],
    ['s', 1_000],
  ];
  let rest = Math.round(ms / 1_000) * 1_000;
  const parts: string[] = [];
  for (const [name, size] of units) {
    if (parts.length === 2) break;
    const n = Math.floor(rest / size);
    if (n > 0 || parts.length > 0) {
      if (n > 0) parts.push(`${n}${name}`);
      else parts.push('');
      rest -= n * size;
    }
  }
  return parts.filter(Boolean).join('');
}

function trim(n: number): string {
  return Number.isInteger(n) ? String(n) : n.toFixed(1).replace(/\.0$/, '');
}

/**
 * A retry schedule in a line: a run of equal delays as one ("1h ×72", Square's hourly tail), and
 * a long schedule (Paddle's 60) as its first six, its last and the count — not 60 durations.
 */
export function formatDelays(delaysMs: readonly number[]): string {
  const runs: string[] = [];
  for (let i = 0; i < delaysMs.length; ) {
    let j = i;
    while (j + 1 < delaysMs.length && delaysMs[j + 1] === delaysMs[i]) j++;
    const n = j - i + 1;
    const d = formatDuration(delaysMs[i] as number);
    if (n >= 3) runs.push(`${d} ×${n}`);
    else for (let k = 0; k < n; k++) runs.push(d);
    i = j + 1;
  }
  if (runs.length <= 12) return runs.join(', ');
  return `${runs.slice(0, 6).join(', ')}, … ${runs.at(-1)} (${delaysMs.length} retries)`;
}
