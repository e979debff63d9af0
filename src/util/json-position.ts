/** Where a JSON parse failed, without quoting the text (a file may hold a secret near the fault). */
export function jsonPosition(err: unknown): string {
  const m = /position (\d+)/.exec((err as Error).message ?? '');
  return m ? ` (at character ${m[1]})` : '';
}
