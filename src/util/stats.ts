/** Nearest-rank percentile of unsorted samples; undefined when there are none. */
export function percentile(samples: readonly number[], p: number): number | undefined {
  return percentiles(samples, [p])[0];
}

/** Several nearest-rank percentiles from one sort of the samples. */
export function percentiles(samples: readonly number[], ps: readonly number[]): (number | undefined)[] {
  if (samples.length === 0) return ps.map(() => undefined);
  const sorted = [...samples].sort((a, b) => a - b);
  return ps.map((p) => sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1]);
}

export function round(n: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(n * f) / f;
}
