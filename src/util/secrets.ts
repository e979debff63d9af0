/** Every secret in the text replaced by ***: for anything a user's own command may echo back. */
export function maskSecrets(text: string, secrets: readonly string[]): string {
  // An empty secret would "match" between every character: skip it.
  return secrets.reduce((t, s) => (s ? t.split(s).join('***') : t), text);
}
