import chalk from 'chalk';
import type { DemoResult } from '../demo/run.js';
import { formatDuration } from '../util/duration.js';
import { escapeStrings } from '../util/terminal.js';

function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

const bad = (text: string) => chalk.red(text);
const good = (text: string) => chalk.green(text);

/** Measured here, nothing from outside; escaped first all the same, as every renderer's input is. */
export function renderDemo(result: DemoResult): string {
  const r = escapeStrings(result);
  const a = r.inlineVsQueue;
  const b = r.ackVsStore;
  const c = r.verifyOrder;
  const t = a.timing;
  const row = (cells: string[], widths: number[]) => `  ${cells.map((cell, i) => pad(cell, widths[i] ?? 0)).join('  ')}`;
  const w1 = [19, 10, 22, 12, 0];
  const lines = [
    chalk.bold('hookdrill demo: why a webhook receiver must verify, store, answer — and only then work'),
    chalk.dim(`real receiver processes, real HTTP, real SQLite; every figure measured in this run (${formatDuration(r.elapsedMs)})`),
    '',
    chalk.bold('1. Inline work vs queue-first') +
      chalk.dim(
        ` — Slack's timing scaled down: ${t.timeoutMs}ms timeout, retries after ${t.retryDelaysMs.map((d) => `${d}ms`).join(', ')}; the CRM call takes ${t.crmMs}ms`,
      ),
    chalk.dim(row(['receiver', 'attempts', 'answered 2xx', 'CRM updates', ''], w1)),
    row(
      [
        'inline',
        String(a.inline.attempts),
        `${a.inline.answered2xx} (${a.inline.timedOut} timed out)`,
        bad(String(a.inline.crmUpdates)),
        chalk.dim('one event, updated again on every retry'),
      ],
      w1,
    ),
    row(
      [
        'queue-first',
        String(a.queueFirst.attempts),
        `${a.queueFirst.answered2xx} (in ${a.queueFirst.firstAnswerMs}ms)`,
        good(String(a.queueFirst.crmUpdates)),
        chalk.dim(`inbox: ${a.queueFirst.pendingBeforeWorker} pending before the worker, ${a.queueFirst.doneAfterWorker} done after`),
      ],
      w1,
    ),
    '',
    chalk.bold('2. Ack-first vs store-first') +
      chalk.dim(' — 3 events each, all answered 200, then SIGKILL and a restart on the same database'),
    chalk.dim(row(['receiver', 'acked', 'processed in the end', '', ''], w1)),
    row(
      [
        'ack-first',
        String(b.ackFirst.acknowledged),
        bad(`${b.ackFirst.processed} of ${b.ackFirst.acknowledged}`),
        '',
        chalk.dim('acknowledged, then lost with the process'),
      ],
      w1,
    ),
    row(
      [
        'store-first',
        String(b.storeFirst.acknowledged),
        good(`${b.storeFirst.processed} of ${b.storeFirst.acknowledged}`),
        '',
        chalk.dim('stored before the 200: nothing to lose'),
      ],
      w1,
    ),
    '',
    chalk.bold('3. Store-then-verify vs verify-then-store') + chalk.dim(` — ${c.storeThenVerify.requests} unsigned requests`),
    chalk.dim(row(['receiver', 'rows', 'bytes stored', '', ''], w1)),
    row(
      [
        'store-then-verify',
        bad(String(c.storeThenVerify.rows)),
        bad(bytes(c.storeThenVerify.bytes)),
        '',
        chalk.dim(`${refused(c.storeThenVerify)}, and kept them: anyone can fill your inbox`),
      ],
      w1,
    ),
    row(
      [
        'verify-then-store',
        good(String(c.verifyThenStore.rows)),
        good(bytes(c.verifyThenStore.bytes)),
        '',
        chalk.dim(`${refused(c.verifyThenStore)} before a byte was written`),
      ],
      w1,
    ),
    '',
  ];
  if (r.ok) {
    lines.push('The safe order: verify the raw bytes → store, keyed by delivery id → answer 200 → work from the store.');
    // The same proofs, on the user's own receiver: check runs 1 and 3 (and more), chaos runs 2.
    lines.push('The same tests on your own receiver, in any language:');
    lines.push(
      chalk.dim(
        '  hookdrill check --receiver "node server.js" --url http://127.0.0.1:3000/webhooks --provider stripe --secret whsec_…   # 1 and 3, and the rest of the battery',
      ),
    );
    lines.push(
      chalk.dim(
        '  hookdrill chaos --receiver "node server.js" --url http://127.0.0.1:3000/webhooks --provider stripe --secret whsec_… --stored "<prints stored ids>"   # 2',
      ),
    );
  } else {
    lines.push(bad(`unexpected: ${r.surprises.join('; ')}`));
  }
  return `${lines.join('\n')}\n`;
}

/** What a receiver answered the unsigned requests: all refused (as both should), or how many got 2xx. */
function refused(side: { requests?: number; answered2xx: number }): string {
  return side.answered2xx === 0 ? 'refused every one' : `answered ${side.answered2xx} with 2xx`;
}

/** Pad by visible width, ignoring colour codes. */
function pad(text: string, width: number): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ESC starts the colour codes this strips
  const visible = text.replace(/\u001b\[[0-9;]*m/g, '').length;
  return visible >= width ? text : text + ' '.repeat(width - visible);
}
