import { UsageError } from '../util/errors.js';
import { parseDuration } from '../util/duration.js';
import { knownProviderNames } from '../providers/names.js';
import { STATUSES } from './types.js';
import { stringsOption } from '../util/shapes.js';
import type { Strings } from '../util/shapes.js';
import type { DeliveryStatus, Selector } from './types.js';

/** The row-selecting flags shared by inspect, requeue and replay. */
export interface SelectorFlags {
  /** Delivery ids: `['evt_1', 'evt_2']`, or one id. */
  ids?: Strings;
  /** `['dead', 'failed']`, `'dead'` or `'dead,failed'`. */
  status?: Strings;
  type?: string;
  since?: string;
  until?: string;
  error?: string;
  /** Only rows with no recorded error. */
  withoutError?: boolean;
  source?: string;
  /** Rows listen gave this route (`listen --route`, the project file's routes). */
  route?: string;
  /** Rows `hookdrill check` sent (marked X-Hookdrill-Check): `false` leaves them out, `true` only them, a run id only that run's. */
  check?: boolean | string;
}

export function parseSelector(flags: SelectorFlags, now = Date.now()): Selector {
  const sel: Selector = {};
  const ids = stringsOption(flags.ids, 'ids');
  if (ids && ids.length > 0) sel.ids = ids;
  const status = stringsOption(flags.status, 'status');
  if (status && status.length > 0) {
    const statuses = status.flatMap((s) => s.split(',')).map((s) => s.trim());
    for (const s of statuses) {
      if (!(STATUSES as readonly string[]).includes(s)) throw new UsageError(`--status ${s}: expected one of ${STATUSES.join(', ')}`);
    }
    sel.statuses = statuses as DeliveryStatus[];
  }
  if (flags.type) sel.type = flags.type;
  if (flags.since) sel.since = parseTime(flags.since, '--since', now);
  if (flags.until) sel.until = parseTime(flags.until, '--until', now);
  if (flags.error) sel.error = flags.error;
  if (flags.withoutError) {
    if (flags.error) throw new UsageError('--error and --without-error say opposite things: choose one');
    sel.noError = true;
  }
  if (flags.source) {
    if (!knownProviderNames().includes(flags.source)) {
      throw new UsageError(`--source ${flags.source}: no such provider (one of: ${knownProviderNames().join(', ')})`);
    }
    sel.source = flags.source;
  }
  if (flags.route !== undefined) {
    if (flags.route.trim() === '') throw new UsageError('--route is empty: give the name of a route (listen prints them at start)');
    sel.route = flags.route.trim();
  }
  if (flags.check !== undefined) {
    if (typeof flags.check !== 'boolean' && (typeof flags.check !== 'string' || flags.check.trim() === ''))
      throw new UsageError('option check: expected true, false or a check run id');
    sel.check = typeof flags.check === 'string' ? flags.check.trim() : flags.check;
  }
  if (sel.since !== undefined && sel.until !== undefined && sel.until <= sel.since) {
    throw new UsageError(`--until ${flags.until} is not after --since ${flags.since}: no row can be in between`);
  }
  return sel;
}

/** An ISO time (2026-11-30T03:00Z, 2026-11-30) or a time ago (90s, 15m, 2h, 3d). */
export function parseTime(text: string, flag: string, now: number): number {
  if (/^\s*\d+(\.\d+)?\s*(ms|s|m|h|d)\s*$/.test(text)) return now - parseDuration(text, flag);
  const t = Date.parse(text);
  if (Number.isNaN(t)) throw new UsageError(`${flag} ${text}: expected an ISO time (2026-11-30T03:00Z) or a time ago (2h)`);
  return t;
}

export function isEmpty(sel: Selector): boolean {
  return Object.keys(sel).length === 0;
}
