import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { openInbox } from '../src/inbox/index.js';
import type { Inbox } from '../src/inbox/index.js';
import { STORE_READ_EVERY_MS, createListenMetrics } from '../src/receiver/metrics.js';
import { tempDir } from './helpers/tmp.js';

/**
 * A flood of scrapes must not become a flood of counts on the store that acknowledges deliveries
 * (issue 36: four scrapers took a 1M-row SQLite listen from 3,357 acks to 28 per 15 s). The inbox
 * is listen's own (SQLite, its receiver mode: writer and observation threads), counted as it is read.
 */
test('concurrent scrapes share one read of the store, and it is read again only after the interval', async () => {
  const real = await openInbox(join(tempDir(), 'inbox.db'), { receiver: {} });
  let reads = 0;
  const counted: Inbox = Object.assign(Object.create(real) as Inbox, {
    stats: () => {
      reads++;
      return real.stats();
    },
  });
  let clock = 1_000_000;
  const metrics = createListenMetrics(counted, () => clock);
  try {
    await real.put({
      source: 'stripe',
      deliveryId: 'evt_1',
      eventType: 'x',
      body: Buffer.from('{}'),
      headers: {},
      receivedAt: clock - 10_000,
    });
    const bodies = await Promise.all(Array.from({ length: 50 }, () => metrics.scrape()));
    assert.equal(reads, 1, `50 scrapes at once read the store ${reads} times`);
    for (const b of bodies) assert.match(b.body, /hookdrill_inbox_rows\{status="pending"\} 1/);
    // The age is worked out at each scrape, from the time read: it grows between reads.
    clock += 2_000;
    const later = await metrics.scrape();
    assert.equal(reads, 1);
    assert.match(later.body, /hookdrill_inbox_oldest_pending_age_seconds 12\b/);
    await real.put({ source: 'stripe', deliveryId: 'evt_2', eventType: 'x', body: Buffer.from('{}'), headers: {}, receivedAt: clock });
    clock += STORE_READ_EVERY_MS;
    const fresh = await metrics.scrape();
    assert.equal(reads, 2, 'read again once the interval has passed');
    assert.match(fresh.body, /hookdrill_inbox_rows\{status="pending"\} 2/);
  } finally {
    await real.close();
  }
});
