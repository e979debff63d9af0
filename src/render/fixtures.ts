import chalk from 'chalk';
import { escapeStrings, safeJson } from '../util/terminal.js';
import type { CaptureResult } from '../fixtures/capture-to-file.js';
import type { FixturesResult, ShowResult } from '../fixtures/list.js';
import type { RedactionKind } from '../fixtures/redact/index.js';

/** Names and types come from fixture files (a catalogue, an import, a user's own): escaped first. */
export function renderFixtures(list: FixturesResult): string {
  const result = escapeStrings(list);
  // The type only where the name does not already say it (stripe/invoice.paid is invoice.paid):
  // each name once, and the list as narrow as its names.
  const said = (f: (typeof result.fixtures)[number]) => f.name.slice(f.name.indexOf('/') + 1) === f.eventType;
  const width = Math.max(...result.fixtures.filter((f) => !said(f)).map((f) => f.name.length), 4);
  const lines = result.fixtures.map((f) => (said(f) ? f.name : `${f.name.padEnd(width)}  ${chalk.dim(f.eventType)}`));
  lines.push('');
  for (const p of result.providers.filter((x) => x.count > 0 || result.fixtures.length === 0)) {
    const from = p.declared
      ? `from ${p.declared}`
      : p.catalogue
        ? `${p.shipped} shipped, ${p.count - p.shipped} from ${p.catalogue}`
        : `${p.shipped} shipped`;
    lines.push(chalk.dim(`${p.provider}: ${p.count} (${from})`));
  }
  lines.push(
    result.fixtures.length === 0
      ? 'nothing matches'
      : chalk.dim(
          `send one with: hookdrill send ${result.fixtures[0]?.name ?? 'NAME'} --url URL --secret S · see one: hookdrill fixtures show NAME`,
        ),
  );
  return `${lines.join('\n')}\n`;
}

export function renderShow(shown: ShowResult): string {
  // The body is shown as JSON: JSON.stringify escapes the C0 controls inside its strings and keeps
  // its own line breaks; safeJson escapes the rest (C1, U+2028, the bidi controls) as \u escapes.
  const { body: json, ...rest } = shown;
  const body = safeJson(JSON.stringify(json, null, 2));
  const r = escapeStrings(rest);
  const lines = [chalk.bold(r.name), chalk.dim(`${r.eventType} · ${r.source}`), ''];
  if (r.query !== undefined) lines.push(`POST <your URL>?${r.query}  (added to its query, signed with it)`);
  for (const [k, v] of Object.entries(r.headers)) lines.push(`${k}: ${v}`);
  lines.push('', body, '', chalk.dim('ids and timestamps are made fresh on every send'));
  return `${lines.join('\n')}\n`;
}

const KIND_WORDS: Record<RedactionKind, [string, string]> = {
  email: ['email', 'emails'],
  name: ['name', 'names'],
  login: ['login', 'logins'],
  address: ['address field', 'address fields'],
  phone: ['phone number', 'phone numbers'],
  card: ['card number', 'card numbers'],
  ip: ['IP address', 'IP addresses'],
  location: ['coordinate', 'coordinates'],
};

/** The file name, the type and the id came from the stored delivery: escaped first. */
export function renderCapture(result: CaptureResult): string {
  const r = escapeStrings(result);
  const what = [r.provider, r.eventType].filter(Boolean).join(' ');
  const lines = [`wrote ${r.file}  ${chalk.dim(`(${what}, delivery ${r.deliveryId})`)}`];
  if (r.redactions) {
    const parts = (Object.entries(r.redactions) as [RedactionKind, number][])
      .filter(([, n]) => n > 0)
      .map(([kind, n]) => `${n} ${KIND_WORDS[kind][n === 1 ? 0 : 1]}`);
    lines.push(parts.length > 0 ? `redacted: ${parts.join(', ')}` : 'redacted: nothing personal found');
  } else {
    lines.push(chalk.dim('not redacted: the body as received (--redact replaces personal data)'));
  }
  if (r.credentials.length > 0) lines.push(`replaced ${r.credentials.join(', ')} (a credential)`);
  lines.push(`send it with: ${r.send}`);
  return `${lines.join('\n')}\n`;
}
