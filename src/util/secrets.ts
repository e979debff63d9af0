/** Every secret in the text replaced by ***: for anything a user's own command may echo back. */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  // An empty secret would "match" between every character: skip it.
  return secrets.reduce((t, s) => (s ? t.split(s).join('***') : t), text);
}

/**
 * A value copied from the README's examples (`whsec_…`, `rk_live_…`): no real secret holds "…".
 * Returns how to show it — the placeholder itself, which is no secret (cut, if someone pasted more
 * around it) — or undefined when the value is not one.
 */
export function readmePlaceholder(value: string): string | undefined {
  const at = value.indexOf('…');
  if (at < 0) return undefined;
  return value.length <= 16 ? value : `${value.slice(0, Math.min(at, 12))}…`;
}
