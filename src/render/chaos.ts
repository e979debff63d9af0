import chalk from 'chalk';
import { escapeStrings } from '../util/terminal.js';
import { junitReport, xml } from './xml.js';
import type { ChaosResult, ChaosRound, SettleWait } from '../chaos/run.js';
import { formatDuration } from '../util/duration.js';
import { scaleNote } from './timing.js';
import { getProvider } from '../providers/index.js';

/** Ids, the receiver's command and the problems (which quote what the receiver said) came from outside: escaped first. */
export function renderChaos(result: ChaosResult): string {
  const r = escapeStrings(result);
  const lines: string[] = [];
  for (const round of r.rounds) lines.push(roundLine(round, r));
  const t = r.totals;
  lines.push('');
  const latency = t.maxKillSentMs !== undefined ? ` · ack→signal ≤ ${t.maxKillSentMs}ms` : '';
  lines.push(
    chalk.dim(
      `${r.provider} → ${r.url} · receiver: ${r.receiver} · ${r.durability === 'power-cut' ? 'power cut' : `SIG${r.signal}`} ${r.killPoint === 'random' ? 'at a random moment' : `after ack ${r.killAfter}`}${latency} · ${r.receiverStarts} starts · profile ${r.timing.profile}${scaleNote(r.timing)}: timeout ${formatDuration(r.timing.timeoutMs)}`,
    ),
  );
  const parts = [
    `${r.rounds.length} round${r.rounds.length === 1 ? '' : 's'}`,
    `${t.sent} sent`,
    `${t.acknowledged} acknowledged`,
    `${t.stored} stored`,
    t.lost.length ? chalk.red(`${t.lost.length} lost`) : '0 lost',
  ];
  if (t.refused.length) parts.push(chalk.red(`${t.refused.length} never acknowledged`));
  if (t.unjudged?.length) parts.push(chalk.yellow(`${t.unjudged.length} not judged (interrupted)`));
  if (t.storedTwice.length) parts.push(chalk.red(`${t.storedTwice.length} stored twice`));
  if (t.duplicatesSent)
    parts.push(
      `${t.duplicatesSent} duplicates re-sent${t.duplicatesRefused.length ? chalk.red(` (${t.duplicatesRefused.length} refused)`) : ''}`,
    );
  if (t.processed !== undefined) {
    parts.push(`${t.processed} processed`);
    parts.push(t.processedTwice?.length ? chalk.red(`${t.processedTwice.length} processed twice`) : '0 processed twice');
    if (t.reprocessedAfterLease?.length) parts.push(`${t.reprocessedAfterLease.length} again after a lease ran out`);
  }
  parts.push(formatDuration(r.elapsedMs));
  // Interrupted is no verdict: neither PASS nor FAIL.
  const mark = r.interrupted ? chalk.yellow('INTERRUPTED') : r.ok ? chalk.green('PASS') : chalk.red('FAIL');
  lines.push(`${mark} ${parts.join(' · ')}`);
  // A process kill leaves the page cache to the kernel: an unsynced write survives it. Never a bare PASS.
  if (r.durability === 'process-kill' && r.ok)
    lines.push(
      chalk.yellow(
        'a process kill cannot judge power-loss durability: what was written but never synced survives it (chaos --power-cut DIR can)',
      ),
    );
  if (r.durability === 'power-cut') lines.push(chalk.dim('each kill was a power cut: only what reached the disk survived'));
  idList(lines, 'lost (acknowledged, then not stored)', t.lost, LOST_FIX);
  idList(lines, 'never acknowledged (the sender gives up)', t.refused);
  idList(lines, 'acknowledged but never processed', t.notProcessed ?? []);
  idList(lines, 'processed twice', t.processedTwice ?? []);
  idList(lines, 'stored twice', t.storedTwice);
  idList(lines, 'duplicates refused', t.duplicatesRefused);
  for (const p of r.problems) lines.push(chalk.red(p));
  // Facts of the provider, not findings: said plainly, not in red.
  for (const n of r.notes ?? []) lines.push(chalk.dim(n));
  return `${lines.join('\n')}\n`;
}

/**
 * What a developer changes when acknowledged deliveries are lost, as check gives a fix under each
 * failed case (the other lists' problems below say their fix already). No provider's fact in it.
 */
const LOST_FIX =
  'your receiver answers 2xx before the delivery is durably stored: commit it (the transaction done, the write synced) first, then answer; do the work after, from the store';

/** Ids one per line, the first 20 and then how many more (--json has them all), and the fix where one is given. */
function idList(lines: string[], title: string, ids: readonly string[], fix?: string): void {
  if (ids.length === 0) return;
  lines.push(chalk.red(`${title}: ${ids.length}`));
  for (const id of ids.slice(0, SHOWN_IDS)) lines.push(`  ${id}`);
  if (ids.length > SHOWN_IDS) lines.push(`  … and ${ids.length - SHOWN_IDS} more (--json lists them all)`);
  if (fix) lines.push(`  ${chalk.red('→')} ${fix}`);
}

const SHOWN_IDS = 20;

function roundLine(round: ChaosRound, r: ChaosResult): string {
  if (round.interrupted)
    return chalk.yellow(
      `round ${round.round}: interrupted while its deliveries were being sent — not judged (${round.sent} sent · ${round.acknowledged} acknowledged · ${round.stored} stored)`,
    );
  const kill = !round.killed
    ? chalk.yellow(`killed at the end (fewer than ${r.killAfter} acks)`)
    : round.killSentMs !== undefined
      ? `SIG${r.signal} sent ${round.killSentMs}ms after ack ${r.killAfter}, gone after ${round.killLandedMs}ms`
      : 'killed at a random moment';
  const term = round.escalated ? chalk.yellow(' (ignored SIGTERM: SIGKILLed)') : '';
  const lost = round.lost.length ? chalk.red(`${round.lost.length} lost`) : '0 lost';
  const refused = round.refused.length ? ` · ${chalk.red(`${round.refused.length} never acknowledged`)}` : '';
  const processed = round.processed !== undefined ? ` · ${round.processed} processed` : '';
  const later = round.acknowledgedAfterRestart
    ? ` (${round.acknowledgedAfterRestart} on ${retries(r) ? 'a retry after the restart' : 'a redelivery after the restart, as a person would press Redeliver'})`
    : '';
  return `round ${round.round}: ${round.sent} sent · ${round.acknowledged} acknowledged${later} · ${kill}${term} · ${round.stored} stored · ${lost}${refused}${processed}`;
}

/**
 * Whether the provider retries on its own, from its profile: chaos redelivers once after a restart
 * for one that does not (GitHub's redelivery is manual, Discord never sends again), and must not
 * call that the provider's retry.
 */
function retries(r: ChaosResult): boolean {
  const p = getProvider(r.provider);
  return (p.profiles[r.timing.profile] ?? p.profiles[p.defaultProfile])?.retryDelaysMs.length !== 0;
}

/** The line the CLI prints (stderr) while chaos waits for rows a killed worker still holds. */
export function renderSettleWait(w: SettleWait): string {
  const what = [w.leased ? `${w.leased} still leased by a killed worker` : '', w.pending ? `${w.pending} pending` : '']
    .filter(Boolean)
    .join(', ');
  const secs = (at: number) => `${Math.max(0, Math.ceil((at - Date.now()) / 1000))}s`;
  return `hookdrill: waiting for ${what} (due within ${secs(w.until)}; giving up in ${secs(w.giveUpAt)}, --settle-max)\n`;
}

/** JUnit: one test case per round ("no acknowledged delivery lost"). */
export function renderChaosJunit(result: ChaosResult): string {
  const r = escapeStrings(result);
  const bad = (x: ChaosRound) => [
    ...x.lost.map((id) => `lost ${id}`),
    ...x.refused.map((id) => `never acknowledged ${id}`),
    ...(x.notProcessed ?? []).map((id) => `not processed ${id}`),
    ...x.storedTwice.map((id) => `stored twice ${id}`),
    ...x.duplicatesRefused.map((id) => `duplicate refused ${id}`),
    ...(r.allowReprocess ? [] : (x.processedTwice ?? []).map((id) => `processed twice ${id}`)),
  ];
  const failures = r.rounds.filter((x) => bad(x).length > 0).length;
  // Interrupted: a round cut short, or one whose deliveries were still due a retry, was not judged.
  const skip = (x: ChaosRound) =>
    x.interrupted
      ? 'not judged: interrupted while its deliveries were being sent'
      : x.unjudged?.length && bad(x).length === 0
        ? `not judged: interrupted before ${x.unjudged.length} of its deliveries were retried`
        : undefined;
  const classname = `hookdrill.chaos.${xml(r.provider)}`;
  const cases = r.rounds.map((x) => {
    const open = `    <testcase classname="${classname}" name="round ${x.round}: no acknowledged delivery lost">`;
    const skipped = skip(x);
    if (skipped) return `${open}\n      <skipped message="${xml(skipped)}"/>\n    </testcase>`;
    const found = bad(x);
    if (found.length === 0) return `${open}</testcase>`;
    const message = `${x.lost.length} lost, ${x.refused.length} never acknowledged, ${x.notProcessed?.length ?? 0} not processed`;
    return `${open}\n      <failure message="${xml(message)}">${xml(found.join('\n'))}</failure>\n    </testcase>`;
  });
  // The rounds asked for that never ran: one case, skipped, so CI sees the run was cut short.
  const notRun = r.interrupted ? r.roundsPlanned - r.rounds.length : 0;
  if (notRun > 0) {
    const first = r.rounds.length + 1;
    const name = notRun === 1 ? `round ${first}` : `rounds ${first}–${first + notRun - 1}`;
    cases.push(
      `    <testcase classname="${classname}" name="${name}: no acknowledged delivery lost">\n      <skipped message="not judged: interrupted before they ran"/>\n    </testcase>`,
    );
  }
  const skipped = r.rounds.filter((x) => skip(x) !== undefined).length + (notRun > 0 ? 1 : 0);
  return junitReport('hookdrill chaos', cases, { failures, skipped, seconds: r.elapsedMs / 1000 });
}
