import chalk from 'chalk';
import type { ReconcileResult } from '../reconcile/run.js';
import { escapeStrings } from '../util/terminal.js';
import { junitReport, xml } from './xml.js';

const SHOWN = 20;

/** The fetched payloads and headers (--with-payloads) are never printed: not copied to be escaped. */
function withoutPayloads(r: ReconcileResult): ReconcileResult {
  return { ...r, missing: r.missing.map(({ payload: _payload, headers: _headers, ...e }) => e) };
}
const when = (seconds: number) => new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');

/**
 * The missing events first (what to act on), then the dead ones, then the verdict. Every id, type,
 * status and error came from the provider's API or the receiver: escaped first (escapeStrings), so
 * an event id cannot print a line of its own — a forged "OK … 0 missing" — nor hide the real ones.
 */
export function renderReconcile(result: ReconcileResult): string {
  const r = escapeStrings(withoutPayloads(result));
  const lines: string[] = [];
  const senderSaw = (status?: string) => (status ? `  (${r.provider}: ${status})` : '');
  for (const e of r.missing.slice(0, SHOWN))
    lines.push(`${chalk.red('missing')} ${e.id}  ${e.type}  ${when(e.created)}${senderSaw(e.status)}`);
  if (r.missing.length > SHOWN) lines.push(`… and ${r.missing.length - SHOWN} more missing (--json lists them all)`);
  for (const e of r.dead.slice(0, SHOWN)) lines.push(`${chalk.yellow('dead')}    ${e.id}  ${e.type}  ${when(e.created)}`);
  if (r.dead.length > SHOWN) lines.push(`… and ${r.dead.length - SHOWN} more dead`);
  for (const note of r.notes) lines.push(`${chalk.yellow('note')}: ${note}`);
  const range = `${new Date(r.since).toISOString()} → ${new Date(r.until).toISOString()}`;
  const verdict = r.missing.length === 0 ? chalk.green('OK') : chalk.red('MISSING');
  lines.push(
    `${verdict} ${r.provider}${r.hook ? ` ${r.hook}` : ''} sent ${r.sent} events (${range}) · ${r.held} held · ${r.missing.length} missing${r.store === 'inbox' ? ` · ${r.dead.length} held but dead` : ''} · ${r.elapsedMs}ms`,
  );
  if (r.fixed !== undefined)
    lines.push(
      r.dryRun
        ? `--dry-run: ${r.missing.length} missing events would be put into the inbox as pending; nothing changed`
        : `put ${r.fixed} missing events into the inbox as pending (origin reconcile): its worker processes them`,
    );
  if (r.dryRun && r.fixed === undefined && r.missing.length > 0)
    lines.push(`--dry-run: ${r.missing.length} missing events would be signed and delivered; nothing sent`);
  for (const u of (r.unfetched ?? []).slice(0, SHOWN)) lines.push(`${chalk.red('no payload')} ${u.id}: ${u.error}`);
  if (r.unfetched?.length)
    lines.push(`${r.unfetched.length} missing events could not be fetched from ${r.provider}: not fixed or redelivered`);
  if (r.redelivered) {
    const { summary, failed, url, interrupted } = r.redelivered;
    if (interrupted) lines.push(chalk.yellow('interrupted: the missing events not yet sent were not redelivered'));
    for (const f of failed.slice(0, SHOWN)) lines.push(`${chalk.red('not redelivered')} ${f.id}: ${f.status}`);
    lines.push(
      `${failed.length ? chalk.red('REDELIVERY FAILED') : chalk.green('redelivered')} ${summary.events - failed.length} of ${summary.events} missing events to ${url}${failed.length ? ' — run reconcile again to see what is still missing' : ''}`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/**
 * JUnit: a failed test case per missing event (the exit code's verdict), a passing one per event
 * held but dead — it arrived — with the fact in its output, where a CI report shows it, and one
 * passing case for all the events held.
 */
export function renderReconcileJunit(result: ReconcileResult): string {
  const r = escapeStrings(withoutPayloads(result));
  const cases: string[] = [];
  const classname = xml(`reconcile.${r.provider}`);
  for (const e of r.missing) {
    const message = `missing: ${r.provider} sent it at ${when(e.created)}${e.status ? ` (its delivery: ${e.status})` : ''}; the receiver does not hold it`;
    cases.push(
      `    <testcase classname="${classname}" name="${xml(`${e.type} ${e.id}`)}" time="0">\n      <failure message="${xml(message)}" type="missing"/>\n    </testcase>`,
    );
  }
  for (const e of r.dead)
    cases.push(
      `    <testcase classname="${classname}" name="${xml(`${e.type} ${e.id}`)}" time="0">\n      <system-out>held but dead in the inbox: processing gave up</system-out>\n    </testcase>`,
    );
  const heldFine = r.held - r.dead.length;
  if (heldFine > 0) cases.push(`    <testcase classname="${classname}" name="${xml(`${heldFine} other events held`)}" time="0"/>`);
  return junitReport(`hookdrill reconcile ${r.provider}`, cases, { failures: r.missing.length, seconds: r.elapsedMs / 1000 });
}
