import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { PermanentError, Worker, backoffDelay } from '../src/worker/index.js';
import type { WorkOutcome } from '../src/worker/index.js';
import type { NewDelivery, Settlement } from '../src/inbox/index.js';
import { ThreadedSqliteInbox } from '../src/inbox/sqlite/threaded.js';
import { tempDir } from './helpers/tmp.js';

const put = (inbox: ReturnType<typeof openSqliteInbox>, id: string, body = `{"id":"${id}"}`) =>
  inbox.put({ source: 'stripe', deliveryId: id, eventType: 'invoice.paid', body: Buffer.from(body), headers: {}, receivedAt: Date.now() });

test('backoff doubles per attempt with equal jitter, capped', () => {
  const opts = { baseMs: 1_000, maxMs: 30_000 };
  assert.equal(
    backoffDelay(1, opts, () => 0),
    500,
  );
  assert.equal(
    backoffDelay(1, opts, () => 1),
    1_000,
  );
  assert.equal(
    backoffDelay(3, opts, () => 0),
    2_000,
  );
  assert.equal(
    backoffDelay(3, opts, () => 1),
    4_000,
  );
  assert.equal(
    backoffDelay(50, opts, () => 1),
    30_000,
  );
  assert.equal(
    backoffDelay(10_000, opts, () => 0.5),
    22_500,
  );
  const spread = new Set(Array.from({ length: 50 }, () => backoffDelay(4, opts)));
  assert.ok(spread.size > 10, 'jitter spreads rows that failed together');
});

test('a failing handler is retried with backoff, then buried after maxAttempts with its last error', async () => {
  const inbox = openSqliteInbox(join(tempDir(), 'inbox.db'));
  await put(inbox, 'evt_1');
  const outcomes: WorkOutcome[] = [];
  let calls = 0;
  const worker = new Worker({
    inbox,
    maxAttempts: 3,
    backoff: { baseMs: 5, maxMs: 5 },
    pollMs: 5,
    handler: async () => {
      calls++;
      throw new Error(`crm said no (${calls})`);
    },
    onOutcome: (o) => outcomes.push(o),
  });
  worker.start();
  while (!outcomes.some((o) => o.outcome === 'dead')) await new Promise((r) => setTimeout(r, 5));
  await worker.stop();
  assert.equal(calls, 3);
  assert.deepEqual(
    outcomes.map((o) => o.outcome),
    ['retry', 'retry', 'dead'],
  );
  const row = await inbox.get({ source: 'stripe', deliveryId: 'evt_1' });
  assert.equal(row?.status, 'dead');
  assert.equal(row?.lastError, 'crm said no (3)');
  assert.equal(row?.attempts, 3);
  await inbox.close();
});

test('an unparseable body, or a PermanentError, is buried at once', async () => {
  const inbox = openSqliteInbox(join(tempDir(), 'inbox.db'));
  await put(inbox, 'evt_junk', '{"id": "evt_junk", ');
  await put(inbox, 'evt_perm');
  let handled = 0;
  const worker = new Worker({
    inbox,
    handler: async (item) => {
      handled++;
      if (item.deliveryId === 'evt_perm') throw new PermanentError('customer deleted');
    },
  });
  await worker.drain();
  assert.equal(handled, 1, 'the handler never sees a body it cannot parse');
  assert.match((await inbox.get({ source: 'stripe', deliveryId: 'evt_junk' }))?.lastError ?? '', /body is not JSON/);
  assert.equal((await inbox.get({ source: 'stripe', deliveryId: 'evt_perm' }))?.status, 'dead');
  assert.equal((await inbox.stats()).counts.dead, 2);
  await inbox.close();
});

test('a worker that dies mid-row releases it when the lease runs out; its late result is discarded', async () => {
  const inbox = openSqliteInbox(join(tempDir(), 'inbox.db'));
  await put(inbox, 'evt_1');
  let release!: () => void;
  const stuck = new Promise<void>((r) => (release = r));
  const first: WorkOutcome[] = [];
  const hung = new Worker({ inbox, leaseMs: 50, handler: () => stuck, onOutcome: (o) => first.push(o) });
  const hungDone = hung.drain();
  await new Promise((r) => setTimeout(r, 80)); // past the lease
  const second: WorkOutcome[] = [];
  const rescuer = new Worker({ inbox, leaseMs: 5_000, handler: async () => undefined, onOutcome: (o) => second.push(o) });
  await rescuer.drain();
  assert.deepEqual(
    second.map((o) => [o.outcome, o.attempt]),
    [['done', 2]],
  );
  release();
  await hungDone;
  assert.deepEqual(
    first.map((o) => [o.outcome, o.attempt]),
    [['fenced', 1]],
  );
  assert.equal((await inbox.get({ source: 'stripe', deliveryId: 'evt_1' }))?.status, 'done');
  await inbox.close();
});

test('stop() lets rows in hand finish and claims nothing new', async () => {
  const inbox = openSqliteInbox(join(tempDir(), 'inbox.db'));
  for (let i = 0; i < 6; i++) await put(inbox, `evt_${i}`);
  let started = 0;
  let finished = 0;
  const worker = new Worker({
    inbox,
    concurrency: 2,
    pollMs: 5,
    handler: async () => {
      started++;
      await new Promise((r) => setTimeout(r, 40));
      finished++;
    },
  });
  worker.start();
  while (started < 2) await new Promise((r) => setTimeout(r, 2));
  await worker.stop();
  assert.equal(finished, started, 'every row started was finished');
  const stats = await inbox.stats();
  assert.equal(stats.counts.working, 0);
  assert.equal(stats.counts.done, finished);
  assert.equal(stats.counts.pending, 6 - finished);
  await inbox.close();
});

const row = (id: string): NewDelivery => ({
  source: 'stripe',
  deliveryId: id,
  eventType: 'invoice.paid',
  body: Buffer.from(`{"id":"${id}"}`),
  headers: { 'stripe-signature': 't=1,v1=x' },
  receivedAt: Date.now(),
});

test('the batched worker: rows claimed together are settled in a few transactions, not one each', async () => {
  const inbox = await ThreadedSqliteInbox.open(join(tempDir(), 'inbox.db'));
  const settled: number[] = [];
  const settle = inbox.settle.bind(inbox);
  inbox.settle = (outcomes: readonly Settlement[]) => {
    settled.push(outcomes.length);
    return settle(outcomes);
  };
  try {
    await Promise.all(Array.from({ length: 300 }, (_, i) => inbox.put(row(`evt_${i}`))));
    const worker = new Worker({ inbox, concurrency: 100, handler: async () => undefined });
    await worker.drain();
    assert.equal((await inbox.stats()).counts.done, 300);
    assert.equal(
      settled.reduce((a, b) => a + b, 0),
      300,
    );
    assert.ok(settled.length <= 30, `300 outcomes took ${settled.length} transactions: ${settled.join(',')}`);
  } finally {
    await inbox.close();
  }
});

test('settle is fenced per outcome inside one transaction: a row another claim took over is left alone', async () => {
  const inbox = openSqliteInbox(join(tempDir(), 'inbox.db'));
  try {
    for (const id of ['a', 'b', 'c']) await inbox.put({ ...row(id), receivedAt: 1_000 });
    const first = await inbox.claim({ limit: 3, leaseMs: 100, now: 2_000 });
    assert.equal(first.length, 3);
    // b's lease runs out and another worker claims it again.
    const [b] = first.filter((r) => r.deliveryId === 'b');
    await inbox.settle(
      first
        .filter((r) => r.deliveryId !== 'b')
        .map((r) => ({ key: r, fence: r.fence, outcome: 'retry', error: 'later', retryInMs: 10_000 })),
      2_050,
    );
    const again = await inbox.claim({ limit: 3, leaseMs: 100, now: 2_200 });
    assert.deepEqual(
      again.map((r) => r.deliveryId),
      ['b'],
    );
    const kept = await inbox.settle(
      [
        { key: { source: 'stripe', deliveryId: 'b' }, fence: b!.fence, outcome: 'done' },
        { key: { source: 'stripe', deliveryId: 'b' }, fence: again[0]!.fence, outcome: 'dead', error: 'boom' },
      ],
      2_250,
    );
    assert.deepEqual(kept, [false, true], 'the stale fence changes nothing; the current one does');
    assert.equal((await inbox.get({ source: 'stripe', deliveryId: 'b' }))?.status, 'dead');
    const a = await inbox.get({ source: 'stripe', deliveryId: 'a' });
    assert.equal(a?.status, 'pending');
    assert.equal(a?.nextAttemptAt, 12_050, 'a retry is due relative to the store clock it was settled at');
  } finally {
    await inbox.close();
  }
});

test('an inbox that fails every outcome of twelve rows in hand is said once, not twelve times; said again only after it worked', async () => {
  const inbox = openSqliteInbox(join(tempDir(), 'inbox.db'));
  for (let i = 0; i < 12; i++) await put(inbox, `evt_down_${i}`);
  let down = true;
  // The database goes away between claim and settle, as Postgres stopping does.
  const failing = new Proxy(inbox, {
    get(target, prop, receiver) {
      if (prop === 'settle' && down)
        return async () => Promise.reject(new Error('Postgres refused the connection (is it running, on that host and port?)'));
      const v = Reflect.get(target, prop, receiver);
      return typeof v === 'function' ? v.bind(target) : v;
    },
  });
  const said: string[] = [];
  const worker = new Worker({
    inbox: failing,
    handler: async () => undefined,
    concurrency: 12,
    leaseMs: 50,
    onError: (e) => said.push((e as Error).message),
  });
  await worker.drain();
  assert.equal(said.length, 1, said.join('\n'));
  down = false;
  await new Promise((r) => setTimeout(r, 60)); // the leases run out
  await worker.drain();
  assert.equal((await inbox.stats()).counts.done, 12);
  down = true;
  await put(inbox, 'evt_down_again');
  await worker.drain();
  assert.equal(said.length, 2, 'a new outage after the inbox worked is said again');
  await inbox.close();
});
