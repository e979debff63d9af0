import { UsageError } from '../../errors.js';
import { openInboxForCommand } from '../../inbox/open.js';
import type { Overview, Selector, StoredDelivery } from '../../inbox/index.js';
import { parseIntFlag } from '../../options.js';
import { isEmpty, parseSelector } from '../../selector.js';
import type { SelectorFlags } from '../../selector.js';
import { INSPECT_DEFAULTS } from './defaults.js';

export interface InspectOptions extends SelectorFlags {
  inbox?: string;
  /** One delivery in full. */
  id?: string;
  limit?: string | number;
  now?: number;
}

/** A row as inspect shows it: without its body (see --id … --body). */
export interface RowSummary {
  source: string;
  deliveryId: string;
  eventType: string | undefined;
  status: StoredDelivery['status'];
  attempts: number;
  receivedAt: number;
  nextAttemptAt: number | undefined;
  lastError: string | undefined;
  finishedAt: number | undefined;
  bytes: number | null;
}

export type InspectResult =
  | { command: 'inspect'; view: 'overview'; inbox: string; now: number; overview: Overview }
  | { command: 'inspect'; view: 'rows'; inbox: string; now: number; selector: Selector; total: number; rows: RowSummary[] }
  | { command: 'inspect'; view: 'delivery'; inbox: string; now: number; deliveries: (RowSummary & { headers: Record<string, string>; body: Buffer | null })[] };

export function summarize(r: StoredDelivery): RowSummary {
  return {
    source: r.source,
    deliveryId: r.deliveryId,
    eventType: r.eventType,
    status: r.status,
    attempts: r.attempts,
    receivedAt: r.receivedAt,
    // For a done or dead row the stored next-attempt time means nothing.
    nextAttemptAt: r.status === 'pending' || r.status === 'working' ? r.nextAttemptAt : undefined,
    lastError: r.lastError,
    finishedAt: r.finishedAt,
    bytes: r.body === null ? null : r.body.length,
  };
}

/** Read-only: opens the inbox without writing, so it is safe while listen is running. */
export async function run(o: InspectOptions): Promise<InspectResult> {
  const now = o.now ?? Date.now();
  const inbox = await openInboxForCommand(o.inbox, { readonly: true });
  try {
    const location = inbox.location;
    if (o.id !== undefined) {
      const rows = await inbox.select({ ids: [o.id], ...(o.source ? { source: o.source } : {}) }, { limit: 10 });
      if (rows.length === 0) throw new UsageError(`no delivery ${o.id} in ${location}`);
      return { command: 'inspect', view: 'delivery', inbox: location, now, deliveries: rows.map((r) => ({ ...summarize(r), headers: r.headers, body: r.body })) };
    }
    const selector = parseSelector(o, now);
    if (isEmpty(selector) && o.limit === undefined) {
      return { command: 'inspect', view: 'overview', inbox: location, now, overview: await inbox.overview(now) };
    }
    const limit = parseIntFlag(o.limit, '--limit', 1, 1_000_000, INSPECT_DEFAULTS.limit);
    const [rows, total] = await Promise.all([inbox.select(selector, { limit }), inbox.count(selector)]);
    return { command: 'inspect', view: 'rows', inbox: location, now, selector, total, rows: rows.map(summarize) };
  } finally {
    await inbox.close();
  }
}
