/** Counted nouns in English: "1 attempt", "2 attempts" — never "1 attempts" nor "attempt(s)". */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? singular : plural}`;
}
