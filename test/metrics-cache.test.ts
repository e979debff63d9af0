import assert from 'node:assert/strict';
import { connect } from 'node:net';
import { join } from 'node:path';
import { test } from 'node:test';
import { openInbox } from '../src/inbox/index.js';
import type { Inbox } from '../src/inbox/index.js';
import { RENDER_EVERY_MS, STORE_READ_EVERY_MS, createListenMetrics } from '../src/receiver/metrics.js';
import { MAX_WAITING, SCRAPES_PER_SECOND } from '../src/receiver/scrape-pace.js';
import { postSignedStripe, startListen, stopAll } from './helpers/listen.js';
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

test('a flood of scrapes shares one rendering a second: counters are at most RENDER_EVERY_MS old, then current', async () => {
  const inbox = await openInbox(join(tempDir(), 'inbox.db'), { receiver: {} });
  let clock = 5_000_000;
  const metrics = createListenMetrics(inbox, () => clock);
  const stored = (body: string) => Number(/hookdrill_deliveries_total\{result="stored"\} (\d+)/.exec(body)?.[1] ?? 0);
  try {
    metrics.request({ status: 200, result: 'stored', ms: 3 });
    assert.equal(stored((await metrics.scrape()).body), 1);
    metrics.request({ status: 200, result: 'stored', ms: 3 });
    clock += RENDER_EVERY_MS - 1;
    assert.equal(stored((await metrics.scrape()).body), 1, 'served again within the second');
    clock += 1;
    assert.equal(stored((await metrics.scrape()).body), 2, 'rendered afresh once the second has passed');
  } finally {
    await inbox.close();
  }
});

/** GET /metrics over one keep-alive socket, back to back, until `until`: how many were answered, by status. */
function scrapeLoop(port: number, until: number): Promise<Record<string, number>> {
  return new Promise((resolve) => {
    const answers: Record<string, number> = {};
    const socket = connect(port, '127.0.0.1');
    let buffered = Buffer.alloc(0);
    const ask = () => {
      if (Date.now() >= until) {
        socket.destroy();
        return resolve(answers);
      }
      socket.write('GET /metrics HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n');
    };
    socket.on('data', (d: Buffer) => {
      buffered = Buffer.concat([buffered, d]);
      for (;;) {
        const end = buffered.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buffered.subarray(0, end).toString('latin1');
        const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
        if (buffered.length < end + 4 + length) return;
        const status = /^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? '?';
        answers[status] = (answers[status] ?? 0) + 1;
        buffered = buffered.subarray(end + 4 + length);
        ask();
      }
    });
    socket.on('error', () => resolve(answers));
    socket.once('connect', ask);
  });
}

test('listen answers at most SCRAPES_PER_SECOND scrapes a second, however many loop back to back; past MAX_WAITING turns, 429 with Retry-After', async () => {
  const secret = 'whsec_test_scrape_pace';
  const { p, url } = await startListen(join(tempDir(), 'inbox.db'), secret, '--no-worker');
  try {
    const port = Number(new URL(url).port);
    const t0 = Date.now();
    const loops = await Promise.all(Array.from({ length: 4 }, () => scrapeLoop(port, t0 + 1_500)));
    const seconds = (Date.now() - t0) / 1000;
    const served = loops.reduce((n, a) => n + (a['200'] ?? 0), 0);
    // Unpaced, four loops got thousands a second here; paced, one every 50 ms (and the first at once).
    assert.ok(served >= 5, `only ${served} scrapes answered in ${seconds.toFixed(1)} s`);
    assert.ok(served <= 1 + Math.ceil(seconds * SCRAPES_PER_SECOND) + 1, `${served} scrapes answered in ${seconds.toFixed(1)} s`);
    assert.equal((await postSignedStripe(url, 'evt_paced', secret)).status, 200, 'deliveries are not paced');

    // A crowd at once: MAX_WAITING wait their turn, the rest are told when to come back.
    const c0 = Date.now();
    const crowd = await Promise.all(
      Array.from({ length: MAX_WAITING + 20 }, () =>
        fetch(new URL('/metrics', url)).then(async (r) => ({
          status: r.status,
          retry: r.headers.get('retry-after'),
          text: await r.text(),
        })),
      ),
    );
    const crowdSeconds = (Date.now() - c0) / 1000;
    const busy = crowd.filter((r) => r.status === 429);
    const answered = crowd.filter((r) => r.status === 200);
    assert.ok(busy.length >= 1, `none of ${crowd.length} at once was told 429`);
    assert.equal(busy.length + answered.length, crowd.length, 'every scrape is answered 200 or 429');
    assert.ok(answered.length <= MAX_WAITING + 2 + Math.ceil(crowdSeconds * SCRAPES_PER_SECOND), `${answered.length} answered`);
    for (const r of busy) assert.equal(r.retry, '1');
    for (const r of answered) assert.match(r.text, /# TYPE hookdrill_deliveries_total counter/);
  } finally {
    await stopAll(p);
  }
});
