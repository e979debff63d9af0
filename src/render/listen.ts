import chalk from 'chalk';
import { count } from '../util/words.js';
import type { ListenCounts, ListenSummary, Ready } from '../receiver/listen.js';
import type { ReceiverEvent } from '../receiver/index.js';
import type { RouteChange, WorkOutcome } from '../worker/index.js';
import { formatDuration } from '../util/duration.js';
import { escapeStrings, safe } from '../util/terminal.js';

/**
 * Each function gives one line: JSON for --json (one object per line), text otherwise. The lines
 * printed per request and per outcome escape their outside fields one by one with safe() (they are
 * on the hot path: no copy of the event); the others escape their whole input first.
 */

/** When a line was written: every --json line carries it, so a log can be read against others. */
const now = () => new Date().toISOString();

export function readyLine(ready: Ready, json: boolean): string {
  if (json) return JSON.stringify({ at: now(), ...ready });
  const r = escapeStrings(ready);
  const forward = r.forwardTo
    ? ` → forwarding to ${r.forwardTo}`
    : r.worker
      ? ' (no --forward-to: stored deliveries are marked done)'
      : ' (no worker: rows stay pending)';
  const budget = r.retries
    ? `\nworker: a delivery that keeps failing is dead after ${r.retries.maxAttempts} attempts, ${formatDuration(r.retries.deadAfterMs.minMs)}–${formatDuration(r.retries.deadAfterMs.maxMs)} of failures (${formatDuration(r.retries.baseMs)} doubling to ${formatDuration(r.retries.maxMs)}; --max-attempts, --backoff-base, --backoff-max)`
    : '';
  const providers = r.providers ? r.providers.map((p) => `\n  ${p.provider} posts to ${chalk.bold(p.url)}`).join('') : '';
  const routes = r.routes
    ? `\nroutes (the first match wins):${r.routes.map((x) => `\n  ${x.name}: ${x.provider} ${x.events.join(',')} → ${x.to}`).join('')}`
    : '';
  if (r.routes) return `listening on ${chalk.bold(r.url)} for ${r.provider} · inbox ${r.inbox}${providers}${routes}${budget}`;
  return `listening on ${chalk.bold(r.url)} for ${r.provider} · inbox ${r.inbox}${forward}${providers}${budget}`;
}

export function requestLine(e: ReceiverEvent, json: boolean): string | undefined {
  if (e.result === 'health') return undefined;
  if (json) return JSON.stringify({ event: 'request', at: now(), ...e });
  const status =
    e.status < 300 ? chalk.green(String(e.status)) : e.status < 500 ? chalk.yellow(String(e.status)) : chalk.red(String(e.status));
  // The id, the type and a signature's reason come from the sender: shown with control characters escaped.
  const what = [
    e.result,
    e.deliveryId && safe(e.deliveryId),
    e.eventType && chalk.cyan(safe(e.eventType)),
    e.reason && chalk.dim(safe(e.reason)),
  ]
    .filter(Boolean)
    .join(' ');
  return `${status} ${what}`;
}

export function outcomeLine(o: WorkOutcome, json: boolean): string {
  if (json)
    return JSON.stringify({ event: 'processed', at: now(), ...o, key: undefined, source: o.key.source, deliveryId: o.key.deliveryId });
  const route = o.route !== undefined ? ` → ${safe(o.route)}` : '';
  const id = `${safe(o.key.deliveryId)}${o.eventType ? ` ${chalk.cyan(safe(o.eventType))}` : ''}${route} (attempt ${o.attempt}, ${formatDuration(o.ms)})`;
  switch (o.outcome) {
    case 'done':
      return `${chalk.green('done')} ${id}`;
    case 'retry':
      return `${chalk.yellow('retry')} ${id} in ${formatDuration(o.retryInMs)}: ${safe(o.error)}`;
    case 'dead':
      return `${chalk.red('dead')} ${id}: ${safe(o.error)}`;
    case 'fenced':
      return `${chalk.dim('fenced')} ${id}: lease lost, another worker took it over`;
  }
}

/** A route paused (its target failed: its rows wait, one probe at a time) or resumed (its target answered again). */
export function routeLine(c: RouteChange, json: boolean): string {
  if (json) return JSON.stringify({ event: 'route', at: now(), ...c });
  if (c.state === 'resumed')
    return `${chalk.green('route resumed')} ${safe(c.route)} (${safe(c.source)}): its target answered after ${count(c.failures, 'failed forward')}`;
  return `${chalk.yellow('route paused')} ${safe(c.route)} (${safe(c.source)}) for ${formatDuration(c.forMs)}, failure ${c.failures} in a row (its rows wait, attempts unspent): ${safe(c.error)}`;
}

export function summaryLine(s: ListenSummary, json: boolean): string {
  if (json) return JSON.stringify({ event: 'stopped', at: now(), ...s });
  const c = s.inbox.counts;
  return `stopped · ${s.requests} request${s.requests === 1 ? '' : 's'}: ${s.stored} stored, ${s.duplicates} duplicates, ${s.rejected} rejected · processed ${s.processed.done} done, ${s.processed.retried} retried, ${s.processed.dead} dead · inbox: ${c.pending} pending, ${c.working} working, ${c.done} done, ${c.dead} dead`;
}

/** The live status line at a terminal: counts so far and the current rate, instead of a scrolling log. */
export function statusLine(c: ListenCounts, perSec: number): string {
  const problems = [
    c.rejected && chalk.yellow(`${c.rejected} rejected`),
    c.failed && chalk.red(`${c.failed} answered 503`),
    c.dead && chalk.red(`${c.dead} dead`),
  ].filter(Boolean);
  return [
    `${chalk.bold(String(c.requests))} request${c.requests === 1 ? '' : 's'} (${Math.round(perSec)}/s)`,
    `${c.stored} stored, ${count(c.duplicates, 'duplicate')}`,
    `processed ${c.done} done, ${c.retried} retried`,
    ...problems,
  ].join(' · ');
}

/** In the status view only what needs a look scrolls: rejected signatures, 503s, retries and burials. */
export function isNotable(e: ReceiverEvent | WorkOutcome): boolean {
  if ('result' in e) return e.result !== 'health' && e.status >= 300;
  return e.outcome !== 'done';
}
