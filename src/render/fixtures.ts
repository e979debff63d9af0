import chalk from 'chalk';
import type { CaptureResult } from '../fixtures/capture-to-file.js';
import type { FixturesResult } from '../fixtures/list.js';
import type { RedactionKind } from '../fixtures/redact/index.js';

export function renderFixtures(result: FixturesResult): string {
  const width = Math.max(...result.fixtures.map((f) => f.name.length), 4);
  const lines = result.fixtures.map((f) => `${f.name.padEnd(width)}  ${chalk.dim(f.eventType)}`);
  lines.push('', chalk.dim('send one with: hookdrill send stripe/invoice.paid --url URL --secret S'));
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

export function renderCapture(r: CaptureResult): string {
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
