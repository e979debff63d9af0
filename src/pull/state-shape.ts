import { EVENT_TYPE } from '../remote/access.js';
import type { FeedPosition, GithubPosition, StripePosition } from './feed.js';

/** A state file as read: what it says, checked field by field. */
export interface SavedState {
  provider: 'stripe' | 'github';
  source: string;
  /**
   * The --type filter its cursor was made under, sorted ([] = every type); undefined for a file
   * written before pull recorded it (version 1).
   */
  types: string[] | undefined;
  position: FeedPosition;
}

/** What is wrong with a parsed state file, as the end of "the state file F …": one clause. */
export type ShapeProblem = { kind: 'foreign' | 'damaged'; detail: string };

/**
 * The state file's JSON checked as pull wrote it, or what is wrong with it. Every time it holds
 * reaches the provider's API as a query (`created[gte]=…`) or a date in a note, so each must be a
 * whole number of unix seconds from 1970 to a day past now: NaN, Infinity, a negative or a far
 * future one would list nothing, everything, or crash the note that dates it. A time past now
 * would skip, without a word, everything until then; a day of slack covers a provider's clock
 * ahead of this one.
 */
export function parseStateShape(value: unknown, nowSeconds: number): SavedState | ShapeProblem {
  const foreign = (detail: string): ShapeProblem => ({ kind: 'foreign', detail });
  const damaged = (detail: string): ShapeProblem => ({ kind: 'damaged', detail });
  if (!isObject(value)) return foreign(`it holds ${describe(value)}, not an object`);
  if (value.version !== 1 && value.version !== 2) return foreign(`its version is ${describe(value.version)}, not 1 or 2`);
  if (value.provider !== 'stripe' && value.provider !== 'github') return foreign(`its provider is ${describe(value.provider)}`);
  const provider = value.provider;
  if (typeof value.source !== 'string' || value.source === '') return damaged(`source is ${describe(value.source)}, not a name`);
  let types: string[] | undefined;
  if (value.version === 2) {
    if (!Array.isArray(value.types)) return damaged(`types is ${describe(value.types)}, not a list of event types`);
    for (const t of value.types as unknown[])
      if (typeof t !== 'string' || !EVENT_TYPE.test(t)) return damaged(`types holds ${describe(t)}, not an event type`);
    types = [...new Set(value.types as string[])].sort();
  }
  const position = value.position;
  if (!isObject(position)) return damaged(`position is ${describe(position)}, not an object`);
  const limit = nowSeconds + FUTURE_SLACK_SECONDS;
  const time = (v: unknown, path: string): number | ShapeProblem =>
    typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 && v <= limit
      ? v
      : damaged(`position.${path} is ${describe(v)}, not a time (whole unix seconds, from 1970 to now)`);

  if (!isObject(position.seen)) return damaged(`position.seen is ${describe(position.seen)}, not an object of id → unix seconds`);
  const seen: [string, number][] = [];
  for (const [id, at] of Object.entries(position.seen)) {
    const t = time(at, `seen["${id.slice(0, 40)}"]`);
    if (typeof t !== 'number') return t;
    seen.push([id, t]);
  }
  let floor: number | undefined;
  if (position.floor !== undefined) {
    const t = time(position.floor, 'floor');
    if (typeof t !== 'number') return t;
    floor = t;
  }
  const c = position.cursor;
  if (c === undefined && floor === undefined) return damaged('position has neither a cursor nor a floor: it does not say where to resume');
  if (c !== undefined && !isObject(c)) return damaged(`position.cursor is ${describe(c)}, not an object`);
  // Object.fromEntries defines each id as its own property: an id such as "__proto__" stays an id.
  const base = { seen: Object.fromEntries(seen), ...(floor !== undefined ? { floor } : {}) };
  if (provider === 'stripe') {
    const out: StripePosition = base;
    if (isObject(c)) {
      if (!isId(c.id)) return damaged(`position.cursor.id is ${describe(c.id)}, not an event id`);
      const created = time(c.created, 'cursor.created');
      if (typeof created !== 'number') return created;
      out.cursor = { id: c.id, created };
    }
    return { provider, source: value.source, types, position: out };
  }
  const out: GithubPosition = base;
  if (isObject(c)) {
    if (typeof c.id !== 'number' || !Number.isSafeInteger(c.id) || c.id < 0)
      return damaged(`position.cursor.id is ${describe(c.id)}, not a delivery id`);
    if (!isId(c.guid)) return damaged(`position.cursor.guid is ${describe(c.guid)}, not a delivery guid`);
    const at = time(c.at, 'cursor.at');
    if (typeof at !== 'number') return at;
    out.cursor = { id: c.id, guid: c.guid, at };
  }
  return { provider, source: value.source, types, position: out };
}

/** How far past the local clock a saved time may be: a provider's clock may run ahead of this one. */
const FUTURE_SLACK_SECONDS = 24 * 60 * 60;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function isId(v: unknown): v is string {
  return typeof v === 'string' && v.length > 0 && v.length <= 255;
}

/** A value as the one line shows it: a number as itself, anything else by its kind. */
function describe(v: unknown): string {
  if (typeof v === 'number') return String(v);
  if (v === undefined) return 'missing';
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'string') return v.length <= 40 ? `a string (${JSON.stringify(v)})` : 'a long string';
  return `a ${typeof v}`;
}
