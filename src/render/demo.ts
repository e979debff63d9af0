import chalk from 'chalk';
import type { DemoResult, DemoSection } from '../demo/run.js';
import { formatDuration } from '../util/duration.js';
import { escapeStrings, visibleLength } from '../util/terminal.js';

function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

const bad = (text: string) => chalk.red(text);
const good = (text: string) => chalk.green(text);

/** Widths of the table columns (receiver, then three figures): with the two-space margins, 66 columns. */
const W = [18, 9, 18, 11];
const row = (cells: string[]) => `  ${cells.map((cell, i) => pad(cell, W[i] ?? 0)).join('  ')}`.trimEnd();
/** A row's note on a line of its own under it: the table stays within 80 columns. */
const note = (text: string) => chalk.dim(`  ${' '.repeat((W[0] ?? 0) + 2)}${text}`);

/** The first lines, printed before anything is measured: what is about to happen. */
export function demoHeader(): string {
  return `${[
    chalk.bold('hookdrill demo: why a receiver must verify, store, answer — then work'),
    chalk.dim('real receiver processes, real HTTP, real SQLite; measured as it runs'),
    '',
  ].join('\n')}\n`;
}

/** One contrast, printed as soon as it is measured. Measured here, nothing from outside; escaped all the same. */
export function demoSection(section: DemoSection): string {
  const lines: string[] = [];
  if (section.n === 1) {
    const a = escapeStrings(section.figures);
    const t = a.timing;
    lines.push(
      chalk.bold('1. Inline work vs queue-first'),
      chalk.dim(`   Slack's timing scaled down: ${t.timeoutMs}ms timeout, retries after`),
      chalk.dim(`   ${t.retryDelaysMs.map((d) => `${d}ms`).join(', ')}; the CRM call takes ${t.crmMs}ms`),
      chalk.dim(row(['receiver', 'attempts', 'answered 2xx', 'CRM updates'])),
      row([
        'inline',
        String(a.inline.attempts),
        `${a.inline.answered2xx} (${a.inline.timedOut} timed out)`,
        bad(String(a.inline.crmUpdates)),
      ]),
      note('one event, updated again on every retry'),
      row([
        'queue-first',
        String(a.queueFirst.attempts),
        `${a.queueFirst.answered2xx} (in ${a.queueFirst.firstAnswerMs}ms)`,
        good(String(a.queueFirst.crmUpdates)),
      ]),
      note(`inbox: ${a.queueFirst.pendingBeforeWorker} pending before the worker, ${a.queueFirst.doneAfterWorker} done after`),
    );
  } else if (section.n === 2) {
    const b = escapeStrings(section.figures);
    lines.push(
      chalk.bold('2. Ack-first vs store-first'),
      chalk.dim('   3 events each, all answered 200, then SIGKILL and a restart on the'),
      chalk.dim('   same database'),
      chalk.dim(row(['receiver', 'acked', 'processed', ''])),
      row(['ack-first', String(b.ackFirst.acknowledged), bad(`${b.ackFirst.processed} of ${b.ackFirst.acknowledged}`), '']),
      note('acknowledged, then lost with the process'),
      row(['store-first', String(b.storeFirst.acknowledged), good(`${b.storeFirst.processed} of ${b.storeFirst.acknowledged}`), '']),
      note('stored before the 200: nothing to lose'),
    );
  } else {
    const c = escapeStrings(section.figures);
    lines.push(
      chalk.bold('3. Store-then-verify vs verify-then-store'),
      chalk.dim(`   ${c.storeThenVerify.requests} unsigned requests`),
      chalk.dim(row(['receiver', 'rows', 'bytes stored', ''])),
      row(['store-then-verify', bad(String(c.storeThenVerify.rows)), bad(bytes(c.storeThenVerify.bytes)), '']),
      note(`${refused(c.storeThenVerify)}, and kept them:`),
      note('anyone can fill your inbox'),
      row(['verify-then-store', good(String(c.verifyThenStore.rows)), good(bytes(c.verifyThenStore.bytes)), '']),
      note(`${refused(c.verifyThenStore)} before a byte was written`),
    );
  }
  return `${lines.join('\n')}\n\n`;
}

/** The last lines: the rule the three show, and the commands that prove it of the user's own receiver. */
export function demoFooter(result: DemoResult): string {
  const r = escapeStrings(result);
  const lines: string[] = [];
  if (r.ok) {
    lines.push(
      'The safe order: verify the raw bytes → store, keyed by delivery id →',
      'answer 200 → work from the store.',
      chalk.dim(`Every figure above was measured in this run (${formatDuration(r.elapsedMs)}).`),
      '',
      // The same proofs, on the user's own receiver: check runs 1 and 3 (and more), chaos runs 2.
      'The same tests on your own receiver, in any language — 1 and 3, and the rest',
      'of the battery:',
      chalk.dim('  hookdrill check --receiver "node server.js" \\'),
      chalk.dim('    --url http://127.0.0.1:3000/webhooks --provider stripe --secret whsec_…'),
      'and 2:',
      chalk.dim('  hookdrill chaos --receiver "node server.js" \\'),
      chalk.dim('    --url http://127.0.0.1:3000/webhooks --provider stripe --secret whsec_… \\'),
      chalk.dim('    --stored "<prints stored ids>"'),
    );
  } else {
    lines.push(bad(`unexpected: ${r.surprises.join('; ')}`));
  }
  return `${lines.join('\n')}\n`;
}

/** The whole of it at once (the library, and --json's text twin). */
export function renderDemo(result: DemoResult): string {
  const sections: DemoSection[] = [
    { n: 1, figures: result.inlineVsQueue },
    { n: 2, figures: result.ackVsStore },
    { n: 3, figures: result.verifyOrder },
  ];
  return `${demoHeader()}${sections.map(demoSection).join('')}${demoFooter(result)}`;
}

/** What a receiver answered the unsigned requests: all refused (as both should), or how many got 2xx. */
function refused(side: { requests?: number; answered2xx: number }): string {
  return side.answered2xx === 0 ? 'refused every one' : `answered ${side.answered2xx} with 2xx`;
}

/** Pad by visible width, ignoring colour codes. */
function pad(text: string, width: number): string {
  const visible = visibleLength(text);
  return visible >= width ? text : text + ' '.repeat(width - visible);
}
