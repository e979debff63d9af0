import chalk from 'chalk';
import type { VerifyResult } from '../verify/explain.js';
import { escapeStrings } from '../util/terminal.js';

/** The verdict first (VALID / INVALID and why), then what backs it, then what the request was. */
export function renderVerify(result: VerifyResult): string {
  // The findings quote the request (its headers, its id): escaped first.
  const r = escapeStrings(result);
  const [head, ...rest] = r.findings;
  const what = [r.eventType, r.deliveryId]
    .filter(Boolean)
    .map((x) => String(x))
    .join(' ');
  const lines = [
    `${r.ok ? chalk.green('VALID') : chalk.red('INVALID')} ${head ?? ''}`,
    ...rest.map((f) => `  ${r.ok ? '' : chalk.red('→ ')}${f}`),
    chalk.dim(`${r.provider}${what ? ` ${what}` : ''} · from ${r.source} · judged as of ${new Date(r.judgedAtMs).toISOString()}`),
  ];
  return `${lines.join('\n')}\n`;
}
