import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { start } from '../src/receiver/listen.js';
import { ThreadedSqliteInbox } from '../src/inbox/sqlite/threaded.js';
import { hookdrill } from './helpers/cli.js';
import { postSignedStripe, startListen } from './helpers/listen.js';
import { tempDir } from './helpers/tmp.js';

const SECRET = 'whsec_store_stuck';

const deliver = (url: string, id: string) => postSignedStripe(url, id, SECRET);

test('a write lock held by another process: 503 within --store-deadline, /healthz answers that the store is stuck, and the late commit is a duplicate on retry', async () => {
  const inbox = join(tempDir(), 'inbox.db');
  const { p: listen, url } = await startListen(inbox, SECRET, '--no-worker', '--store-deadline', '400ms');
  try {
    assert.equal((await deliver(url, 'evt_before')).status, 200);

    // Another process (an on-call engineer's requeue, a backup tool) takes the write lock and keeps it.
    const other = new Database(inbox);
    other.exec('BEGIN IMMEDIATE');
    try {
      const answer = await deliver(url, 'evt_while_locked');
      assert.equal(answer.status, 503, 'not stored in time: the sender must retry');
      // The process is not frozen behind the lock: /healthz answers while it is still held, and says why.
      const health = await fetch(`${url}healthz`);
      assert.equal(health.status, 503);
      assert.match(String(((await health.json()) as { problem?: string }).problem), /a write has waited .* lock held by another process/);
      // And a request that needs no store is answered at once too.
      assert.equal((await fetch(url, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } })).status, 401);
    } finally {
      other.exec('ROLLBACK');
      other.close();
    }

    // The write that waited goes through once the lock is free: stored, though it was answered 503.
    for (let i = 0; ; i++) {
      if ((await fetch(`${url}healthz`)).status === 200) break;
      if (i > 100) assert.fail('/healthz never became healthy after the lock was released');
      await new Promise((r) => setTimeout(r, 50));
    }
    const retry = await deliver(url, 'evt_while_locked');
    assert.equal(retry.status, 200);
    assert.equal(((await retry.json()) as { duplicate: boolean }).duplicate, true, 'the late commit kept it; the retry is a duplicate');
  } finally {
    listen.child.kill('SIGTERM');
    await listen.exit;
  }
});

test('listen: no 200 leaves before its delivery is readable by another connection (committed), under load from another process', async () => {
  const inboxPath = join(tempDir(), 'inbox.db');
  const answeredBeforeCommit: string[] = [];
  let ok = 0;
  let check: Database.Statement | undefined;
  const handle = await start({
    port: 0,
    provider: 'stripe',
    secrets: [SECRET],
    inbox: inboxPath,
    noWorker: true,
    onRequest: (e) => {
      if (e.status !== 200 || !e.deliveryId) return;
      ok++;
      // Run the moment the answer is written: a second connection sees only committed rows.
      check ??= new Database(inboxPath, { readonly: true }).prepare('SELECT 1 FROM deliveries WHERE delivery_id = ?');
      if (check.get(e.deliveryId) === undefined) answeredBeforeCommit.push(e.deliveryId);
    },
  });
  try {
    const sent = await hookdrill([
      'send',
      '--provider',
      'stripe',
      '--secret',
      SECRET,
      '--url',
      handle.ready.url,
      '--count',
      '400',
      '--concurrency',
      '64',
      '--no-retry',
      '--json',
    ]);
    assert.equal(sent.code, 0, sent.stderr);
    assert.equal(ok, 400);
    assert.deepEqual(answeredBeforeCommit, [], 'a 200 went out before its transaction had committed');
  } finally {
    await handle.stop();
  }
});

test('a writer thread that dies: every write fails at once (never hangs), health says why, close() returns', async () => {
  const inbox = await ThreadedSqliteInbox.open(join(tempDir(), 'inbox.db'), { groupCommit: { maxBatch: 64, maxWaitMs: 0 } });
  const row = { source: 'stripe', deliveryId: 'evt_1', eventType: 'x', body: Buffer.from('{}'), headers: {}, receivedAt: 1 };
  assert.deepEqual(await inbox.put(row), { inserted: true });
  await (inbox as unknown as { thread: { terminate(): Promise<number> } }).thread.terminate();
  await assert.rejects(inbox.put({ ...row, deliveryId: 'evt_2' }), /writer thread stopped/);
  await assert.rejects(inbox.claim({ limit: 1, leaseMs: 1_000 }), /writer thread stopped/);
  const health = await inbox.health();
  assert.equal(health.ok, false);
  assert.match(String(health.problem), /writer thread stopped/);
  await inbox.close();
});
