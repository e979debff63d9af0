import { openSqliteInbox } from '../../src/inbox/sqlite/index.js';
import type { NewDelivery } from '../../src/inbox/index.js';

/**
 * A SQLite inbox at `path` holding these Stripe deliveries, each gone dead with `error` — as a
 * worker leaves them after an outage: what inspect, requeue and replay are tried on.
 */
export async function deadRows(
  path: string,
  rows: readonly (Partial<NewDelivery> & { deliveryId: string })[],
  error: string,
): Promise<string> {
  const inbox = openSqliteInbox(path);
  try {
    for (const r of rows) {
      await inbox.put({
        source: 'stripe',
        eventType: 'invoice.paid',
        body: Buffer.from(JSON.stringify({ id: r.deliveryId, object: 'event', type: r.eventType ?? 'invoice.paid' })),
        headers: {},
        receivedAt: Date.now() - 60_000,
        ...r,
      });
    }
    const claimed = await inbox.claim({ limit: rows.length, leaseMs: 60_000 });
    await inbox.settle(claimed.map((c) => ({ key: c, fence: c.fence, outcome: 'dead' as const, error })));
  } finally {
    await inbox.close();
  }
  return path;
}
