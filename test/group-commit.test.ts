import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run as chaos } from '../src/chaos/run.js';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import type { NewDelivery } from '../src/inbox/index.js';
import { providers } from '../src/providers/index.js';
import type { ReceiverEvent } from '../src/receiver/index.js';
import { createReceiverServer, listen } from '../src/receiver/server.js';
import { BIN, hookdrill } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { postSignedStripe } from './helpers/listen.js';
import { tempDir } from './helpers/tmp.js';

const SECRET = 'whsec_group_commit';
const PRINT_DONE = fileURLToPath(new URL('./receivers/print-done.js', import.meta.url));

const signedPost = (url: string, id: string) => postSignedStripe(url, id, SECRET);

/**
 * The receiver with group commit on an instrumented inbox: the moment each transaction has
 * committed is recorded, and each answer is checked against it as it is sent.
 */
async function instrumented(fail = false) {
  const path = join(tempDir(), 'inbox.db');
  const inbox = openSqliteInbox(path);
  const committed = new Set<string>();
  const putMany = inbox.putMany.bind(inbox);
  inbox.putMany = async (rows: readonly NewDelivery[]) => {
    if (fail) throw new Error('disk on fire');
    const results = await putMany(rows); // returns only once the transaction has committed
    for (const r of rows) committed.add(r.deliveryId);
    return results;
  };
  const group = inbox.useGroupCommit({ maxBatch: 64, maxWaitMs: 0 });
  const answeredBeforeCommit: string[] = [];
  const events: ReceiverEvent[] = [];
  const server = createReceiverServer({
    provider: providers.stripe,
    secrets: [SECRET],
    inbox,
    onRequest: (e) => {
      events.push(e);
      if (e.status === 200 && e.deliveryId && !committed.has(e.deliveryId)) answeredBeforeCommit.push(e.deliveryId);
    },
  });
  const { port } = await listen(server, 0, '127.0.0.1');
  return {
    url: `http://127.0.0.1:${port}/`,
    inbox,
    group,
    events,
    answeredBeforeCommit,
    close: async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
      await inbox.close();
    },
  };
}

test('group commit under load from another process: every delivery stored, and none answered 200 before its transaction committed', async () => {
  const r = await instrumented();
  try {
    // The load comes from another process, as a provider's would: 64 requests in flight at once.
    const sent = await hookdrill([
      'send',
      '--provider',
      'stripe',
      '--secret',
      SECRET,
      '--url',
      r.url,
      '--count',
      '400',
      '--concurrency',
      '64',
      '--no-retry',
      '--json',
    ]);
    assert.equal(sent.code, 0, sent.stderr);
    assert.equal(r.events.filter((e) => e.status === 200).length, 400);
    assert.deepEqual(r.answeredBeforeCommit, [], 'a 200 went out before its transaction had committed');
    assert.equal((await r.inbox.stats()).total, 400);
    assert.equal(
      r.group.batches.reduce((a, b) => a + b, 0),
      400,
    );
  } finally {
    await r.close();
  }
});

test('group commit: puts made together share one transaction; copies of a key in it — the first stored, the rest duplicates', async () => {
  const inbox = openSqliteInbox(join(tempDir(), 'inbox.db'));
  const group = inbox.useGroupCommit({ maxBatch: 100, maxWaitMs: 0 });
  const row = (id: string): NewDelivery => ({
    source: 'stripe',
    deliveryId: id,
    eventType: 'x',
    body: Buffer.from('{}'),
    headers: {},
    receivedAt: Date.now(),
  });
  try {
    const results = await Promise.all([
      ...Array.from({ length: 50 }, (_, i) => inbox.put(row(`evt_${i}`))),
      ...Array.from({ length: 8 }, () => inbox.put(row('evt_same'))),
    ]);
    assert.deepEqual(group.batches, [58], 'one transaction for all of them');
    assert.equal(results.slice(0, 50).filter((r) => r.inserted).length, 50);
    assert.deepEqual(
      results.slice(50).map((r) => r.inserted),
      [true, false, false, false, false, false, false, false],
    );
    assert.equal((await inbox.stats()).total, 51);
    const more = await Promise.all(Array.from({ length: 250 }, (_, i) => inbox.put(row(`evt_more_${i}`))));
    assert.equal(more.length, 250);
    assert.deepEqual(group.batches.slice(1), [100, 100, 50], '--commit-batch bounds a transaction');
  } finally {
    await inbox.close();
  }
});

test('group commit: a transaction that fails answers 503 to every delivery in it', async () => {
  const r = await instrumented(true);
  try {
    const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => signedPost(r.url, `evt_gc_fail_${i}`)));
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(10).fill(503),
    );
    assert.ok(r.events.every((e) => e.result === 'store_failed' && /disk on fire/.test(e.reason ?? '')));
  } finally {
    await r.close();
  }
});

test('chaos --kill-point random against listen with group commit and its worker: nothing acknowledged lost', async () => {
  const inbox = join(tempDir(), 'inbox.db');
  const port = await freePort();
  const result = await chaos({
    receiver: `node ${BIN} listen --provider stripe --secret ${SECRET} --port ${port} --inbox ${inbox} --commit-batch 64 --lease 500ms`,
    url: `http://127.0.0.1:${port}/`,
    provider: 'stripe',
    secrets: [SECRET],
    inbox,
    processed: `node ${PRINT_DONE} ${inbox}`,
    events: 20,
    concurrency: 16,
    rounds: 5,
    killPoint: 'random',
    settle: '300ms',
  });
  assert.deepEqual(result.totals.lost, [], JSON.stringify(result.problems));
  assert.deepEqual(result.totals.notProcessed, []);
  assert.equal(result.ok, true, JSON.stringify(result.problems));
});

test('the batcher keeps a bounded history of transaction sizes: a receiver running for weeks must not grow it for ever', async () => {
  const { Batcher } = await import('../src/inbox/batch.js');
  const b = new Batcher<number, number>(async (items) => items.map((x) => x * 2), { maxBatch: 1, maxWaitMs: 0 });
  for (let i = 0; i < 1_500; i++) assert.equal(await b.add(i), i * 2);
  assert.equal(b.batches.length, 1_000);
});
