/**
 * The inbox contract: what every backend must do, as the receiver, the worker and the incident
 * commands rely on it. Each backend's test file runs it on a fresh store (test/inbox-contract-*.test.ts).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Inbox, NewDelivery, Settlement } from '../../src/inbox/index.js';

export interface Backend {
  name: string;
  /** undefined when the backend can run here; otherwise why it cannot (the tests are skipped). */
  missing?: () => Promise<string | undefined>;
  /**
   * Cases this backend cannot hold, by their exact name, each with why: the reason is printed as
   * the case's skip reason. Only for what the store itself cannot do; every other backend runs
   * every case, and a name that matches no case fails the suite (a renamed case is not skipped
   * silently).
   */
  cannot?: Readonly<Record<string, string>>;
  /**
   * The store keeps time itself (BullMQ: Redis expires a lease's lock) and refuses a chosen `now`:
   * the cases that pass one only in passing run without it, on the real clock.
   */
  ownClock?: boolean;
  /** A fresh, empty inbox (with group commit when asked), and how to remove it afterwards. */
  open(options?: { groupCommit?: boolean }): Promise<{ inbox: Inbox; cleanup: () => Promise<void> }>;
}

const delivery = (id: string, receivedAt = 1_000, source = 'stripe'): NewDelivery => ({
  source,
  deliveryId: id,
  eventType: 'invoice.paid',
  body: Buffer.from([0x7b, 0x22, 0x69, 0x64, 0x22, 0x3a, 0x31, 0x7d, 0x00, 0xff, 0x0a]),
  headers: { 'stripe-signature': 't=1,v1=abc', 'content-type': 'application/json' },
  receivedAt,
});

export function inboxContract(b: Backend): void {
  // For the cases whose checks do not depend on the clock: a chosen `now`, unless the store keeps its own.
  const at = (now: number): { now?: number } => (b.ownClock ? {} : { now });
  const settledAt = (now: number): number | undefined => (b.ownClock ? undefined : now);
  const names = new Set<string>();
  const it = (name: string, body: (inbox: Inbox, open: Backend['open']) => Promise<void>, groupCommit = false) => {
    names.add(name);
    return test(`${b.name} inbox: ${name}`, async (t) => {
      const cannot = b.cannot?.[name];
      if (cannot) return t.skip(cannot);
      const why = await b.missing?.();
      if (why) return t.skip(why);
      const { inbox, cleanup } = await b.open({ groupCommit });
      try {
        await body(inbox, b.open);
      } finally {
        await inbox.close();
        await cleanup();
      }
    });
  };

  it('put is idempotent on (source, delivery id) and keeps the raw bytes and headers exactly', async (inbox) => {
    assert.deepEqual(await inbox.put(delivery('evt_1')), { inserted: true });
    assert.deepEqual(await inbox.put({ ...delivery('evt_1'), body: Buffer.from('other') }), { inserted: false });
    assert.deepEqual(await inbox.put(delivery('evt_1', 1_000, 'github')), { inserted: true }, 'another source is another key');
    const row = await inbox.get({ source: 'stripe', deliveryId: 'evt_1' });
    assert.deepEqual(row?.body, delivery('evt_1').body);
    assert.deepEqual(row?.headers, delivery('evt_1').headers);
    assert.equal(row?.status, 'pending');
    assert.equal(row?.attempts, 0);
    assert.equal((await inbox.stats()).total, 2);
  });

  it(
    'group commit: puts made together share a transaction; copies of a key in it — the first stored, the rest duplicates',
    async (inbox) => {
      const results = await Promise.all([
        ...Array.from({ length: 20 }, (_, i) => inbox.put(delivery(`evt_${i}`))),
        ...Array.from({ length: 5 }, () => inbox.put(delivery('evt_same'))),
      ]);
      assert.equal(results.slice(0, 20).filter((r) => r.inserted).length, 20);
      assert.deepEqual(
        results.slice(20).map((r) => r.inserted),
        [true, false, false, false, false],
      );
      assert.equal((await inbox.stats()).total, 21);
    },
    true,
  );

  it('claim takes the oldest due rows with a lease; an expired lease is claimed again with a new fence', async (inbox) => {
    await inbox.put(delivery('evt_b', 2_000));
    await inbox.put(delivery('evt_a', 1_000));
    await inbox.put(delivery('evt_later', 50_000));
    const first = await inbox.claim({ limit: 5, leaseMs: 1_000, now: 10_000 });
    assert.deepEqual(
      first.map((r) => r.deliveryId),
      ['evt_a', 'evt_b'],
      'oldest first; a row not yet due is left',
    );
    assert.deepEqual(
      first.map((r) => r.attempt),
      [1, 1],
    );
    assert.deepEqual(await inbox.claim({ limit: 5, leaseMs: 1_000, now: 10_500 }), [], 'leased rows are not claimed again');
    const again = await inbox.claim({ limit: 5, leaseMs: 1_000, now: 11_000 });
    assert.deepEqual(
      again.map((r) => [r.deliveryId, r.attempt]),
      [
        ['evt_a', 2],
        ['evt_b', 2],
      ],
    );
    assert.notEqual(again[0]?.fence, first[0]?.fence);
    assert.deepEqual(again[0]?.body, delivery('x').body);
  });

  it('settle is fenced per outcome: a late worker cannot overwrite the outcome of the one that took over', async (inbox) => {
    const key = { source: 'stripe', deliveryId: 'evt_1' };
    await inbox.put(delivery('evt_1'));
    const [slow] = await inbox.claim({ limit: 1, leaseMs: 100, now: 5_000 });
    const [fast] = await inbox.claim({ limit: 1, leaseMs: 100, now: 5_200 });
    assert.deepEqual(
      await inbox.settle(
        [
          { key, fence: fast!.fence, outcome: 'retry', error: 'crm down', retryInMs: 3_700 },
          { key, fence: slow!.fence, outcome: 'done' },
        ],
        5_300,
      ),
      [true, false],
    );
    const row = await inbox.get(key);
    assert.equal(row?.status, 'pending');
    assert.equal(row?.nextAttemptAt, 9_000, 'due after the delay, by the clock it was settled at');
    assert.equal(row?.lastError, 'crm down');
    const [third] = await inbox.claim({ limit: 1, leaseMs: 100, now: 9_000 });
    assert.deepEqual(await inbox.settle([{ key, fence: third!.fence, outcome: 'dead', error: 'gave up' }], 9_050), [true]);
    const dead = await inbox.get(key);
    assert.equal(dead?.status, 'dead');
    assert.equal(dead?.finishedAt, 9_050);
    assert.equal(dead?.attempts, 3);
  });

  it('a release puts a claimed row back untried: pending, due after the delay, its attempt not spent and its error kept; a late outcome of that claim changes nothing', async (inbox) => {
    const key = { source: 'stripe', deliveryId: 'evt_r' };
    await inbox.put({ ...delivery('evt_r'), route: 'ci' });
    const [tried] = await inbox.claim({ limit: 1, leaseMs: 60_000, ...at(10_000) });
    assert.equal(tried?.attempt, 1);
    assert.deepEqual(
      await inbox.settle([{ key, fence: tried!.fence, outcome: 'retry', error: 'ci down', retryInMs: 0 }], settledAt(10_000)),
      [true],
    );
    const [released] = await inbox.claim({ limit: 1, leaseMs: 60_000, ...at(10_000) });
    assert.equal(released?.attempt, 2);
    assert.deepEqual(
      await inbox.settle([{ key, fence: released!.fence, outcome: 'release', retryInMs: b.ownClock ? 0 : 500 }], settledAt(10_000)),
      [true],
    );
    const row = await inbox.get(key);
    assert.equal(row?.status, 'pending');
    assert.equal(row?.attempts, 1, 'the released claim is not counted');
    assert.equal(row?.lastError, 'ci down');
    assert.equal(row?.route, 'ci');
    if (!b.ownClock) {
      assert.equal(row?.nextAttemptAt, 10_500);
      assert.deepEqual(await inbox.claim({ limit: 1, leaseMs: 60_000, now: 10_499 }), [], 'not due before its delay');
    }
    const [again] = await inbox.claim({ limit: 1, leaseMs: 60_000, ...at(10_500) });
    assert.equal(again?.attempt, 2, 'the attempt the release gave back');
    assert.notEqual(again?.fence, released?.fence);
    assert.deepEqual(await inbox.settle([{ key, fence: released!.fence, outcome: 'done' }], settledAt(10_600)), [false]);
    assert.deepEqual(await inbox.settle([{ key, fence: again!.fence, outcome: 'done' }], settledAt(10_600)), [true]);
    assert.equal((await inbox.get(key))?.attempts, 2);
  });

  it('a claim skips rows recorded with the routes it excludes; a row with no route is claimed', async (inbox) => {
    await inbox.put({ ...delivery('evt_ci', 1_000), route: 'ci' });
    await inbox.put({ ...delivery('evt_billing', 2_000), route: 'billing' });
    await inbox.put(delivery('evt_none', 3_000));
    const claimed = await inbox.claim({ limit: 10, leaseMs: 60_000, excludeRoutes: ['ci', 'support'], ...at(10_000) });
    assert.deepEqual(
      claimed.map((c) => c.deliveryId),
      ['evt_billing', 'evt_none'],
    );
    assert.equal((await inbox.get({ source: 'stripe', deliveryId: 'evt_ci' }))?.status, 'pending');
    assert.deepEqual(
      (await inbox.claim({ limit: 10, leaseMs: 60_000, excludeRoutes: [], ...at(10_000) })).map((c) => c.deliveryId),
      ['evt_ci'],
    );
  });

  it('two workers claiming at once never get the same row', async (inbox) => {
    await Promise.all(Array.from({ length: 60 }, (_, i) => inbox.put(delivery(`evt_${i}`, 1_000 + i))));
    const claims = await Promise.all(Array.from({ length: 6 }, () => inbox.claim({ limit: 15, leaseMs: 60_000, ...at(100_000) })));
    const ids = claims.flat().map((r) => r.deliveryId);
    assert.equal(new Set(ids).size, ids.length, 'a row was claimed twice');
    assert.equal(ids.length, 60);
  });

  it('select, count and requeueWhere by selector; requeue moves only finished rows and is on record', async (inbox) => {
    for (const [id, at] of [
      ['evt_dead_1', 1_000],
      ['evt_dead_2', 2_000],
      ['evt_working', 3_000],
      ['evt_done', 4_000],
    ] as const)
      await inbox.put(delivery(id, at));
    const claimed = await inbox.claim({ limit: 4, leaseMs: 600_000, ...at(10_000) });
    const fence = (id: string) => claimed.find((c) => c.deliveryId === id)!.fence;
    await inbox.settle(
      [
        { key: { source: 'stripe', deliveryId: 'evt_dead_1' }, fence: fence('evt_dead_1'), outcome: 'dead', error: 'crm answered 500' },
        { key: { source: 'stripe', deliveryId: 'evt_dead_2' }, fence: fence('evt_dead_2'), outcome: 'dead', error: 'body is not JSON' },
        { key: { source: 'stripe', deliveryId: 'evt_done' }, fence: fence('evt_done'), outcome: 'done' },
      ],
      settledAt(10_100),
    );
    assert.equal(await inbox.count({ statuses: ['dead'] }), 2);
    assert.equal(await inbox.count({ error: 'crm' }), 1);
    assert.equal(await inbox.count({ since: 2_000, until: 4_000 }), 2);
    assert.deepEqual(
      (await inbox.select({ ids: ['evt_done', 'evt_dead_2'] }, { limit: 10 })).map((r) => r.deliveryId),
      ['evt_dead_2', 'evt_done'],
    );
    const moved = await inbox.requeueWhere({}, { resetAttempts: true, batchSize: 1, ...at(20_000) });
    assert.equal(moved, 3, 'dead and done rows move; the one under lease does not');
    assert.equal((await inbox.get({ source: 'stripe', deliveryId: 'evt_working' }))?.status, 'working');
    const back = await inbox.get({ source: 'stripe', deliveryId: 'evt_dead_1' });
    assert.equal(back?.status, 'pending');
    assert.equal(back?.attempts, 0, '--reset-attempts');
    const overview = await inbox.overview(30_000);
    assert.equal(overview.requeues[0]?.moved, 3);
    assert.equal(overview.requeues[0]?.resetAttempts, true);
    assert.equal(overview.stats.counts.pending, 3);
    // A fence is never reused after a reset: the old claim still cannot settle the row.
    assert.deepEqual(
      await inbox.settle([{ key: { source: 'stripe', deliveryId: 'evt_dead_1' }, fence: fence('evt_dead_1'), outcome: 'done' }]),
      [false],
    );
  });

  it("rows hookdrill check sent, told by X-Hookdrill-Check: left out, only them, or one run's", async (inbox) => {
    const marked = (id: string, run: string, at: number): NewDelivery => ({
      ...delivery(id, at),
      headers: { ...delivery(id).headers, 'x-hookdrill-check': run },
    });
    await inbox.put(delivery('evt_real', 1_000));
    await inbox.put(marked('evt_check_a1', 'chk-a', 2_000));
    await inbox.put(marked('evt_check_a2', 'chk-a', 3_000));
    await inbox.put(marked('evt_check_b', 'chk-b', 4_000));
    const ids = async (check: boolean | string) => (await inbox.select({ check }, { limit: 10 })).map((r) => r.deliveryId);
    assert.deepEqual(await ids(false), ['evt_real']);
    assert.deepEqual(await ids(true), ['evt_check_a1', 'evt_check_a2', 'evt_check_b']);
    assert.deepEqual(await ids('chk-a'), ['evt_check_a1', 'evt_check_a2']);
    assert.equal(await inbox.count({ check: false }), 1);
    assert.equal(await inbox.count({ check: 'chk-b' }), 1);
    assert.equal(await inbox.count({ check: 'chk-none' }), 0);
    // Settled dead, then requeued by run: only that run's rows move.
    const claimed = await inbox.claim({ limit: 4, leaseMs: 600_000, ...at(10_000) });
    await inbox.settle(
      claimed.map((c) => ({ key: c, fence: c.fence, outcome: 'dead' as const, error: 'crm down' })),
      settledAt(10_100),
    );
    assert.equal(await inbox.requeueWhere({ statuses: ['dead'], check: false }, { resetAttempts: true, ...at(20_000) }), 1);
    assert.equal((await inbox.get({ source: 'stripe', deliveryId: 'evt_real' }))?.status, 'pending');
    assert.equal((await inbox.get({ source: 'stripe', deliveryId: 'evt_check_a1' }))?.status, 'dead');
  });

  it('a NUL in an error, an event type or a header is stored without failing the batch around it', async (inbox) => {
    await Promise.all([
      inbox.put({ ...delivery('evt_nul'), eventType: 'a\u0000b', headers: { 'x-odd': 'c\u0000d' } }),
      inbox.put(delivery('evt_ok')),
    ]);
    const claimed = await inbox.claim({ limit: 2, leaseMs: 60_000, ...at(10_000) });
    assert.equal(claimed.length, 2);
    const kept = await inbox.settle(
      claimed.map((c) =>
        c.deliveryId === 'evt_nul'
          ? { key: c, fence: c.fence, outcome: 'dead' as const, error: 'app answered 500: \u0000\u0000binary' }
          : { key: c, fence: c.fence, outcome: 'done' as const },
      ),
      settledAt(10_100),
    );
    assert.deepEqual(kept, [true, true]);
    const row = await inbox.get({ source: 'stripe', deliveryId: 'evt_nul' });
    assert.equal(row?.status, 'dead');
    assert.match(row?.lastError ?? '', /^app answered 500: .*binary$/);
    assert.equal((await inbox.get({ source: 'stripe', deliveryId: 'evt_ok' }))?.status, 'done');
  });

  it('a lone surrogate in an id, an event type or a header, or a backslash, is stored without failing the batch around it', async (inbox) => {
    // A body's JSON may spell "\ud800" (Stripe's and Slack's ids live in the body): a string no UTF-8 holds.
    const odd = { ...delivery('evt_\ud800x'), eventType: 'type\udfff', headers: { 'x-odd': 'v\ud800', 'x-slash': 'a\\ud800b' } };
    const results = await Promise.all([inbox.put(odd), inbox.put(delivery('evt_fine_\\ud83d'))]);
    assert.deepEqual(results, [{ inserted: true }, { inserted: true }]);
    assert.equal((await inbox.get({ source: 'stripe', deliveryId: 'evt_fine_\\ud83d' }))?.status, 'pending');
    const claimed = await inbox.claim({ limit: 2, leaseMs: 60_000, ...at(10_000) });
    assert.equal(claimed.length, 2);
  });

  it('overview: counts, the oldest pending, deliveries per minute, dead rows grouped by error', async (inbox) => {
    const now = 10_000_000;
    await inbox.put(delivery('evt_old', now - 30 * 60_000));
    await inbox.put(delivery('evt_new', now - 30_000));
    await inbox.put(delivery('evt_x', now - 20_000));
    const [x] = (await inbox.claim({ limit: 3, leaseMs: 60_000, ...at(now) })).filter((r) => r.deliveryId === 'evt_x');
    await inbox.settle([{ key: x!, fence: x!.fence, outcome: 'dead', error: 'boom' }], settledAt(now));
    const o = await inbox.overview(now);
    assert.equal(o.stats.total, 3);
    assert.equal(o.stats.counts.dead, 1);
    assert.equal(
      o.perMinute.reduce((a, b) => a + b, 0),
      3,
    );
    assert.equal(o.perMinute[59], 2);
    // By outcome, where each stands now: the dead one and a claimed one in the last minute, the old one claimed at minute 30.
    assert.equal(o.perMinuteByStatus.dead[59], 1);
    assert.equal(o.perMinuteByStatus.working[59], 1);
    assert.equal(o.perMinuteByStatus.working[30], 1);
    assert.deepEqual(
      (['pending', 'working', 'done', 'dead'] as const).map((s) => o.perMinuteByStatus[s].reduce((a, b) => a + b, 0)),
      [0, 2, 0, 1],
    );
    assert.deepEqual(
      o.deadByError.map((d) => [d.error, d.count, d.exampleId]),
      [['boom', 1, 'evt_x']],
    );
  });

  it('noError selects the rows with no recorded error, and only those: the "(no error recorded)" group requeued alone', async (inbox) => {
    await inbox.put(delivery('evt_boom', 1_000));
    await inbox.put(delivery('evt_silent', 2_000));
    const claimed = await inbox.claim({ limit: 2, leaseMs: 600_000, ...at(10_000) });
    await inbox.settle(
      claimed.map((c): Settlement => ({ key: c, fence: c.fence, outcome: 'dead', error: c.deliveryId === 'evt_boom' ? 'boom' : '' })),
      settledAt(10_100),
    );
    assert.equal(await inbox.count({ statuses: ['dead'] }), 2);
    assert.equal(await inbox.count({ statuses: ['dead'], noError: true }), 1);
    assert.equal(await inbox.requeueWhere({ statuses: ['dead'], noError: true }, { resetAttempts: true, ...at(20_000) }), 1);
    assert.equal((await inbox.get({ source: 'stripe', deliveryId: 'evt_silent' }))?.status, 'pending');
    assert.equal((await inbox.get({ source: 'stripe', deliveryId: 'evt_boom' }))?.status, 'dead');
  });

  it('requeue --status pending: a row waiting for its next attempt is due now, its error kept, and the requeue on record', async (inbox) => {
    await inbox.put(delivery('evt_waiting', 1_000));
    await inbox.put(delivery('evt_done', 2_000));
    const claimed = await inbox.claim({ limit: 2, leaseMs: 600_000, ...at(10_000) });
    const fence = (id: string) => claimed.find((c) => c.deliveryId === id)!.fence;
    await inbox.settle(
      [
        {
          key: { source: 'stripe', deliveryId: 'evt_waiting' },
          fence: fence('evt_waiting'),
          outcome: 'retry',
          error: 'crm answered 503',
          retryInMs: 3_600_000,
        },
        { key: { source: 'stripe', deliveryId: 'evt_done' }, fence: fence('evt_done'), outcome: 'done' },
      ],
      settledAt(10_100),
    );
    // Not due for an hour: a claim now finds nothing.
    assert.deepEqual(await inbox.claim({ limit: 5, leaseMs: 60_000, ...at(20_000) }), []);
    const moved = await inbox.requeueWhere({ statuses: ['pending'] }, { resetAttempts: true, ...at(20_000) });
    assert.equal(moved, 1, 'the pending row moves; the done one is not pending');
    const back = await inbox.get({ source: 'stripe', deliveryId: 'evt_waiting' });
    assert.equal(back?.status, 'pending');
    assert.equal(back?.attempts, 0, '--reset-attempts');
    assert.equal(back?.lastError, 'crm answered 503', 'why it failed is still there to read');
    assert.equal((await inbox.get({ source: 'stripe', deliveryId: 'evt_done' }))?.status, 'done');
    const again = await inbox.claim({ limit: 5, leaseMs: 60_000, ...at(20_000) });
    assert.deepEqual(
      again.map((c) => c.deliveryId),
      ['evt_waiting'],
      'due now, not in an hour',
    );
    const o = await inbox.overview(30_000);
    assert.equal(o.requeues[0]?.moved, 1);
    assert.deepEqual(o.requeues[0]?.selector, { statuses: ['pending'] });
  });

  it("overview: pending rows that failed grouped by their last error with their next attempt; check's rows counted in each group, and left out when asked", async (inbox) => {
    const now = 10_000_000;
    const marked = (id: string, at: number): NewDelivery => ({
      ...delivery(id, at),
      headers: { ...delivery(id).headers, 'x-hookdrill-check': 'chk-1' },
    });
    await inbox.put(delivery('evt_a', now - 50_000));
    await inbox.put(delivery('evt_b', now - 40_000));
    await inbox.put(marked('evt_c', now - 30_000));
    await inbox.put(marked('evt_d', now - 20_000));
    await inbox.put(delivery('evt_e', now - 10_000));
    const claimed = await inbox.claim({ limit: 5, leaseMs: 600_000, ...at(now) });
    const settledAtClock = b.ownClock ? Date.now() : now;
    await inbox.settle(
      claimed.map((c): Settlement => {
        if (c.deliveryId === 'evt_d') return { key: c, fence: c.fence, outcome: 'dead', error: 'check: deliberately dead' };
        if (c.deliveryId === 'evt_e') return { key: c, fence: c.fence, outcome: 'dead', error: '{"error":"bad payload","field":"amount"}' };
        return { key: c, fence: c.fence, outcome: 'retry', error: 'connect ECONNREFUSED 127.0.0.1:3000', retryInMs: 60_000 };
      }),
      settledAt(now),
    );
    const o = await inbox.overview(now);
    assert.deepEqual(
      o.retryingByError.map((g) => [g.error, g.count, g.checkRows, g.exampleId]),
      [['connect ECONNREFUSED 127.0.0.1:3000', 3, 1, 'evt_a']],
    );
    const wait = (o.retryingByError[0]?.nextAt ?? 0) - settledAtClock;
    assert.ok(wait > 50_000 && wait <= 61_000, `next attempt in ${wait} ms, expected about 60 s`);
    assert.deepEqual(
      o.deadByError.map((g) => [g.error, g.count, g.checkRows]),
      [
        ['check: deliberately dead', 1, 1],
        ['{"error":"bad payload","field":"amount"}', 1, 0],
      ],
    );
    const real = await inbox.overview(now, { excludeCheck: true });
    assert.deepEqual(
      real.retryingByError.map((g) => [g.error, g.count, g.checkRows]),
      [['connect ECONNREFUSED 127.0.0.1:3000', 2, 0]],
    );
    assert.deepEqual(
      real.deadByError.map((g) => g.error),
      ['{"error":"bad payload","field":"amount"}'],
    );
    assert.equal(real.excludeCheck, true);
  });

  const unknown = Object.keys(b.cannot ?? {}).filter((name) => !names.has(name));
  if (unknown.length > 0)
    test(`${b.name} inbox: declares it cannot hold cases that do not exist`, () => {
      assert.fail(`no such case: ${unknown.map((n) => JSON.stringify(n)).join(', ')}`);
    });
}
