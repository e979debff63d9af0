import chalk from 'chalk';
import type { ReconcileResult } from '../commands/reconcile/run.js';

const SHOWN = 20;
const when = (seconds: number) => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');

/** The missing events first (what to act on), then the dead ones, then the verdict. */
export function renderReconcile(r: ReconcileResult): string {
  const lines: string[] = [];
  for (const e of r.missing.slice(0, SHOWN)) lines.push(`${chalk.red('missing')} ${e.id}  ${e.type}  ${when(e.created)}`);
  if (r.missing.length > SHOWN) lines.push(`… and ${r.missing.length - SHOWN} more missing (--json lists them all)`);
  for (const e of r.dead.slice(0, SHOWN)) lines.push(`${chalk.yellow('dead')}    ${e.id}  ${e.type}  ${when(e.created)}`);
  if (r.dead.length > SHOWN) lines.push(`… and ${r.dead.length - SHOWN} more dead`);
  const range = `${new Date(r.since).toISOString()} → ${new Date(r.until).toISOString()}`;
  const verdict = r.ok ? chalk.green('OK') : chalk.red('MISSING');
  lines.push(
    `${verdict} ${r.provider} sent ${r.sent} events (${range}) · ${r.held} held · ${r.missing.length} missing${r.store === 'inbox' ? ` · ${r.dead.length} held but dead` : ''} · ${r.elapsedMs}ms`,
  );
  if (r.fixed !== undefined)
    lines.push(
      r.dryRun
        ? `--dry-run: ${r.missing.length} missing events would be put into the inbox as pending; nothing changed`
        : `put ${r.fixed} missing events into the inbox as pending (origin reconcile): its worker processes them`,
    );
  return `${lines.join('\n')}\n`;
}
