import type { DeliveryStatus, Selector, StoredDelivery } from '../types.js';
import { CHECK_HEADER } from '../types.js';

/*
 * How a delivery is kept in a BullMQ job, and how a job (its fields, its state) reads back as a
 * stored delivery. Pure: no Redis here.
 */

/** What a job holds: the delivery, its bytes as base64. `nonce` comes first: a put reads it back. */
export interface JobData {
  nonce: string;
  source: string;
  deliveryId: string;
  eventType: string | null;
  headers: Record<string, string>;
  body: string;
  receivedAt: number;
  /** The route listen gave it; absent or null: none. */
  route?: string | null;
}

/** BullMQ's states, as its keys name them. */
export type RawState = 'wait' | 'paused' | 'prioritized' | 'waiting-children' | 'delayed' | 'active' | 'completed' | 'failed';

export const STATES_OF: Record<DeliveryStatus, readonly RawState[]> = {
  pending: ['wait', 'paused', 'prioritized', 'waiting-children', 'delayed'],
  working: ['active'],
  done: ['completed'],
  dead: ['failed'],
};
export const STATUS_OF: Record<RawState, DeliveryStatus> = {
  wait: 'pending',
  paused: 'pending',
  prioritized: 'pending',
  'waiting-children': 'pending',
  delayed: 'pending',
  active: 'working',
  completed: 'done',
  failed: 'dead',
};
export const LISTS: ReadonlySet<RawState> = new Set<RawState>(['wait', 'paused', 'active']);

/** The delayed set's score holds the due time times 4096 (BullMQ keeps an order counter in the low bits). */
export const DELAY_SCORE = 0x1000;

export const CHUNK = 500;

/** The job fields a stored delivery is made of, in this order. */
export const FIELDS = ['data', 'failedReason', 'ats', 'finishedOn'] as const;

export interface Entry {
  id: string;
  state: RawState;
  /** Delayed: the due time; completed/failed: finishedOn (both from the sets' scores). */
  score?: number;
}

export type Row = StoredDelivery & { id: string; state: RawState };

export function rawState(state: string | undefined): RawState | undefined {
  switch (state) {
    case 'waiting':
    case 'wait':
      return 'wait';
    case 'paused':
    case 'prioritized':
    case 'waiting-children':
    case 'delayed':
    case 'active':
    case 'completed':
    case 'failed':
      return state;
    default:
      return undefined;
  }
}

export function statesFor(statuses: readonly DeliveryStatus[] | undefined): RawState[] {
  const wanted = statuses && statuses.length > 0 ? statuses : (['pending', 'working', 'done', 'dead'] as const);
  return [...new Set(wanted.flatMap((s) => STATES_OF[s]))];
}

export function inWindow(t: number, sel: Selector): boolean {
  return (sel.since === undefined || t >= sel.since) && (sel.until === undefined || t < sel.until);
}

export function matches(r: Row, sel: Selector): boolean {
  if (sel.source && r.source !== sel.source) return false;
  if (sel.route && r.route !== sel.route) return false;
  if (sel.ids && sel.ids.length > 0 && !sel.ids.includes(r.deliveryId)) return false;
  if (sel.statuses && sel.statuses.length > 0 && !sel.statuses.includes(r.status)) return false;
  if (sel.type && r.eventType !== sel.type) return false;
  if (!inWindow(r.receivedAt, sel)) return false;
  if (sel.error && !(r.lastError?.includes(sel.error) ?? false)) return false;
  if (sel.noError && r.lastError) return false;
  if (sel.check !== undefined) {
    const mark = r.headers[CHECK_HEADER];
    if (typeof sel.check === 'string' ? mark !== sel.check : sel.check !== (mark !== undefined)) return false;
  }
  return true;
}

type Receipt = Pick<Row, 'receivedAt' | 'source' | 'deliveryId'>;

export function byReceipt(a: Receipt, b: Receipt): number {
  return a.receivedAt - b.receivedAt || cmp(a.source, b.source) || cmp(a.deliveryId, b.deliveryId);
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export function toRow(e: Entry, fields: (string | null)[] | undefined, extra: number | undefined, now: number): Row | undefined {
  const [data, failedReason, ats, finishedOn] = fields ?? [];
  if (!data) return undefined;
  let d: JobData;
  try {
    d = JSON.parse(data) as JobData;
  } catch {
    return undefined;
  }
  // A job hookdrill did not put (no delivery in it) is not a row.
  if (typeof d?.source !== 'string' || typeof d.deliveryId !== 'string') return undefined;
  const status = STATUS_OF[e.state];
  const finishedAt = (status === 'done' || status === 'dead') && finishedOn ? Number(finishedOn) : undefined;
  let nextAttemptAt: number;
  if (e.state === 'delayed') nextAttemptAt = e.score ?? extra ?? d.receivedAt;
  else if (e.state === 'active') nextAttemptAt = now + Math.max(0, extra ?? 0);
  else nextAttemptAt = finishedAt ?? d.receivedAt;
  return {
    id: e.id,
    state: e.state,
    source: d.source,
    deliveryId: d.deliveryId,
    eventType: d.eventType ?? undefined,
    body: typeof d.body === 'string' ? Buffer.from(d.body, 'base64') : null,
    headers: d.headers ?? {},
    receivedAt: d.receivedAt,
    status,
    attempts: Number(ats ?? 0) || 0,
    nextAttemptAt,
    // Done rows carry no error (as on the SQL backends); a pending one keeps its last attempt's.
    lastError: status === 'done' ? undefined : failedReason || undefined,
    finishedAt,
    ...(typeof d.route === 'string' ? { route: d.route } : {}),
  };
}

export function stored(r: Row): StoredDelivery {
  const { id: _id, state: _state, ...rest } = r;
  return rest;
}
