import chalk from 'chalk';
import type { VerifyResult } from '../verify/explain.js';
import { safe } from '../util/terminal.js';

/** The verdict first (VALID / INVALID and why), then what backs it, then what the request was. */
export function renderVerify(r: VerifyResult): string {
  const [head, ...rest] = r.findings;
  const what = [r.eventType, r.deliveryId]
    .filter(Boolean)
    .map((x) => safe(String(x)))
    .join(' ');
  const lines = [
    `${r.ok ? chalk.green('VALID') : chalk.red('INVALID')} ${safe(head ?? '')}`,
    ...rest.map((f) => `  ${r.ok ? '' : chalk.red('→ ')}${safe(f)}`),
    chalk.dim(`${r.provider}${what ? ` ${what}` : ''} · from ${safe(r.source)} · judged as of ${new Date(r.judgedAtMs).toISOString()}`),
  ];
  return `${lines.join('\n')}\n`;
}
