import chalk from 'chalk';
import type { PullResult, PullStart, PullStatus, PulledRecord } from '../pull/run.js';
import { safe } from '../util/terminal.js';
import { formatDuration } from '../util/duration.js';

const OUTCOME = {
  delivered: chalk.green('delivered'),
  stored: chalk.green('stored   '),
  duplicate: chalk.dim('duplicate'),
  failed: chalk.red('failed   '),
  skipped: chalk.yellow('skipped  '),
  gone: chalk.yellow('gone     '),
} as const;

/** One event: time, id, type, outcome, the receiver's status, latency. The id and type come from the provider's API: shown escaped. */
export function pulledLine(r: PulledRecord, json: boolean): string {
  if (json) return JSON.stringify({ event: 'pulled', ...r });
  const answer = r.status !== undefined ? String(r.status) : (r.error ?? '');
  const tries = r.attempts && r.attempts > 1 ? ` (${r.attempts} attempts)` : '';
  const latency = r.latencyMs !== undefined ? `  ${r.latencyMs}ms` : '';
  return `${r.at.slice(11, 23)}  ${OUTCOME[r.outcome]}  ${safe(r.id)}  ${safe(r.type)}  ${safe(answer)}${latency}${tries}`;
}

export function noteLine(text: string, json: boolean): string {
  return json ? JSON.stringify({ event: 'note', text }) : `${chalk.yellow('note')}: ${safe(text)}`;
}

/** What the run will do, before the first event: where from, where to, and on what schedule. */
export function startLine(r: PullStart, json: boolean): string {
  if (json) return JSON.stringify({ event: 'start', ...r });
  const from = { resumed: 'from the saved cursor', since: 'from --since', now: 'from now' }[r.start];
  const schedule = r.timing
    ? r.timing.retryDelaysMs.length
      ? `; retries on ${r.timing.profile}'s schedule (${r.timing.retryDelaysMs.map((d) => formatDuration(d)).join(', ')}), --no-retry or --time-scale to shorten`
      : '; one attempt each'
    : '';
  return `pulling ${r.provider} ${safe(r.source)} ${from} → ${safe(r.to)}${r.follow ? ', following' : ''}; cursor in ${safe(r.stateFile)}${schedule}`;
}

/** The status line at a terminal. */
export function statusText(s: PullStatus): string {
  const budget = s.budget ? ` · API budget ${s.budget.remaining}/${s.budget.limit} this hour` : '';
  const waiting = s.waiting ? ` · ${s.waiting} to deliver` : '';
  return `${s.phase} · ${s.delivered} delivered${waiting} · ${s.requests} API requests${budget}`;
}

/** The summary: what was delivered, what holds the cursor or was skipped, where the cursor is kept. */
export function renderPull(r: PullResult): string {
  const lines: string[] = [];
  for (const s of r.skipped)
    lines.push(`${chalk.yellow('skipped')} ${safe(s.id)}  ${safe(s.type)}: ${safe(String(s.status ?? s.error ?? ''))}`);
  for (const g of r.gone) lines.push(`${chalk.yellow('gone')} ${safe(g.id)}  ${safe(g.type)}: no longer given by the API`);
  const verdict = r.ok ? chalk.green('OK') : chalk.red(r.held ? 'HELD' : 'SKIPPED');
  const counts = r.into === 'inbox' ? `${r.stored} stored, ${r.duplicates} already there` : `${r.delivered} delivered`;
  const parts = [
    `${verdict} pulled ${r.provider} ${safe(r.source)}: ${counts}`,
    r.skipped.length ? `${r.skipped.length} skipped` : '',
    r.gone.length ? `${r.gone.length} gone` : '',
    `${r.apiRequests} API requests`,
    `${(r.elapsedMs / 1000).toFixed(1)}s`,
  ].filter(Boolean);
  lines.push(parts.join(' · '));
  if (r.held)
    lines.push(
      `${chalk.red('held')}: the receiver failed ${safe(r.held.id)} (${safe(r.held.type)}: ${safe(String(r.held.status ?? r.held.error ?? ''))}); the cursor stays before it — the next run delivers it again (--skip-failed moves on)`,
    );
  lines.push(`cursor kept in ${safe(r.stateFile)}${r.interrupted ? ' (interrupted: the next run resumes from it)' : ''}`);
  return `${lines.join('\n')}\n`;
}
