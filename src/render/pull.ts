import chalk from 'chalk';
import { count } from '../util/words.js';
import type { PullResult, PullStart, PullStatus, PulledRecord } from '../pull/run.js';
import { escapeStrings, safe, safeJson } from '../util/terminal.js';
import { formatDuration } from '../util/duration.js';

const OUTCOME = {
  delivered: chalk.green('delivered'),
  stored: chalk.green('stored   '),
  duplicate: chalk.dim('duplicate'),
  failed: chalk.red('failed   '),
  skipped: chalk.yellow('skipped  '),
  gone: chalk.yellow('gone     '),
} as const;

/**
 * A --json line: JSON.stringify escapes C0; safeJson the rest (C1, U+2028, bidi) as \u escapes, so
 * the line stays JSON after the last guard (which would write C1 as \x9b, not a JSON escape).
 */
function jsonLine(value: object): string {
  return safeJson(JSON.stringify(value));
}

/** One event: time, id, type, outcome, the receiver's status, latency. The id and type come from the provider's API: shown escaped. */
export function pulledLine(r: PulledRecord, json: boolean): string {
  if (json) return jsonLine({ event: 'pulled', ...r });
  const answer = r.status !== undefined ? String(r.status) : (r.error ?? '');
  const tries = r.attempts && r.attempts > 1 ? ` (${r.attempts} attempts)` : '';
  const latency = r.latencyMs !== undefined ? `  ${r.latencyMs}ms` : '';
  return `${r.at.slice(11, 23)}  ${OUTCOME[r.outcome]}  ${safe(r.id)}  ${safe(r.type)}  ${safe(answer)}${latency}${tries}`;
}

export function noteLine(text: string, json: boolean): string {
  return json ? jsonLine({ event: 'note', text }) : `${chalk.yellow('note')}: ${safe(text)}`;
}

/** What the run will do, before the first event: where from, where to, and on what schedule. */
export function startLine(start: PullStart, json: boolean): string {
  if (json) return jsonLine({ event: 'start', ...start });
  const r = escapeStrings(start);
  const from = { resumed: 'from the saved cursor', since: 'from --since', now: 'from now' }[r.start];
  const schedule = r.timing
    ? r.timing.retryDelaysMs.length
      ? `; retries on ${r.timing.profile}'s schedule (${r.timing.retryDelaysMs.map((d) => formatDuration(d)).join(', ')}), --no-retry or --time-scale to shorten`
      : '; one attempt each'
    : '';
  return `pulling ${r.provider} ${r.source} ${from} → ${r.to}${r.follow ? ', following' : ''}; cursor in ${r.stateFile}${schedule}`;
}

/** The status line at a terminal. */
export function statusText(status: PullStatus): string {
  const s = escapeStrings(status);
  const budget = s.budget ? ` · API budget ${s.budget.remaining}/${s.budget.limit} this hour` : '';
  const waiting = s.waiting ? ` · ${s.waiting} to deliver` : '';
  return `${s.phase} · ${s.delivered} delivered${waiting} · ${s.requests} API requests${budget}`;
}

/** The summary: what was delivered, what holds the cursor or was skipped, where the cursor is kept. */
export function renderPull(result: PullResult): string {
  // Ids, types, the receiver's answers: all from outside, escaped first.
  const r = escapeStrings(result);
  const lines: string[] = [];
  for (const s of r.skipped) lines.push(`${chalk.yellow('skipped')} ${s.id}  ${s.type}: ${String(s.status ?? s.error ?? '')}`);
  for (const g of r.gone) lines.push(`${chalk.yellow('gone')} ${g.id}  ${g.type}: no longer given by the API`);
  const verdict = r.ok ? chalk.green('OK') : chalk.red(r.held ? 'HELD' : r.unfinished ? 'INTERRUPTED' : 'SKIPPED');
  const counts = r.into === 'inbox' ? `${r.stored} stored, ${r.duplicates} already there` : `${r.delivered} delivered`;
  const parts = [
    `${verdict} pulled ${r.provider} ${r.source}: ${counts}`,
    r.skipped.length ? `${r.skipped.length} skipped` : '',
    r.gone.length ? `${r.gone.length} gone` : '',
    count(r.apiRequests, 'API request'),
    `${(r.elapsedMs / 1000).toFixed(1)}s`,
  ].filter(Boolean);
  lines.push(parts.join(' · '));
  if (r.held)
    lines.push(
      `${chalk.red('held')}: the receiver failed ${r.held.id} (${r.held.type}: ${String(r.held.status ?? r.held.error ?? '')}); the cursor stays before it — the next run delivers it again (--skip-failed moves on)`,
    );
  if (r.unfinished) {
    const u = r.unfinished;
    const last = u.status !== undefined ? String(u.status) : (u.error ?? 'no answer yet');
    lines.push(
      `${chalk.red('interrupted')} while delivering ${u.id} (${u.type}: ${count(u.attempts ?? 0, 'attempt')}, the last ${last}): not acknowledged — the cursor stays before it, and the next run delivers it again`,
    );
  }
  lines.push(`cursor kept in ${r.stateFile}${r.interrupted ? ' (interrupted: the next run resumes from it)' : ''}`);
  return `${lines.join('\n')}\n`;
}
