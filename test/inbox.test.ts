import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { InboxOpenError, openSqliteInbox } from '../src/inbox/sqlite/index.js';
import type { NewDelivery } from '../src/inbox/index.js';
import { tempDir } from './helpers/tmp.js';
import { CLAIM } from '../src/inbox/sqlite/statements.js';

function delivery(id: string, receivedAt = 1_000, body = `{"id":"${id}"}`): NewDelivery {
  return {
    source: 'stripe',
    deliveryId: id,
    eventType: 'invoice.paid',
    body: Buffer.from(body),
    headers: { 'stripe-signature': 't=1,v1=ab' },
    receivedAt,
  };
}

test('put is idempotent on (source, delivery id) and keeps the raw bytes exactly', async () => {
  const inbox = openSqliteInbox(join(tempDir(), 'inbox.db'));
  const raw = Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x00, 0x7d]); // not valid UTF-8: bytes, not text
  assert.deepEqual(await inbox.put({ ...delivery('evt_1'), body: raw }), { inserted: true });
  assert.deepEqual(await inbox.put({ ...delivery('evt_1'), body: Buffer.from('other') }), { inserted: false });
  assert.deepEqual(await inbox.put({ ...delivery('evt_1'), source: 'github' }), { inserted: true });
  const row = await inbox.get({ source: 'stripe', deliveryId: 'evt_1' });
  assert.ok(row?.body?.equals(raw));
  assert.equal(row?.status, 'pending');
  assert.deepEqual(row?.headers, { 'stripe-signature': 't=1,v1=ab' });
  assert.equal((await inbox.stats()).counts.pending, 2);
  await inbox.close();
});

test('the file is WAL with synchronous=FULL, marked as ours, with a migration ledger', async () => {
  const path = join(tempDir(), 'inbox.db');
  const inbox = openSqliteInbox(path);
  await inbox.close();
  const db = new Database(path, { readonly: true });
  assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  assert.equal(db.pragma('application_id', { simple: true }), 0x686b6472);
  assert.deepEqual(db.prepare('SELECT version, name FROM hookdrill_migrations').all(), [
    { version: 1, name: 'deliveries' },
    { version: 2, name: 'requeue_log' },
    { version: 3, name: 'attempt_base' },
    { version: 4, name: 'claim_index' },
    { version: 5, name: 'drop_due_index' },
    { version: 6, name: 'route' },
  ]);
  // The indexes every put, claim and outcome keeps, and no more.
  assert.deepEqual(
    (
      db
        .prepare(`SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'deliveries' AND sql IS NOT NULL ORDER BY name`)
        .all() as { name: string }[]
    ).map((r) => r.name),
    ['deliveries_claim', 'deliveries_received', 'deliveries_status_error'],
  );
  db.close();
  // Opening again migrates nothing twice.
  const again = openSqliteInbox(path);
  await again.close();
});

test('claim takes the oldest due rows with a lease; an expired lease is claimed again with a new attempt', async () => {
  const inbox = openSqliteInbox(join(tempDir(), 'inbox.db'));
  await inbox.put(delivery('evt_b', 2_000));
  await inbox.put(delivery('evt_a', 1_000));
  await inbox.put(delivery('evt_c', 3_000));
  const first = await inbox.claim({ limit: 2, leaseMs: 500, now: 10_000 });
  assert.deepEqual(
    first.map((c) => [c.deliveryId, c.attempt]),
    [
      ['evt_a', 1],
      ['evt_b', 1],
    ],
  );
  // Under lease: not claimable; the third row is.
  assert.deepEqual(
    (await inbox.claim({ limit: 5, leaseMs: 500, now: 10_100 })).map((c) => c.deliveryId),
    ['evt_c'],
  );
  assert.equal((await inbox.stats()).counts.working, 3);
  // The first worker died: its lease runs out at 10_500, and the rows come back with attempt 2.
  assert.deepEqual(await inbox.claim({ limit: 5, leaseMs: 500, now: 10_499 }), []);
  const again = await inbox.claim({ limit: 5, leaseMs: 500, now: 10_500 });
  assert.deepEqual(
    again.map((c) => [c.deliveryId, c.attempt]),
    [
      ['evt_a', 2],
      ['evt_b', 2],
    ],
  );
  await inbox.close();
});

test('complete and fail are fenced on the attempt: a late worker cannot overwrite the new outcome', async () => {
  const inbox = openSqliteInbox(join(tempDir(), 'inbox.db'));
  const key = { source: 'stripe', deliveryId: 'evt_1' };
  await inbox.put(delivery('evt_1'));
  const [slow] = await inbox.claim({ limit: 1, leaseMs: 100, now: 5_000 });
  const [fast] = await inbox.claim({ limit: 1, leaseMs: 100, now: 5_200 }); // the slow one's lease ran out
  assert.equal(slow?.attempt, 1);
  assert.equal(fast?.attempt, 2);
  assert.equal(await inbox.fail(key, 2, 'crm down', { retryAt: 9_000 }, 5_300), true);
  // The slow worker finishes late: neither its success nor its failure lands.
  assert.equal(await inbox.complete(key, 1, 5_400), false);
  assert.equal(await inbox.fail(key, 1, 'late', { dead: true }, 5_400), false);
  const row = await inbox.get(key);
  assert.equal(row?.status, 'pending');
  assert.equal(row?.nextAttemptAt, 9_000);
  assert.equal(row?.lastError, 'crm down');
  const [third] = await inbox.claim({ limit: 1, leaseMs: 100, now: 9_000 });
  assert.equal(await inbox.complete(key, third!.fence, 9_050), true);
  assert.equal((await inbox.get(key))?.status, 'done');
  assert.equal((await inbox.get(key))?.finishedAt, 9_050);
  await inbox.close();
});

test('requeue moves only finished rows; prune drops done payloads but keeps the key', async () => {
  const inbox = openSqliteInbox(join(tempDir(), 'inbox.db'));
  for (const id of ['dead', 'working', 'done']) await inbox.put(delivery(id));
  const claimed = await inbox.claim({ limit: 3, leaseMs: 60_000, now: 2_000 });
  const by = (id: string) => claimed.find((c) => c.deliveryId === id)!;
  await inbox.fail({ source: 'stripe', deliveryId: 'dead' }, by('dead').fence, 'boom', { dead: true }, 2_100);
  await inbox.complete({ source: 'stripe', deliveryId: 'done' }, by('done').fence, 2_100);
  const keys = ['dead', 'working', 'done'].map((deliveryId) => ({ source: 'stripe', deliveryId }));
  assert.equal(await inbox.requeue(keys, { resetAttempts: true, now: 3_000 }), 2);
  assert.equal((await inbox.get(keys[1]!))?.status, 'working', 'a row under lease is never touched');
  assert.equal((await inbox.get(keys[0]!))?.attempts, 0);
  assert.equal((await inbox.get(keys[0]!))?.status, 'pending');
  assert.equal(await inbox.requeue(keys, { now: 3_000 }), 0, 'requeued twice: nothing moves, nothing duplicates');

  const [again] = await inbox.claim({ limit: 1, leaseMs: 10, now: 3_000 });
  await inbox.complete({ source: 'stripe', deliveryId: again!.deliveryId }, again!.fence, 3_001);
  assert.equal(await inbox.prune(4_000), 1);
  const pruned = await inbox.get({ source: 'stripe', deliveryId: again!.deliveryId });
  assert.equal(pruned?.body, null);
  assert.deepEqual(await inbox.put(delivery(again!.deliveryId)), { inserted: false }, 'the pruned key still dedupes');
  await inbox.close();
});

test('refuses a file that is not a hookdrill inbox, or is from a newer hookdrill, and writes nothing', async () => {
  const dir = tempDir();
  const text = join(dir, 'notes.txt');
  writeFileSync(text, 'these are my notes, not a database\n'.repeat(200));
  const before = readFileSync(text);
  assert.throws(
    () => openSqliteInbox(text),
    (err: unknown) => err instanceof InboxOpenError && /not a hookdrill inbox \(not a SQLite database\)/.test(err.message),
  );
  assert.ok(readFileSync(text).equals(before));

  const other = join(dir, 'app.db');
  const db = new Database(other);
  db.exec('CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)');
  db.close();
  const size = statSync(other).size;
  assert.throws(() => openSqliteInbox(other), /app.db is not a hookdrill inbox \(a SQLite database of something else\)/);
  assert.equal(statSync(other).size, size);
  const check = new Database(other, { readonly: true });
  assert.equal(check.pragma('journal_mode', { simple: true }), 'delete', 'not switched to WAL');
  check.close();

  const newer = join(dir, 'newer.db');
  await openSqliteInbox(newer).close();
  const n = new Database(newer);
  n.prepare('INSERT INTO hookdrill_migrations (version, name, applied_at) VALUES (99, ?, 0)').run('from the future');
  n.close();
  assert.throws(() => openSqliteInbox(newer), /schema version 99, made by a newer hookdrill/);

  assert.throws(() => openSqliteInbox(join(dir, 'missing.db'), { readonly: true }), /no inbox at/);
  assert.throws(() => openSqliteInbox(join(dir, 'no', 'such', 'dir.db')), /cannot open inbox/);
  assert.throws(() => openSqliteInbox(dir), /is a directory/);
});

test('requeue --reset-attempts restarts the count but never reopens an old fence', async () => {
  const inbox = openSqliteInbox(join(tempDir(), 'inbox.db'));
  const key = { source: 'stripe', deliveryId: 'evt_1' };
  await inbox.put(delivery('evt_1'));
  const [stale] = await inbox.claim({ limit: 1, leaseMs: 100, now: 1_000 }); // attempt 1, then its worker hangs
  const [second] = await inbox.claim({ limit: 1, leaseMs: 100, now: 1_200 }); // the lease ran out: attempt 2
  assert.equal(await inbox.fail(key, second!.fence, 'crm down', { dead: true }, 1_300), true);
  assert.equal(await inbox.requeue([key], { resetAttempts: true, now: 2_000 }), 1);
  assert.equal((await inbox.get(key))?.attempts, 0, 'the count starts anew');
  const [third] = await inbox.claim({ limit: 1, leaseMs: 60_000, now: 2_000 });
  assert.equal(third?.attempt, 1, 'attempt 1 since the reset');
  assert.notEqual(third?.fence, stale?.fence, 'but not the fence the hung worker holds');
  // The hung first worker wakes up and reports: it must change nothing.
  assert.equal(await inbox.complete(key, stale!.fence, 2_100), false);
  assert.equal((await inbox.get(key))?.status, 'working');
  assert.equal(await inbox.complete(key, third!.fence, 2_200), true);
  await inbox.close();
});

test('a claim reads due rows in order from an index: no sort of the backlog, however long', async () => {
  const path = join(tempDir(), 'inbox.db');
  await openSqliteInbox(path).close();
  const db = new Database(path, { readonly: true });
  try {
    const claim = CLAIM.replace(/^\s*UPDATE[\s\S]*?WHERE rowid IN \(/, '').replace(/\)\s*RETURNING[\s\S]*$/, '');
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${claim}`).all({ now: 1, limit: 10 }) as { detail: string }[]).map((r) => r.detail);
    assert.ok(
      plan.some((d) => /USING INDEX deliveries_claim/.test(d)),
      plan.join('; '),
    );
    assert.ok(!plan.some((d) => /TEMP B-TREE/.test(d)), `the claim sorts: ${plan.join('; ')}`);
  } finally {
    db.close();
  }
});
