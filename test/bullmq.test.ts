import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { Queue } from 'bullmq';
import { UsageError } from '../src/util/errors.js';
import { displayTarget, openInbox, resolveTarget } from '../src/inbox/open.js';
import { InboxOpenError, InboxUnavailableError } from '../src/inbox/index.js';
import type { Claimed, Inbox, NewDelivery } from '../src/inbox/index.js';
import { DEFAULT_RETENTION_MS, durabilityOf, jobIdFor, openBullmqInbox } from '../src/inbox/bullmq/index.js';
import type { BullmqInbox, BullmqOpenOptions } from '../src/inbox/bullmq/index.js';
import { isRedisTarget, parseRedisTarget } from '../src/inbox/bullmq/target.js';
import { dropQueue, freshQueue, keysOf, redisClient, needRedis, redisProxy } from './helpers/redis.js';

const delivery = (id: string, receivedAt = Date.now(), source = 'stripe'): NewDelivery => ({
  source,
  deliveryId: id,
  eventType: 'invoice.paid',
  body: Buffer.from([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x31, 0x7d, 0x00, 0xff, 0x0a]),
  headers: { 'stripe-signature': 't=1,v1=abc', 'content-type': 'application/json' },
  receivedAt,
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A fresh queue for the test, inboxes opened on it, all closed and the queue obliterated afterwards. */
async function withQueue(
  t: TestContext,
  body: (q: { url: string; queue: string; open: (o?: BullmqOpenOptions) => Promise<BullmqInbox> }) => Promise<void>,
) {
  if (!(await needRedis(t))) return;
  const q = freshQueue();
  const opened: Inbox[] = [];
  try {
    await body({
      ...q,
      open: async (o) => {
        const inbox = await openBullmqInbox(q.url, o);
        opened.push(inbox);
        return inbox;
      },
    });
  } finally {
    for (const inbox of opened) await inbox.close();
    await q.drop();
  }
}

/** Claims until something comes back (or gives up): a lease runs out on the real clock here. */
async function claimWithin(inbox: Inbox, ms: number, leaseMs = 60_000): Promise<Claimed[]> {
  const giveUpAt = Date.now() + ms;
  for (;;) {
    const got = await inbox.claim({ limit: 10, leaseMs });
    if (got.length > 0 || Date.now() > giveUpAt) return got;
    await sleep(50);
  }
}

test('bullmq target: redis://host:port/QUEUE and /DB/QUEUE; the password never shown; a malformed one is one line', () => {
  const t = parseRedisTarget('redis://user:s3cret@example.com:6380/2/hooks?prefix=hd');
  assert.deepEqual(
    { host: t.host, port: t.port, db: t.db, username: t.username, password: t.password, queue: t.queue, prefix: t.prefix, tls: t.tls },
    { host: 'example.com', port: 6380, db: 2, username: 'user', password: 's3cret', queue: 'hooks', prefix: 'hd', tls: false },
  );
  assert.equal(t.display, 'redis://user:***@example.com:6380/2/hooks?prefix=hd');
  assert.equal(parseRedisTarget('rediss://:pw@h/q').display, 'rediss://:***@h:6379/q');
  assert.equal(parseRedisTarget('rediss://:pw@h/q').tls, true);
  assert.equal(parseRedisTarget('redis://127.0.0.1:6379/inbox').db, 0);
  assert.ok(
    isRedisTarget('REDIS://h/q') && isRedisTarget('rediss://h/q') && !isRedisTarget('postgres://h/q') && !isRedisTarget('redis.db'),
  );
  assert.equal(resolveTarget('redis://h:1/q'), 'redis://h:1/q', 'a URL is not made a path');
  assert.equal(displayTarget('redis://u:pw@h:1/q'), 'redis://u:***@h:1/q');
  assert.doesNotMatch(displayTarget('redis://u:pw@h:1/'), /pw/, 'a target that does not parse is still masked');
  for (const [target, why] of [
    ['redis://127.0.0.1:6379', /no queue name/],
    ['redis://127.0.0.1:6379/', /no queue name/],
    ['redis://127.0.0.1:6379/3', /queue name is needed after the database number/],
    ['redis://127.0.0.1:6379/x/q', /first is the database number/],
    ['redis://127.0.0.1:6379/0/a:b', /BullMQ refuses ':'/],
    ['redis://127.0.0.1:6379/0/q/more', /too many path parts/],
    ['redis://127.0.0.1:6379/q?schema=x', /unknown parameter \?schema=/],
    ['redis://:hunter2@h:99999/q', /not a valid redis:\/\/ URL/],
  ] as const) {
    assert.throws(
      () => parseRedisTarget(target),
      (err: Error) => err instanceof InboxOpenError && err instanceof UsageError && why.test(err.message) && !err.message.includes('\n'),
      target,
    );
  }
  assert.throws(
    () => parseRedisTarget('redis://:hunter2@h:99999/q'),
    (err: Error) => !err.message.includes('hunter2'),
  );
});

test('bullmq: --schema is refused for a redis:// inbox, in one line', async () => {
  await assert.rejects(
    openInbox('redis://127.0.0.1:6379/q', { schema: 'x' }),
    (err: Error) => err instanceof UsageError && /--schema/.test(err.message),
  );
});

test('bullmq: delivery ids with ":" and ids of only digits round-trip (BullMQ refuses both as job ids)', async (t) => {
  await withQueue(t, async ({ open }) => {
    const inbox = await open();
    const ids = ['evt:1:2', '123456', '0', 'a:b', 'x'.repeat(300)];
    for (const id of ids) assert.deepEqual(await inbox.put(delivery(id, 1_000)), { inserted: true }, id);
    for (const id of ids) {
      const jobId = jobIdFor({ source: 'stripe', deliveryId: id });
      assert.match(jobId, /^d[0-9a-f]{40}$/);
      assert.equal((await inbox.get({ source: 'stripe', deliveryId: id }))?.deliveryId, id);
    }
    assert.deepEqual(
      (await inbox.select({ ids: ['evt:1:2', '123456'] }, { limit: 10 })).map((r) => r.deliveryId).sort(),
      ['123456', 'evt:1:2'],
      'by id, with no source given',
    );
    assert.deepEqual(
      (await inbox.select({ source: 'stripe', ids: ['0'] }, { limit: 10 })).map((r) => r.deliveryId),
      ['0'],
    );
    assert.equal(await inbox.count({ ids: ['a:b', 'missing'] }), 1);
    const claimed = await inbox.claim({ limit: 10, leaseMs: 60_000 });
    assert.deepEqual(claimed.map((c) => c.deliveryId).sort(), [...ids].sort());
    assert.deepEqual(
      await inbox.settle(claimed.map((c) => ({ key: c, fence: c.fence, outcome: 'done' as const }))),
      ids.map(() => true),
    );
    assert.equal((await inbox.get({ source: 'stripe', deliveryId: 'evt:1:2' }))?.status, 'done');
  });
});

test('bullmq: a duplicate is absorbed by its job id — of concurrent puts of one key from two inboxes, exactly one is inserted', async (t) => {
  await withQueue(t, async ({ open, queue }) => {
    const [a, b] = [await open(), await open()];
    for (let round = 0; round < 5; round++) {
      const id = `evt_dup_${round}`;
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).put(delivery(id))));
      assert.equal(results.filter((r) => r.inserted).length, 1, `round ${round}: ${JSON.stringify(results)}`);
    }
    // Again later, one at a time: still a duplicate, and still one job per key.
    assert.deepEqual(await a.put(delivery('evt_dup_0')), { inserted: false });
    const stats = await a.stats();
    assert.equal(stats.total, 5);
    assert.equal(stats.counts.pending, 5);
    const q = new Queue(queue, { connection: redisClient() });
    try {
      assert.equal(await q.count(), 5, 'one job per key in BullMQ itself');
    } finally {
      await q.close();
      await (await q.client).quit();
    }
  });
});

test('bullmq: a dead job requeued by a selector is claimed again and completed; the requeue is on record', async (t) => {
  await withQueue(t, async ({ open }) => {
    const inbox = await open();
    const key = { source: 'stripe', deliveryId: 'evt_dead' };
    await inbox.put(delivery('evt_dead', Date.now() - 1_000));
    await inbox.put(delivery('evt_ok'));
    const claimed = await inbox.claim({ limit: 2, leaseMs: 60_000 });
    const dead = claimed.find((c) => c.deliveryId === 'evt_dead')!;
    const ok = claimed.find((c) => c.deliveryId === 'evt_ok')!;
    assert.deepEqual(
      await inbox.settle([
        { key, fence: dead.fence, outcome: 'dead', error: 'crm answered 500' },
        { key: ok, fence: ok.fence, outcome: 'done' },
      ]),
      [true, true],
    );
    const buried = await inbox.get(key);
    assert.equal(buried?.status, 'dead');
    assert.equal(buried?.lastError, 'crm answered 500');
    assert.equal(buried?.attempts, 1);
    assert.ok(buried?.finishedAt && Math.abs(buried.finishedAt - Date.now()) < 5_000);
    assert.equal(await inbox.count({ statuses: ['dead'], error: 'crm' }), 1);
    assert.equal(await inbox.count({ error: 'crm' }), 1, 'a done row has no error');

    const batches: number[] = [];
    let before = 0;
    const moved = await inbox.requeueWhere(
      { statuses: ['dead'], error: 'crm' },
      { batchSize: 1, beforeBatch: async () => void before++, onBatch: (n) => batches.push(n) },
    );
    assert.equal(moved, 1);
    assert.deepEqual(batches, [1]);
    assert.equal(before, 1);
    const back = await inbox.get(key);
    assert.equal(back?.status, 'pending');
    assert.equal(back?.attempts, 1, 'attempts kept without --reset-attempts');
    assert.equal(back?.lastError, 'crm answered 500', 'the last error is kept');
    assert.equal((await inbox.get(ok))?.status, 'done', 'the selector left the done row alone');

    const [again] = await inbox.claim({ limit: 5, leaseMs: 60_000 });
    assert.equal(again?.deliveryId, 'evt_dead');
    assert.equal(again?.attempt, 2);
    assert.notEqual(again?.fence, dead.fence);
    assert.deepEqual(await inbox.settle([{ key, fence: dead.fence, outcome: 'done' }]), [false], 'the old claim cannot settle it');
    assert.deepEqual(await inbox.settle([{ key, fence: again!.fence, outcome: 'done' }]), [true]);
    const done = await inbox.get(key);
    assert.equal(done?.status, 'done');
    assert.equal(done?.lastError, undefined);

    const o = await inbox.overview();
    assert.equal(o.requeues[0]?.moved, 1);
    assert.deepEqual(o.requeues[0]?.selector, { statuses: ['dead'], error: 'crm' });
    assert.equal(o.requeues[0]?.resetAttempts, false);

    // And with --reset-attempts: the count starts again.
    assert.equal(await inbox.requeueWhere({ ids: ['evt_dead'] }, { resetAttempts: true }), 1);
    assert.equal((await inbox.get(key))?.attempts, 0);
    const [third] = await inbox.claim({ limit: 5, leaseMs: 60_000 });
    assert.equal(third?.attempt, 1);
  });
});

test('bullmq: a worker killed mid-job (SIGKILL) — its job is reclaimed by another inbox when the lease runs out, never failed for stalling', async (t) => {
  await withQueue(t, async ({ url, open }) => {
    const inbox = await open({ stalledIntervalMs: 200 });
    await inbox.put(delivery('evt_killed'));
    const leaseMs = 1_500;
    const child = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `const { openInbox } = await import(${JSON.stringify(new URL('../src/inbox/index.js', import.meta.url).href)});
         const inbox = await openInbox(process.env.INBOX_URL);
         const startedAt = Date.now();
         const claimed = await inbox.claim({ limit: 10, leaseMs: ${leaseMs} });
         console.log(JSON.stringify({ startedAt, claimed: claimed.map((c) => ({ id: c.deliveryId, fence: c.fence, attempt: c.attempt })) }));
         setInterval(() => {}, 1000);`,
      ],
      { env: { ...process.env, INBOX_URL: url }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let stderr = '';
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const exited = new Promise<NodeJS.Signals | null>((r) => child.on('exit', (_code, signal) => r(signal)));
    try {
      const line = await new Promise<string>((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (c: Buffer) => {
          out += c.toString();
          if (out.includes('\n')) resolve(out.trim());
        });
        child.on('exit', () => reject(new Error(`the child exited before claiming: ${stderr}`)));
        setTimeout(() => reject(new Error(`the child did not claim in time: ${stderr}`)), 15_000).unref();
      });
      const { startedAt, claimed } = JSON.parse(line) as { startedAt: number; claimed: { id: string; fence: number; attempt: number }[] };
      const [held] = claimed;
      assert.equal(held?.id, 'evt_killed');
      assert.equal(held?.attempt, 1);
      child.kill('SIGKILL');
      assert.equal(await exited, 'SIGKILL');

      assert.deepEqual(await inbox.claim({ limit: 10, leaseMs: 60_000 }), [], 'the lease still holds right after the kill');
      assert.equal((await inbox.get({ source: 'stripe', deliveryId: 'evt_killed' }))?.status, 'working');
      const [back] = await claimWithin(inbox, 15_000);
      assert.equal(back?.deliveryId, 'evt_killed');
      assert.ok(
        Date.now() - startedAt >= leaseMs,
        `reclaimed ${Date.now() - startedAt} ms after the claim, before its lease of ${leaseMs} ms ran out`,
      );
      assert.equal(back?.attempt, 2);
      assert.notEqual(back?.fence, held?.fence);
      const row = await inbox.get(back!);
      assert.equal(row?.status, 'working');
      assert.equal(row?.lastError, undefined, 'not failed for stalling');
      assert.deepEqual(
        await inbox.settle([{ key: back!, fence: held!.fence, outcome: 'done' }]),
        [false],
        "the dead worker's fence no longer holds",
      );
      assert.deepEqual(await inbox.settle([{ key: back!, fence: back!.fence, outcome: 'done' }]), [true]);
      assert.equal((await inbox.get(back!))?.status, 'done');
    } finally {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    }
  });
});

test('bullmq: an expired lease on the real clock — claimed again with a new fence; settles are fenced; a retry is due after its delay', async (t) => {
  await withQueue(t, async ({ open }) => {
    const inbox = await open({ stalledIntervalMs: 100 });
    const key = { source: 'stripe', deliveryId: 'evt_1' };
    await inbox.put(delivery('evt_b', 2_000));
    await inbox.put(delivery('evt_a', 1_000));
    const first = await inbox.claim({ limit: 5, leaseMs: 300 });
    assert.deepEqual(
      first.map((r) => [r.deliveryId, r.attempt]),
      [
        ['evt_a', 1],
        ['evt_b', 1],
      ],
      'oldest first',
    );
    assert.deepEqual(await inbox.claim({ limit: 5, leaseMs: 300 }), [], 'leased rows are not claimed again');
    const again = (await claimWithin(inbox, 5_000, 60_000)).sort((x, y) => x.receivedAt - y.receivedAt);
    assert.deepEqual(
      again.map((r) => [r.deliveryId, r.attempt]),
      [
        ['evt_a', 2],
        ['evt_b', 2],
      ],
    );
    assert.notEqual(again[0]?.fence, first[0]?.fence);
    assert.deepEqual(again[0]?.body, delivery('x').body);
    assert.deepEqual(
      await inbox.settle(first.map((c) => ({ key: c, fence: c.fence, outcome: 'done' as const }))),
      [false, false],
      'the first claim lost its lease',
    );

    await inbox.put(delivery('evt_1'));
    const [slow] = await inbox.claim({ limit: 1, leaseMs: 200 });
    const [fast] = await claimWithin(inbox, 5_000, 60_000);
    assert.equal(fast?.deliveryId, 'evt_1');
    const settledAt = Date.now();
    assert.deepEqual(
      await inbox.settle([
        { key, fence: fast!.fence, outcome: 'retry', error: 'crm down', retryInMs: 700 },
        { key, fence: slow!.fence, outcome: 'done' },
        { key, fence: fast!.fence, outcome: 'done' },
      ]),
      [true, false, false],
      'the late worker is refused; a second outcome of one claim too',
    );
    const row = await inbox.get(key);
    assert.equal(row?.status, 'pending');
    assert.equal(row?.lastError, 'crm down');
    assert.ok(row && row.nextAttemptAt >= settledAt + 700 && row.nextAttemptAt <= Date.now() + 700, `due at ${row?.nextAttemptAt}`);
    assert.deepEqual(await inbox.claim({ limit: 1, leaseMs: 60_000 }), [], 'not due yet');
    const [third] = await claimWithin(inbox, 5_000, 60_000);
    assert.ok(Date.now() >= settledAt + 700);
    assert.equal(third?.attempt, 3);
    assert.deepEqual(await inbox.settle([{ key, fence: third!.fence, outcome: 'dead', error: 'gave up' }]), [true]);
    const dead = await inbox.get(key);
    assert.equal(dead?.status, 'dead');
    assert.equal(dead?.attempts, 3);
    assert.equal(dead?.lastError, 'gave up');
    assert.deepEqual(
      await inbox.settle([{ key, fence: third!.fence, outcome: 'done' }]),
      [false],
      'a finished job cannot be settled again',
    );
    assert.deepEqual(
      await inbox.settle([{ key, fence: 0, outcome: 'done' }]),
      [false],
      'fence 0 (BullMQ skips the lock check for it) is refused',
    );

    // A refused outcome changes nothing — not even the error recorded by the valid one beside it.
    const key2 = { source: 'stripe', deliveryId: 'evt_2' };
    await inbox.put(delivery('evt_2'));
    const [stale] = await inbox.claim({ limit: 1, leaseMs: 200 });
    const [fresh] = await claimWithin(inbox, 5_000, 60_000);
    assert.deepEqual(
      await inbox.settle([
        { key: key2, fence: fresh!.fence, outcome: 'dead', error: 'FRESH worker error' },
        { key: key2, fence: stale!.fence, outcome: 'retry', error: 'STALE worker error', retryInMs: 10 },
      ]),
      [true, false],
    );
    assert.equal((await inbox.get(key2))?.lastError, 'FRESH worker error');
  });
});

test('bullmq: overview — counts, the oldest pending, deliveries per minute, dead rows by error, attempts, the retention', async (t) => {
  await withQueue(t, async ({ open }) => {
    const inbox = await open();
    const now = Date.now();
    await inbox.put(delivery('evt_old', now - 30 * 60_000));
    await inbox.put(delivery('evt_new', now - 30_000));
    await inbox.put(delivery('evt_x', now - 20_000));
    await inbox.put(delivery('evt_y', now - 10_000));
    await inbox.put(delivery('evt_ancient', now - 2 * 3_600_000));
    const claimed = await inbox.claim({ limit: 5, leaseMs: 60_000 });
    const f = (id: string) => claimed.find((c) => c.deliveryId === id)!;
    await inbox.settle([
      { key: f('evt_x'), fence: f('evt_x').fence, outcome: 'dead', error: 'boom' },
      { key: f('evt_y'), fence: f('evt_y').fence, outcome: 'dead', error: 'boom' },
      { key: f('evt_new'), fence: f('evt_new').fence, outcome: 'done' },
      { key: f('evt_ancient'), fence: f('evt_ancient').fence, outcome: 'retry', error: 'later', retryInMs: 600_000 },
    ]);
    const o = await inbox.overview(now);
    assert.equal(o.stats.total, 5);
    assert.deepEqual(o.stats.counts, { pending: 1, working: 1, done: 1, dead: 2 });
    assert.equal(o.stats.oldestPendingAt, now - 2 * 3_600_000);
    assert.equal(
      o.perMinute.reduce((a, b) => a + b, 0),
      4,
      'received in the last hour, done or not',
    );
    assert.equal(o.perMinute[59], 3);
    assert.equal(o.perMinute[30], 1);
    assert.deepEqual(
      o.deadByError.map((d) => [d.error, d.count, d.exampleId]),
      [['boom', 2, 'evt_x']],
    );
    assert.deepEqual(o.attempts, { 1: 4 }, 'rows that are not done, by attempts');
    assert.equal(o.retentionMs, DEFAULT_RETENTION_MS);
    assert.equal(inbox.retentionMs, 7 * 24 * 3_600_000);
  });
});

test('bullmq: finished jobs are kept for the retention (removeOnComplete / removeOnFail by age); BullMQ never retries on its own', async (t) => {
  await withQueue(t, async ({ open, queue }) => {
    const inbox = await open({ retentionMs: 3 * 24 * 3_600_000 });
    await inbox.put(delivery('evt_r'));
    const redis = redisClient();
    try {
      const opts = JSON.parse((await redis.hget(`bull:${queue}:${jobIdFor({ source: 'stripe', deliveryId: 'evt_r' })}`, 'opts')) ?? '{}');
      assert.deepEqual(opts.removeOnComplete, { age: 3 * 24 * 3600 });
      assert.deepEqual(opts.removeOnFail, { age: 3 * 24 * 3600 });
      assert.equal(opts.attempts, 1);
    } finally {
      await redis.quit();
    }
    assert.equal((await inbox.overview()).retentionMs, 3 * 24 * 3_600_000);
  });
});

test('bullmq: read-only refuses every write; it opens only an existing inbox, and writes nothing itself', async (t) => {
  await withQueue(t, async ({ url, queue, open }) => {
    await assert.rejects(open({ readonly: true }), (err: Error) => err instanceof InboxOpenError && /no hookdrill inbox/.test(err.message));
    await assert.rejects(
      openInbox(url, { create: false }),
      (err: Error) => err instanceof InboxOpenError && /no hookdrill inbox/.test(err.message),
    );
    const redis = redisClient();
    try {
      assert.deepEqual(await keysOf(redis, queue), [], 'opening without create wrote nothing');
      const writer = await open();
      await writer.put(delivery('evt_ro'));
      const before = (await keysOf(redis, queue)).sort();
      const ro = await open({ readonly: true });
      const key = { source: 'stripe', deliveryId: 'evt_ro' };
      assert.equal((await ro.get(key))?.status, 'pending');
      await ro.overview();
      const refused = (err: Error) => err instanceof UsageError && /read-only/.test(err.message);
      await assert.rejects(ro.put(delivery('evt_2')), refused);
      await assert.rejects(ro.claim({ limit: 1, leaseMs: 1_000 }), refused);
      await assert.rejects(ro.settle([{ key, fence: 1, outcome: 'done' }]), refused);
      await assert.rejects(ro.requeueWhere({}, {}), refused);
      assert.deepEqual((await keysOf(redis, queue)).sort(), before, 'read-only wrote no key');
    } finally {
      await redis.quit();
    }
  });
});

test('bullmq: a chosen clock (now) is refused in one line, never ignored', async (t) => {
  await withQueue(t, async ({ open }) => {
    const inbox = await open();
    const key = { source: 'stripe', deliveryId: 'evt_1' };
    const refused = (err: Error) => err instanceof UsageError && /chosen time/.test(err.message) && !err.message.includes('\n');
    await assert.rejects(inbox.claim({ limit: 1, leaseMs: 1_000, now: 10_000 }), refused);
    await assert.rejects(inbox.settle([{ key, fence: 1, outcome: 'done' }], 10_000), refused);
    await assert.rejects(inbox.requeueWhere({}, { now: 10_000 }), refused);
  });
});

test('bullmq: a queue of jobs hookdrill did not put is refused, not taken over', async (t) => {
  if (!(await needRedis(t))) return;
  const q = freshQueue();
  const redis = redisClient();
  const foreign = new Queue(q.queue, { connection: redis });
  try {
    await foreign.add('email', { to: 'someone' });
    await assert.rejects(openInbox(q.url), (err: Error) => err instanceof InboxOpenError && /did not put/.test(err.message));
  } finally {
    await foreign.close();
    await redis.quit();
    await q.drop();
  }
});

test('bullmq durability: AOF off, synced every second or by the OS, or eviction on — one warning line each; always-synced AOF is none', () => {
  assert.deepEqual(durabilityOf('h:1', { appendonly: 'yes', appendfsync: 'always', 'maxmemory-policy': 'noeviction' }), {
    known: true,
    appendonly: true,
    appendfsync: 'always',
    maxmemoryPolicy: 'noeviction',
    warnings: [],
  });
  assert.deepEqual(durabilityOf('h:1', { appendonly: 'no', appendfsync: 'always' }).warnings, [
    'Redis at h:1: AOF is off (appendonly no): deliveries answered 200 since the last RDB snapshot are lost if Redis restarts',
  ]);
  assert.match(durabilityOf('h:1', { appendonly: 'yes', appendfsync: 'everysec' }).warnings.join(), /up to a second/);
  assert.match(durabilityOf('h:1', { appendonly: 'yes', appendfsync: 'no' }).warnings.join(), /when the OS decides/);
  const both = durabilityOf('h:1', { appendonly: 'no', 'maxmemory-policy': 'allkeys-lru' }).warnings;
  assert.equal(both.length, 2);
  assert.match(both[1] ?? '', /^Redis at h:1: maxmemory-policy is allkeys-lru/);
  assert.ok(both.every((w) => !w.includes('\n')));
});

test('bullmq: aof() says what CONFIG GET says, and warns where an acknowledged delivery can be lost', async (t) => {
  await withQueue(t, async ({ open }) => {
    const inbox = await open();
    const redis = redisClient();
    try {
      const [, appendonly] = (await redis.config('GET', 'appendonly')) as string[];
      const [, appendfsync] = (await redis.config('GET', 'appendfsync')) as string[];
      const d = await inbox.aof();
      assert.equal(d.known, true);
      assert.equal(d.appendonly, appendonly === 'yes');
      assert.equal(d.appendfsync, appendfsync);
      if (appendonly !== 'yes') assert.match(d.warnings.join(), /AOF is off/);
      assert.deepEqual(await inbox.durabilityWarnings(), d.warnings, 'what listen prints at start');
    } finally {
      await redis.quit();
    }
  });
});

test('bullmq: Redis unreachable — open fails in one line; a put fails fast when it goes; the inbox recovers when it returns', async (t) => {
  if (!(await needRedis(t))) return;
  const proxy = await redisProxy();
  const queue = freshQueue().queue;
  let inbox: BullmqInbox | undefined;
  try {
    // Nothing listens on the proxy's port while it is stopped: open fails at once, in one line.
    await proxy.stop();
    const began = Date.now();
    await assert.rejects(
      openInbox(proxy.url(queue)),
      (err: Error) =>
        err instanceof InboxUnavailableError &&
        err.message.includes(`Redis at 127.0.0.1:${proxy.port} is unreachable`) &&
        !err.message.includes('\n'),
    );
    assert.ok(Date.now() - began < 4_000, `open took ${Date.now() - began} ms`);

    await proxy.start();
    inbox = await openBullmqInbox(proxy.url(queue), { timeoutMs: 1_000 });
    assert.deepEqual(await inbox.put(delivery('evt_before')), { inserted: true });
    assert.deepEqual(await inbox.health(), { ok: true });
    const [before] = await inbox.claim({ limit: 5, leaseMs: 60_000 });
    assert.deepEqual(await inbox.settle([{ key: before!, fence: before!.fence, outcome: 'done' }]), [true]);

    await proxy.stop();
    // Once the inbox has seen the connection go (at once, on loopback), a put fails without waiting.
    for (let i = 0; (await inbox.health()).ok; i++) {
      if (i > 100) assert.fail('the inbox never noticed Redis had gone');
      await sleep(20);
    }
    const putAt = Date.now();
    await assert.rejects(
      inbox.put(delivery('evt_during')),
      (err: Error) =>
        err instanceof InboxUnavailableError && new RegExp(`Redis at 127\\.0\\.0\\.1:${proxy.port} is unreachable`).test(err.message),
    );
    assert.ok(Date.now() - putAt < 500, `the put failed after ${Date.now() - putAt} ms, not at once`);
    await assert.rejects(inbox.claim({ limit: 1, leaseMs: 1_000 }), InboxUnavailableError);
    await assert.rejects(inbox.stats(), InboxUnavailableError);
    const health = await inbox.health();
    assert.equal(health.ok, false);
    assert.match(health.problem ?? '', /unreachable/);

    await proxy.start();
    const backBy = Date.now() + 10_000;
    let result: { inserted: boolean } | undefined;
    while (!result) {
      try {
        result = await inbox.put(delivery('evt_after'));
      } catch (err) {
        if (!(err instanceof InboxUnavailableError) || Date.now() > backBy) throw err;
        await sleep(100);
      }
    }
    assert.deepEqual(result, { inserted: true }, 'the same inbox works again, without a reopen');
    assert.equal((await inbox.stats()).total, 2);
    const [after] = await inbox.claim({ limit: 5, leaseMs: 60_000 });
    assert.equal(after?.deliveryId, 'evt_after', 'its worker claims again too');
    assert.deepEqual(await inbox.settle([{ key: after!, fence: after!.fence, outcome: 'done' }]), [true]);
    assert.deepEqual(await inbox.health(), { ok: true });

    // Connected, but Redis does not answer: bounded by the timeout, not a hang.
    proxy.blackhole(true);
    const hungAt = Date.now();
    await assert.rejects(
      inbox.put(delivery('evt_hung')),
      (err: Error) => err instanceof InboxUnavailableError && /no answer within 1000 ms/.test(err.message),
    );
    assert.ok(Date.now() - hungAt < 3_000);
    proxy.blackhole(false);
  } finally {
    await inbox?.close();
    await proxy.close();
    await dropQueue(queue);
  }
});
