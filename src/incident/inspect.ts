import { UsageError } from '../util/errors.js';
import { openInboxForCommand } from '../inbox/open.js';
import { ROW_ORDERS } from '../inbox/index.js';
import type { DeliveryStatus, Inbox, InboxStats, Overview, RowOrder, Selector } from '../inbox/index.js';
import { decodeCursor, encodeCursor } from '../inbox/cursor.js';
import { rowSummary } from '../inbox/row-summary.js';
import { maskCredentials } from '../util/http-headers.js';
import type { RowSummary } from '../inbox/row-summary.js';

export type { RowSummary } from '../inbox/row-summary.js';
import { parseIntFlag } from '../util/options.js';
import { isEmpty, parseSelector } from '../inbox/selector.js';
import type { SelectorFlags } from '../inbox/selector.js';
import { INSPECT_DEFAULTS } from './inspect-defaults.js';

export interface InspectOptions extends SelectorFlags {
  inbox?: string;
  /** One delivery in full. */
  id?: string;
  limit?: string | number;
  /** Which rows a list starts with: `'newest'` (the default: what just arrived) or `'oldest'`. */
  order?: RowOrder;
  /** The next page: the `next` cursor of the page before (rows after its last, in the same order). */
  after?: string;
  now?: number;
}

export type InspectResult =
  | { command: 'inspect'; view: 'overview'; inbox: string; now: number; overview: Overview }
  | {
      command: 'inspect';
      view: 'rows';
      inbox: string;
      now: number;
      selector: Selector;
      order: RowOrder;
      total: number;
      rows: RowSummary[];
      /** More rows follow in this order: pass this as `after` (`--after`) for the next page. */
      next?: string;
    }
  | {
      command: 'inspect';
      view: 'delivery';
      inbox: string;
      now: number;
      deliveries: (RowSummary & { headers: Record<string, string>; body: Buffer | null })[];
    };

/** Read-only: opens the inbox without writing, so it is safe while listen is running. */
export async function run(o: InspectOptions): Promise<InspectResult> {
  const now = o.now ?? Date.now();
  const inbox = await openInboxForCommand(o.inbox, { readonly: true });
  try {
    const location = inbox.location;
    if (o.id !== undefined) {
      const rows = await inbox.select({ ids: [o.id], ...(o.source ? { source: o.source } : {}) }, { limit: 10 });
      if (rows.length === 0) throw new UsageError(`no delivery ${o.id} in ${location}`);
      return {
        command: 'inspect',
        view: 'delivery',
        inbox: location,
        now,
        // A credential stored before hookdrill knew it as one (X-Api-Key) is not shown now.
        deliveries: rows.map((r) => ({ ...rowSummary(r), headers: maskCredentials(r.headers), body: r.body })),
      };
    }
    const selector = parseSelector(o, now);
    const order = o.order ?? INSPECT_DEFAULTS.order;
    if (!ROW_ORDERS.includes(order)) throw new UsageError(`--order ${String(order)}: expected newest or oldest`);
    const after = o.after === undefined ? undefined : decodeCursor(o.after);
    const listing = o.limit !== undefined || o.order !== undefined || after !== undefined;
    if (isEmpty(selector) && !listing) {
      return { command: 'inspect', view: 'overview', inbox: location, now, overview: await inbox.overview(now) };
    }
    // --exclude-check alone is the overview without check's rows, not a list of every other row.
    const { check, ...rest } = selector;
    if (check === false && isEmpty(rest) && !listing) {
      const [overview, stats] = await Promise.all([inbox.overview(now, { excludeCheck: true }), statsWithoutCheck(inbox)]);
      return { command: 'inspect', view: 'overview', inbox: location, now, overview: { ...overview, stats } };
    }
    const limit = parseIntFlag(o.limit, '--limit', 1, 1_000_000, INSPECT_DEFAULTS.limit);
    // One row more than shown says whether there is a next page, without a second query.
    const [found, total] = await Promise.all([
      inbox.select(selector, { limit: limit + 1, order, ...(after ? { after } : {}) }),
      inbox.count(selector),
    ]);
    const rows = found.slice(0, limit);
    const last = rows[rows.length - 1];
    return {
      command: 'inspect',
      view: 'rows',
      inbox: location,
      now,
      selector,
      order,
      total,
      rows: rows.map(rowSummary),
      ...(found.length > limit && last ? { next: encodeCursor(last) } : {}),
    };
  } finally {
    await inbox.close();
  }
}

/**
 * The header's counts without check's rows: the overview's stats count every row, and a header
 * that kept the rows --exclude-check leaves out disagreed with the groups under it.
 */
async function statsWithoutCheck(inbox: Inbox): Promise<InboxStats> {
  const statuses: readonly DeliveryStatus[] = ['pending', 'working', 'done', 'dead'];
  const [numbers, oldest] = await Promise.all([
    Promise.all(statuses.map((s) => inbox.count({ statuses: [s], check: false }))),
    inbox.select({ statuses: ['pending'], check: false }, { limit: 1, order: 'oldest' }),
  ]);
  const counts = Object.fromEntries(statuses.map((s, i) => [s, numbers[i] ?? 0])) as Record<DeliveryStatus, number>;
  return { counts, total: numbers.reduce((a, b) => a + b, 0), oldestPendingAt: oldest[0]?.receivedAt };
}
