import chalk from 'chalk';
import { count } from '../util/words.js';
import type { InspectResult, RowSummary } from '../incident/inspect.js';
import type { RequeueResult } from '../incident/requeue.js';
import type { Overview, Selector } from '../inbox/index.js';
import { formatDuration } from '../util/duration.js';
import { beforeUnsafe, escapeStrings, safe } from '../util/terminal.js';

const n = (x: number) => x.toLocaleString('en-US');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const ago = (ms: number, now: number) => `${formatDuration(Math.max(0, now - ms))} ago`;
const SPARK = '▁▂▃▄▅▆▇█';

/** Ids, types, errors and headers are what senders sent: the whole result is escaped first. */
export function renderInspect(result: InspectResult): string {
  const r = escapeStrings(result);
  if (r.view === 'overview') return overview(r, (result as typeof r).overview);
  if (r.view === 'rows') return rows(r);
  return delivery(r);
}

/** `raw` is the overview before escaping: a suggested --error must be the stored text, not its escaped form. */
function overview(r: Extract<InspectResult, { view: 'overview' }>, raw: Overview): string {
  const o = r.overview;
  const c = o.stats.counts;
  const lines = [chalk.bold(`inbox ${r.inbox}`)];
  lines.push(
    `  ${c.pending ? chalk.yellow(`pending ${n(c.pending)}`) : 'pending 0'} · working ${n(c.working)} · done ${n(c.done)} · ${c.dead ? chalk.red(`dead ${n(c.dead)}`) : 'dead 0'} · total ${n(o.stats.total)}`,
  );
  lines.push(
    o.stats.oldestPendingAt === undefined
      ? '  oldest pending: none'
      : `  oldest pending: ${chalk.bold(ago(o.stats.oldestPendingAt, r.now))} (${iso(o.stats.oldestPendingAt)})`,
  );
  const hour = o.perMinute.reduce((a, b) => a + b, 0);
  const peak = Math.max(...o.perMinute);
  const spark = o.perMinute.map((v) => (peak === 0 ? SPARK[0] : SPARK[Math.min(7, Math.floor((v / peak) * 7.999))])).join('');
  lines.push(`  last hour: ${n(hour)} deliveries, peak ${n(peak)}/min  ${chalk.dim(spark)}`);
  const inbox = shellWord(r.inbox);
  const leftOut = o.excludeCheck ? ' (rows hookdrill check sent left out)' : '';
  // Pending rows that failed: an outage of the app behind the receiver, before anything is dead.
  if (o.retryingByError.length) {
    lines.push(`  retrying, by last error${leftOut}:`);
    for (const g of o.retryingByError) {
      const next = g.nextAt <= r.now ? 'due now' : `next attempt in ${formatDuration(g.nextAt - r.now)}`;
      lines.push(`    ${chalk.yellow(n(g.count).padStart(8))}  ${g.error}  ${chalk.dim(`e.g. ${g.exampleId}, ${next}${checkNote(g)}`)}`);
    }
    // Retry now only where something waits: rows already due are the worker's next claim anyway.
    const top = suggested(raw.retryingByError.filter((g) => g.nextAt > r.now));
    if (top) lines.push(`  retry now: ${chalk.bold(requeueLine(inbox, 'pending', top))}`);
  }
  if (o.deadByError.length) {
    lines.push(`  dead by last error${leftOut}:`);
    for (const g of o.deadByError) {
      lines.push(
        `    ${chalk.red(n(g.count).padStart(8))}  ${g.error || chalk.dim('(no error recorded)')}  ${chalk.dim(`e.g. ${g.exampleId}, died ${g.oldestAt ? ago(g.oldestAt, r.now) : '?'}${g.count > 1 ? ` … ${g.newestAt ? ago(g.newestAt, r.now) : '?'}` : ''}${checkNote(g)}`)}`,
      );
    }
    const oldestDead = Math.min(...o.deadByError.map((g) => g.oldestAt || Number.POSITIVE_INFINITY));
    if (Number.isFinite(oldestDead)) lines.push(`  oldest dead: ${chalk.bold(ago(oldestDead, r.now))} (${iso(oldestDead)})`);
    // The next command, with the selector of what is shown first: previewed, so nothing moves yet.
    const top = suggested(raw.deadByError);
    if (top) lines.push(`  next: ${chalk.bold(requeueLine(inbox, 'dead', top))}`);
  }
  if (o.retentionMs !== undefined)
    lines.push(
      `  kept: done and dead for ${formatDuration(o.retentionMs)}, then removed (a sender's retry after that is stored anew, not a duplicate)`,
    );
  const attempts = Object.entries(o.attempts).map(([k, v]) => `${k}×${n(v)}`);
  lines.push(`  attempts of rows not done: ${attempts.length ? attempts.join(' · ') : 'none'}`);
  for (const q of o.requeues) {
    lines.push(
      chalk.dim(
        `  requeued ${iso(q.at)}: ${count(q.moved, 'row')} (${selectorText(q.selector)}${q.resetAttempts ? ', attempts reset' : ''})`,
      ),
    );
  }
  return `${lines.join('\n')}\n`;
}

type Group = { error: string; count: number; checkRows?: number };

/** How many of a group `hookdrill check` sent: its deliberate failures are no incident. */
function checkNote(g: Group): string {
  if (!g.checkRows) return '';
  return g.checkRows === g.count ? ' · all sent by hookdrill check' : ` · ${n(g.checkRows)} sent by hookdrill check`;
}

/** The group a command is suggested for: the largest that is not wholly check's deliberate rows. */
function suggested<G extends Group>(groups: readonly G[]): G | undefined {
  return groups.find((g) => (g.checkRows ?? 0) < g.count);
}

/**
 * The requeue of one group, previewed, as a line to paste: the whole error (--error matches text a
 * row's error contains), or, when it holds a line break or another control character, the part
 * before it — a shell would not paste that back as it was stored.
 */
function requeueLine(inbox: string, status: 'dead' | 'pending', g: Group): string {
  const error = beforeUnsafe(g.error);
  const check = (g.checkRows ?? 0) > 0 ? ' --exclude-check' : '';
  // A group with no recorded error is selected as that: no --error at all would select every row.
  const which = error ? ` --error ${shellWord(error)}` : g.error === '' ? ' --without-error' : '';
  return `hookdrill requeue --inbox ${inbox} --status ${status}${which}${check} --dry-run`;
}

/** A word a shell reads back as it is: single-quoted unless plainly safe. */
function shellWord(text: string): string {
  return /^[\w@%+=:,./-]+$/.test(text) ? text : `'${safe(text).replace(/'/g, "'\\''")}'`;
}

export function selectorText(s: Selector): string {
  const parts: string[] = [];
  if (s.ids) parts.push(s.ids.length === 1 ? `--id ${s.ids[0]}` : `${s.ids.length} ids`);
  if (s.statuses) parts.push(`--status ${s.statuses.join(',')}`);
  if (s.type) parts.push(`--type ${s.type}`);
  if (s.error) parts.push(`--error "${s.error}"`);
  if (s.noError) parts.push('--without-error');
  if (s.since !== undefined) parts.push(`--since ${iso(s.since)}`);
  if (s.until !== undefined) parts.push(`--until ${iso(s.until)}`);
  if (s.source) parts.push(`--source ${s.source}`);
  if (s.route) parts.push(`--route ${shellWord(s.route)}`);
  if (s.check === false) parts.push('--exclude-check');
  if (typeof s.check === 'string') parts.push(`--check-run ${shellWord(s.check)}`);
  return safe(parts.join(' ')) || 'everything';
}

/** The widest each column may be; one row with a 200 KB id must not pad every row to 200 KB. */
const COLUMN_MAX = [40, 32, 7, 5, 40, 22];

/** Cut to n characters, marking the cut; full values stay in --json. */
function cut(text: string, n: number): string {
  return text.length <= n ? text : `${text.slice(0, Math.max(0, n - 1))}…`;
}

export function rowTable(summaries: readonly RowSummary[], now: number, columns = process.stdout.columns || 160): string[] {
  const list = escapeStrings(summaries);
  // Rows listen routed show their route after the type; an inbox without routes keeps its columns.
  const routed = list.some((x) => x.route !== undefined);
  const header = ['id', 'type', ...(routed ? ['route'] : []), 'status', 'att', 'received', 'next attempt / died', 'last error'];
  const maxes = routed ? [COLUMN_MAX[0], COLUMN_MAX[1], 24, ...COLUMN_MAX.slice(2)] : COLUMN_MAX;
  const raw = list.map((x) => [
    x.deliveryId,
    x.eventType ?? '',
    ...(routed ? [x.route ?? ''] : []),
    x.status,
    String(x.attempts),
    `${iso(x.receivedAt)} (${ago(x.receivedAt, now)})`,
    x.nextAttemptAt !== undefined
      ? x.nextAttemptAt <= now
        ? 'due'
        : `in ${formatDuration(x.nextAttemptAt - now)}`
      : x.status === 'dead' && x.finishedAt !== undefined
        ? `died ${ago(x.finishedAt, now)}`
        : '',
    x.lastError ?? '',
  ]);
  const fixed = raw.map((c) => c.map((v, i) => (i < maxes.length ? cut(v, maxes[i] as number) : v)));
  // The last error gets what is left of the terminal's width (at least 20 characters).
  const used = header.slice(0, -1).map((h, i) => Math.max(h.length, ...fixed.map((c) => (c[i] ?? '').length)) + 2);
  const left = Math.max(20, columns - used.reduce((a, b) => a + b, 0));
  const cells = fixed.map((c) => c.map((v, i) => (i === c.length - 1 ? cut(v, left) : v)));
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => (c[i] ?? '').length)));
  const line = (c: string[]) =>
    c
      .map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [chalk.dim(line(header)), ...cells.map(line)];
}

function rows(r: Extract<InspectResult, { view: 'rows' }>): string {
  const lines = rowTable(r.rows, r.now);
  lines.push(chalk.dim(`${n(r.rows.length)} of ${n(r.total)} matching rows, ${r.order} first (${selectorText(r.selector)})`));
  // The cursor is base64url: nothing in it can write a line of its own.
  if (r.next) lines.push(chalk.dim(`${r.order === 'newest' ? 'older' : 'newer'} rows: the same command with --after ${r.next}`));
  return `${lines.join('\n')}\n`;
}

function delivery(r: Extract<InspectResult, { view: 'delivery' }>): string {
  const out: string[] = [];
  for (const d of r.deliveries) {
    out.push(chalk.bold(`${d.source} ${d.deliveryId}`));
    const field = (k: string, v: string | number | undefined | null) =>
      out.push(`  ${k.padEnd(13)} ${v === undefined || v === null ? chalk.dim('—') : String(v)}`);
    field('type', d.eventType);
    if (d.route !== undefined) field('route', d.route);
    field('status', d.status);
    field('attempts', d.attempts);
    field('received', `${iso(d.receivedAt)} (${ago(d.receivedAt, r.now)})`);
    field('next attempt', d.nextAttemptAt === undefined ? undefined : iso(d.nextAttemptAt));
    field('finished', d.finishedAt === undefined ? undefined : iso(d.finishedAt));
    field('last error', d.lastError);
    field('body', d.bytes === null ? 'pruned' : `${n(d.bytes)} bytes (print it with --body)`);
    out.push('  headers:');
    for (const [k, v] of Object.entries(d.headers)) out.push(`    ${k}: ${typeof v === 'string' ? v : safe(JSON.stringify(v))}`);
  }
  return `${out.join('\n')}\n`;
}

export function renderRequeue(result: RequeueResult): string {
  const r = escapeStrings(result);
  const lines = r.sample.length ? rowTable(r.sample, Date.now()) : [];
  if (r.matched > r.sample.length) lines.push(chalk.dim(`… and ${n(r.matched - r.sample.length)} more`));
  const what = `${selectorText(r.selector)}${r.resetAttempts ? ', attempts reset' : ''}`;
  // Pending rows named by status are made due now ("retry now"); finished ones go back to pending.
  const statuses = r.selector.statuses ?? ['done', 'dead'];
  const kind = statuses.every((s) => s === 'pending') ? 'pending row' : statuses.includes('pending') ? 'row' : 'finished row';
  const goes = kind === 'pending row' ? 'would be due now' : 'would move to pending';
  if (r.notFound.length) lines.push(chalk.red(`no row has the id ${r.notFound.join(', ')}`));
  if (r.interrupted)
    // Each batch committed whole: what moved is pending now, and no longer matches a --status
    // selector, so running the command again moves only the rest.
    lines.push(
      chalk.yellow(
        `stopped: moved ${n(r.moved)} of ${n(r.matched)} matching ${kind}s before the stop (${what}); the rest are as they were. Run the same command again to move the rest: rows already moved are no longer finished, so none moves twice`,
      ),
    );
  else if (r.matched === 0) lines.push(`no ${kind} matched (${what}); nothing ${r.dryRun ? 'would move' : 'was requeued'}`);
  else if (r.dryRun) lines.push(`dry run: ${count(r.matched, kind)} ${goes} (${what}); nothing changed`);
  else {
    // `matched` is counted when the rows were chosen, so `moved` is never more; fewer means rows
    // were claimed (or changed) between the choice and their batch, and were left as they are.
    const left = r.matched - r.moved;
    lines.push(
      `${chalk.green(`requeued ${n(r.moved)}`)} of ${n(r.matched)} matching ${kind}s (${what})${kind === 'pending row' ? ', due now' : ''}${left > 0 ? `; ${n(left)} changed meanwhile (claimed or requeued elsewhere) and were left as they are` : ''}; recorded in the requeue log`,
    );
  }
  return `${lines.join('\n')}\n`;
}

/** The JSON of inspect: bodies as base64 (and as text when they are valid UTF-8). */
export function inspectJson(r: InspectResult): string {
  if (r.view !== 'delivery') return JSON.stringify(r, null, 2);
  const deliveries = r.deliveries.map(({ body, ...rest }) => {
    if (body === null) return { ...rest, body: null };
    const text = body.toString('utf8');
    return { ...rest, bodyBase64: body.toString('base64'), ...(Buffer.from(text, 'utf8').equals(body) ? { bodyText: text } : {}) };
  });
  return JSON.stringify({ ...r, deliveries }, null, 2);
}
