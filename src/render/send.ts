import chalk from 'chalk';
import { count } from '../util/words.js';
import type { AttemptRecord, DeliveryRecord, RetryScheduled, WireExchange } from '../delivery/deliver.js';
import type { SendResult } from '../delivery/send.js';
import { formatDelays, formatDuration } from '../util/duration.js';
import { escapeStrings, safe } from '../util/terminal.js';
import { scaleNote } from './timing.js';
import { attemptHint } from './attempt-hint.js';

/**
 * Human output of `send`: each delivery's line (deliveryLine) is printed as it finishes; this is
 * what follows them — the timing used and a summary.
 */
export function renderSendEnd(sent: Omit<SendResult, 'command'>): string {
  // Not the deliveries (up to millions, each printed on its own line already): not copied to be escaped.
  const { deliveries: _shownAlready, ...rest } = sent;
  const result = escapeStrings(rest);
  return `${timingLine(result)}\n${summaryLine(result)}\n`;
}

/**
 * A retry being scheduled, for stderr: which delivery, why, and when the next attempt is due; and,
 * where a failure's cause is nearly always the same (a 401 is the secret), what to check.
 */
export function retryLine(retry: RetryScheduled, url?: string): string {
  const hint = attemptHint(retry.failed, url);
  return `${retryText(retry)}${hint ? `  ${chalk.dim('↳')} ${safe(hint)}\n` : ''}`;
}

function retryText(retry: RetryScheduled): string {
  const r = escapeStrings(retry);
  const a = r.failed;
  const why =
    a.status !== undefined ? String(a.status) : `${a.error ?? 'error'}${a.detail && a.detail !== a.error ? ` (${a.detail})` : ''}`;
  const at = new Date(r.dueAt).toISOString().slice(11, 19);
  return `${chalk.yellow('retry')} ${r.deliveryId} ${chalk.cyan(r.eventType)}: attempt ${a.n} got ${why}; attempt ${a.n + 1} in ${formatDuration(a.nextDelayMs ?? 0)}, at ${at} UTC\n`;
}

/**
 * One attempt as it went over the wire, for --verbose (stderr): request, then answer. A body is
 * shown line by line, each under its "> " or "< ": its line breaks are split on before escaping (a
 * CR left at a line's end shows as \r), so a body's line is always marked as the body's.
 */
export function wireText(exchange: WireExchange): string {
  const bodyLines = (body: string) => body.split('\n').map(safe);
  const w = escapeStrings(exchange);
  const out = [chalk.bold(`> ${w.request.method} ${w.request.url}  (${w.deliveryId}, attempt ${w.n})`)];
  for (const [k, v] of Object.entries(w.request.headers)) out.push(`> ${k}: ${v}`);
  out.push('>', ...bodyLines(exchange.request.body).map((l) => `> ${l}`));
  if (w.response) {
    out.push(chalk.bold(`< ${w.response.status}`));
    for (const [k, v] of Object.entries(w.response.headers)) out.push(`< ${k}: ${v}`);
    out.push('<', ...bodyLines(exchange.response?.body ?? '').map((l) => `< ${l}`));
  } else out.push(chalk.red(`< no answer: ${w.error ?? 'error'}`));
  return `${out.join('\n')}\n\n`;
}

/** A delivery's id and type (from a fixture, a stored row), its errors and the receiver's answers are outside values: escaped first. */
export function deliveryLine(delivery: DeliveryRecord, showCopy: boolean, expect: string, url?: string): string {
  const d = escapeStrings(delivery);
  const mark = d.met ? chalk.green('✓') : chalk.red('✗');
  const copy = showCopy ? chalk.dim(` copy ${d.copy}`) : '';
  const attempts = d.attempts.map(attemptText).join(chalk.dim(' → '));
  const end = d.met ? '' : chalk.red(`  ${outcomeText(d)}, expected ${safe(expect)}`);
  // What to check, under a delivery that failed: with --no-retry, or a refusal that ends it at
  // once, no retry line says it.
  const last = delivery.attempts[delivery.attempts.length - 1];
  const hint = !d.met && last ? attemptHint(last, url) : undefined;
  return `${mark} ${d.deliveryId}${copy}  ${chalk.cyan(d.eventType)}  ${attempts}${end}${hint ? `\n  ${chalk.dim('↳')} ${safe(hint)}` : ''}`;
}

function attemptText(a: AttemptRecord): string {
  const what = a.status !== undefined ? statusText(a.status) : chalk.red(a.error ?? 'error');
  const retry = a.retryHeaders
    ? chalk.dim(
        ` [${Object.entries(a.retryHeaders)
          .map(([k, v]) => `${k}: ${v}`)
          .join(', ')}]`,
      )
    : a.n > 1
      ? chalk.dim(` [retry ${a.n - 1}]`)
      : '';
  const redirects = a.redirects ? chalk.dim(` (${a.redirects} redirect${a.redirects > 1 ? 's' : ''})`) : '';
  const why = a.status !== undefined && a.bodySnippet && a.status >= 400 ? chalk.dim(` "${truncate(a.bodySnippet, 60)}"`) : '';
  const wait = a.nextDelayMs !== undefined ? chalk.dim(` · wait ${formatDuration(a.nextDelayMs)}`) : '';
  return `${what} ${formatDuration(a.latencyMs)}${redirects}${retry}${why}${wait}`;
}

function statusText(status: number): string {
  if (status >= 200 && status < 300) return chalk.green(String(status));
  if (status >= 500) return chalk.red(String(status));
  return chalk.yellow(String(status));
}

function outcomeText(d: DeliveryRecord): string {
  switch (d.outcome) {
    case 'exhausted':
      return d.attempts.length === 1 ? 'no retries' : `gave up after ${d.attempts.length} attempts`;
    case 'stopped':
      // A refusal of the request itself ends the delivery (send, replay): not the receiver asking to stop.
      return d.finalStatus === 400 || d.finalStatus === 401 || d.finalStatus === 403
        ? `refused (${d.finalStatus}): not retried, the same request gets the same answer`
        : 'receiver said stop';
    case 'interrupted':
      return 'interrupted';
    case 'acknowledged':
      return 'acknowledged';
    case 'expected':
      return `answered ${d.finalStatus}`;
  }
}

function timingLine(r: Omit<SendResult, 'command' | 'deliveries'>): string {
  const t = r.timing;
  const scale = scaleNote(t);
  const retries = t.retryDelaysMs.length === 0 ? 'no retries' : `retries after ${formatDelays(t.retryDelaysMs)}`;
  return chalk.dim(`${r.provider} → ${r.url} · profile ${t.profile}${scale}: timeout ${formatDuration(t.timeoutMs)}, ${retries}`);
}

function summaryLine(r: Omit<SendResult, 'command' | 'deliveries'>): string {
  const s = r.summary;
  const parts = [
    `${r.batched ? `${count(r.batched.events, 'event')} in ${count(s.events, 'body', 'bodies')}` : count(s.events, 'event')}${r.duplicates > 1 ? ` ×${r.duplicates} copies` : ''}`,
    `${s.delivered.toLocaleString('en-US')} delivered`,
    s.failed > 0 ? chalk.red(`${s.failed.toLocaleString('en-US')} failed`) : '0 failed',
    `${count(s.attempts, 'attempt')} (${count(s.retries, 'retry', 'retries')})`,
  ];
  if (s.transportErrors > 0) parts.push(count(s.transportErrors, 'transport error'));
  if (s.latencyMs.p50 !== undefined) {
    parts.push(`latency p50 ${formatDuration(s.latencyMs.p50)} p99 ${formatDuration(s.latencyMs.p99 ?? 0)}`);
  }
  parts.push(`${formatDuration(s.elapsedMs)}`);
  if (r.seed !== undefined) parts.push(`shuffled, --seed ${r.seed}`);
  if (r.interrupted) parts.push(chalk.yellow('interrupted'));
  const head = r.ok ? chalk.green('PASS') : chalk.red('FAIL');
  return `${head} ${parts.join(' · ')}`;
}

function truncate(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
