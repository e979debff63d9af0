import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openSqliteInbox } from '../src/inbox/index.js';
import { PermanentError, Worker, backoffDelay } from '../src/worker/index.js';
import type { WorkOutcome } from '../src/worker/index.js';
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
