import { UsageError } from '../util/errors.js';
import { openInboxForCommand } from '../inbox/open.js';
import type { Overview, Selector } from '../inbox/index.js';
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
  now?: number;
}

export type InspectResult =
  | { command: 'inspect'; view: 'overview'; inbox: string; now: number; overview: Overview }
  | { command: 'inspect'; view: 'rows'; inbox: string; now: number; selector: Selector; total: number; rows: RowSummary[] }
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
    if (isEmpty(selector) && o.limit === undefined) {
      return { command: 'inspect', view: 'overview', inbox: location, now, overview: await inbox.overview(now) };
    }
    const limit = parseIntFlag(o.limit, '--limit', 1, 1_000_000, INSPECT_DEFAULTS.limit);
    const [rows, total] = await Promise.all([inbox.select(selector, { limit }), inbox.count(selector)]);
    return { command: 'inspect', view: 'rows', inbox: location, now, selector, total, rows: rows.map(rowSummary) };
  } finally {
    await inbox.close();
  }
}
