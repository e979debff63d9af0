import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync, existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { run as inspect } from '../src/incident/inspect.js';
import type { InspectResult } from '../src/incident/inspect.js';
import { run as requeue } from '../src/incident/requeue.js';
import { run as replay } from '../src/incident/replay.js';
import { run as send } from '../src/delivery/send.js';
import { UsageError } from '../src/util/errors.js';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import type { SqliteInbox } from '../src/inbox/sqlite/index.js';
import { providers } from '../src/providers/index.js';
import { createReceiverServer, listen } from '../src/receiver/server.js';
import { Worker } from '../src/worker/index.js';
import { hookdrill } from './helpers/cli.js';
import { verifyWithOfficialCode } from './helpers/official.js';
import { reply, startServer } from './helpers/server.js';
import { stripeRow } from './helpers/rows.js';
import { tempDir } from './helpers/tmp.js';

/** The result as the view it must be: fails the test (never skips its assertions) when it is another. */
function asView<V extends InspectResult['view']>(result: InspectResult, view: V): Extract<InspectResult, { view: V }> {
  assert.equal(result.view, view);
  return result as Extract<InspectResult, { view: V }>;
}

const NOW = Date.parse('2026-11-30T12:00:00Z');
const SECRET = 'whsec_incident';

/** An inbox with rows in every state, made through the real operations. */
async function seeded(path: string): Promise<SqliteInbox> {
  const inbox = openSqliteInbox(path);
  const put = (id: string, type: string, at: number, body = `{"id":"${id}","type":"${type}"}`) =>
    inbox.put({
      source: 'stripe',
      deliveryId: id,
      eventType: type,
      body: Buffer.from(body),
      headers: { 'content-type': 'application/json' },
      receivedAt: at,
    });
  for (let i = 0; i < 6; i++) await put(`evt_dead_crm_${i}`, 'invoice.paid', NOW - 50 * 60_000 + i);
  for (let i = 0; i < 2; i++) await put(`evt_dead_json_${i}`, 'customer.created', NOW - 30 * 60_000 + i);
  for (let i = 0; i < 3; i++) await put(`evt_done_${i}`, 'invoice.paid', NOW - 10 * 60_000 + i);
  await put('evt_working', 'invoice.paid', NOW - 5 * 60_000);
  await put('evt_pending_old', 'invoice.paid', NOW - 20 * 60_000);
  await put('evt_pending_new', 'invoice.paid', NOW - 60_000);
  const claimed = await inbox.claim({ limit: 100, leaseMs: 60 * 60_000, now: NOW - 1_000 });
  for (const c of claimed) {
    const key = { source: c.source, deliveryId: c.deliveryId };
    if (c.deliveryId.startsWith('evt_dead_crm'))
      await inbox.fail(key, c.fence, 'forward target answered 503: crm down', { dead: true }, NOW - 900);
    else if (c.deliveryId.startsWith('evt_dead_json'))
      await inbox.fail(key, c.fence, 'body is not JSON: Unexpected end', { dead: true }, NOW - 800);
    else if (c.deliveryId.startsWith('evt_done')) await inbox.complete(key, c.fence, NOW - 700);
    else if (c.deliveryId.startsWith('evt_pending')) await inbox.fail(key, c.fence, 'timeout', { retryAt: NOW + 30_000 }, NOW - 600);
    // evt_working keeps its lease.
  }
  return inbox;
}

test('inspect: the overview an on-call engineer reads first', async () => {
  const path = join(tempDir(), 'inbox.db');
  await (await seeded(path)).close();
  const r = await inspect({ inbox: path, now: NOW });
  assert.equal(r.view, 'overview');
  if (r.view !== 'overview') return;
  assert.deepEqual(r.overview.stats.counts, { pending: 2, working: 1, done: 3, dead: 8 });
  assert.equal(r.overview.stats.oldestPendingAt, NOW - 20 * 60_000, 'the age to alert on');
  assert.equal(r.overview.perMinute.length, 60);
  assert.equal(
    r.overview.perMinute.reduce((a, b) => a + b, 0),
    14,
  );
  assert.equal(r.overview.perMinute[10], 6, 'six arrived 50 minutes ago');
  assert.deepEqual(
    r.overview.deadByError.map((g) => [g.error, g.count, g.exampleId]),
    [
      ['forward target answered 503: crm down', 6, 'evt_dead_crm_0'],
      ['body is not JSON: Unexpected end', 2, 'evt_dead_json_0'],
    ],
  );
  assert.deepEqual(r.overview.attempts, { 1: 11 });
});

test('inspect: filters list rows; --id shows one in full; it never writes', async () => {
  const path = join(tempDir(), 'inbox.db');
  await (await seeded(path)).close();
  const hash = () => createHash('sha256').update(readFileSync(path)).digest('hex');
  const before = hash();
  const rows = asView(await inspect({ inbox: path, status: ['dead'], error: 'crm', limit: 4, now: NOW }), 'rows');
  assert.equal(rows.total, 6);
  assert.deepEqual(
    rows.rows.map((x) => x.deliveryId),
    ['evt_dead_crm_5', 'evt_dead_crm_4', 'evt_dead_crm_3', 'evt_dead_crm_2'],
    'newest first',
  );
  assert.equal(rows.order, 'newest');
  const oldest = asView(await inspect({ inbox: path, status: ['dead'], error: 'crm', limit: 4, order: 'oldest', now: NOW }), 'rows');
  assert.deepEqual(
    oldest.rows.map((x) => x.deliveryId),
    ['evt_dead_crm_0', 'evt_dead_crm_1', 'evt_dead_crm_2', 'evt_dead_crm_3'],
  );
  const since = asView(await inspect({ inbox: path, since: '15m', now: NOW }), 'rows');
  assert.deepEqual(since.rows.map((x) => x.deliveryId).sort(), [
    'evt_done_0',
    'evt_done_1',
    'evt_done_2',
    'evt_pending_new',
    'evt_working',
  ]);
  const one = asView(await inspect({ inbox: path, id: 'evt_dead_json_1', now: NOW }), 'delivery');
  assert.equal(one.deliveries[0]?.lastError, 'body is not JSON: Unexpected end');
  assert.equal(hash(), before, 'inspect changed the file');
});

test('inspect --id --body prints the raw bytes exactly, even when they are not text', async () => {
  const path = join(tempDir(), 'inbox.db');
  const inbox = openSqliteInbox(path);
  const raw = Buffer.concat([Buffer.from('{"id":"evt_bin","x":"'), Buffer.from([0xff, 0xfe, 0x00, 0x80]), Buffer.from('"}')]);
  await inbox.put({ source: 'stripe', deliveryId: 'evt_bin', eventType: undefined, body: raw, headers: {}, receivedAt: NOW });
  await inbox.close();
  const r = await new Promise<Buffer>((resolve, reject) => {
    import('node:child_process').then(({ execFile }) =>
      execFile(
        process.execPath,
        [join(import.meta.dirname, '../../bin/hookdrill'), 'inspect', '--inbox', path, '--id', 'evt_bin', '--body'],
        { encoding: 'buffer' },
        (err, out) => (err ? reject(err) : resolve(out)),
      ),
    );
  });
  assert.ok(r.equals(raw));
});

test('requeue: needs a selector, previews with --dry-run, moves only finished rows, once, and logs it', async () => {
  const path = join(tempDir(), 'inbox.db');
  await (await seeded(path)).close();
  await assert.rejects(requeue({ inbox: path }), (e: unknown) => e instanceof UsageError && /needs a selector/.test(e.message));
  await assert.rejects(requeue({ inbox: path, status: ['working'] }), /--status working: a working row is under a worker's lease/);

  const dry = await requeue({ inbox: path, status: ['dead'], error: 'crm', dryRun: true });
  assert.equal(dry.matched, 6);
  assert.equal(dry.moved, 0);
  assert.equal(dry.sample.length, 6);
  const check = openSqliteInbox(path);
  assert.equal((await check.stats()).counts.dead, 8, 'a dry run changes nothing');
  await check.close();

  const real = await requeue({ inbox: path, status: ['dead'], error: 'crm', resetAttempts: true });
  assert.equal(real.moved, 6);
  const again = await requeue({ inbox: path, status: ['dead'], error: 'crm' });
  assert.equal(again.moved, 0, 'requeued twice in a row: nothing more moves');
  // By id: a row under lease is never touched.
  const byId = await requeue({ inbox: path, ids: ['evt_working', 'evt_done_0'], keepAttempts: true });
  assert.equal(byId.moved, 1);

  const inbox = openSqliteInbox(path);
  const stats = await inbox.stats();
  assert.deepEqual(stats.counts, { pending: 9, working: 1, done: 2, dead: 2 });
  assert.equal((await inbox.get({ source: 'stripe', deliveryId: 'evt_dead_crm_0' }))?.attempts, 0);
  assert.equal((await inbox.get({ source: 'stripe', deliveryId: 'evt_done_0' }))?.attempts, 1);
  assert.equal((await inbox.get({ source: 'stripe', deliveryId: 'evt_working' }))?.status, 'working');
  assert.equal(await inbox.count({}), 14, 'no row was duplicated');
  await inbox.close();
  const view = asView(await inspect({ inbox: path }), 'overview');
  assert.deepEqual(
    view.overview.requeues.map((q) => q.moved),
    [1, 0, 6],
  );
  assert.deepEqual(view.overview.requeues[2]?.selector, { statuses: ['dead'], error: 'crm' });
});

test('during an outage: the overview says why pending rows wait and when they try next, and `requeue --status pending` retries them now, previewed and logged', async () => {
  const path = join(tempDir(), 'inbox.db');
  const inbox = await seeded(path);
  // Two more wait for their next attempt, an hour from now, after the app refused them.
  const now = Date.now();
  for (const id of ['evt_refused_1', 'evt_refused_2']) await inbox.put(stripeRow(id, { receivedAt: now - 5_000 }));
  for (const c of await inbox.claim({ limit: 10, leaseMs: 60_000, now: now - 1_000 }))
    if (c.deliveryId.startsWith('evt_refused'))
      await inbox.fail(
        c,
        c.fence,
        'forward target unreachable: connect ECONNREFUSED 127.0.0.1:3000',
        { retryAt: now + 3_600_000 },
        now - 900,
      );
  await inbox.close();

  const o = await hookdrill(['inspect', '--inbox', path]);
  assert.equal(o.code, 0, o.stderr);
  assert.match(
    o.stdout,
    /retrying, by last error:\n +2 +forward target unreachable: connect ECONNREFUSED 127\.0\.0\.1:3000 +e\.g\. evt_refused_1, next attempt in (59m|1h)/,
  );
  const line = /retry now: (hookdrill requeue .* --dry-run)/.exec(o.stdout)?.[1];
  assert.equal(
    line,
    `hookdrill requeue --inbox ${path} --status pending --error 'forward target unreachable: connect ECONNREFUSED 127.0.0.1:3000' --dry-run`,
  );

  // The suggested line, as pasted into a shell: previewed first, nothing moves.
  const args = [
    'requeue',
    '--inbox',
    path,
    '--status',
    'pending',
    '--error',
    'forward target unreachable: connect ECONNREFUSED 127.0.0.1:3000',
  ];
  const dry = await hookdrill([...args, '--dry-run']);
  assert.equal(dry.code, 0, dry.stderr);
  assert.match(
    dry.stdout,
    /dry run: 2 pending rows would be due now \(--status pending --error "forward target unreachable: connect ECONNREFUSED 127\.0\.0\.1:3000", attempts reset\); nothing changed/,
  );
  const real = await hookdrill(args);
  assert.equal(real.code, 0, real.stderr);
  assert.match(real.stdout, /requeued 2 of 2 matching pending rows \(.*\), due now; recorded in the requeue log/);
  const after = openSqliteInbox(path);
  const claimed = await after.claim({ limit: 10, leaseMs: 60_000 });
  assert.deepEqual(
    claimed
      .map((c) => c.deliveryId)
      .filter((id) => id.startsWith('evt_refused'))
      .sort(),
    ['evt_refused_1', 'evt_refused_2'],
    'due now, not in an hour',
  );
  assert.deepEqual((await after.overview()).requeues[0]?.selector, {
    statuses: ['pending'],
    error: 'forward target unreachable: connect ECONNREFUSED 127.0.0.1:3000',
  });
  await after.close();

  const working = await hookdrill(['requeue', '--inbox', path, '--status', 'working']);
  assert.equal(working.code, 2);
  assert.match(working.stderr, /^hookdrill: --status working: a working row is under a worker's lease and is left to it/);
});

test("after a check run: check's deliberate dead rows are marked in the overview and never suggested, --exclude-check alone is the overview without them, and the suggested --error is the whole error", async () => {
  const path = join(tempDir(), 'inbox.db');
  const inbox = openSqliteInbox(path);
  const now = Date.now();
  const error = 'forward target answered 422: {"error":{"code":"invalid_amount","message":"amount must be positive"}}';
  const put = (id: string, check: boolean) =>
    inbox.put(stripeRow(id, { headers: check ? { 'x-hookdrill-check': 'chk-1' } : {}, receivedAt: now - 10_000 }));
  for (let i = 0; i < 5; i++) await put(`evt_check_${i}`, true);
  for (let i = 0; i < 2; i++) await put(`evt_real_${i}`, false);
  for (const c of await inbox.claim({ limit: 10, leaseMs: 60_000, now: now - 1_000 }))
    await inbox.fail(c, c.fence, c.deliveryId.startsWith('evt_check') ? 'check: deliberately dead' : error, { dead: true }, now - 900);
  await inbox.close();

  const o = await hookdrill(['inspect', '--inbox', path], { COLUMNS: '80' });
  assert.equal(o.code, 0, o.stderr);
  assert.match(o.stdout, /5 +check: deliberately dead +e\.g\. evt_check_0, .* · all sent by hookdrill check/);
  const next = /next: (hookdrill requeue .* --dry-run)/.exec(o.stdout)?.[1];
  assert.equal(next, `hookdrill requeue --inbox ${path} --status dead --error '${error}' --dry-run`);
  const pasted = await hookdrill(['requeue', '--inbox', path, '--status', 'dead', '--error', error, '--dry-run']);
  assert.match(pasted.stdout, /dry run: 2 finished rows would move to pending/);

  const real = await hookdrill(['inspect', '--inbox', path, '--exclude-check']);
  assert.equal(real.code, 0, real.stderr);
  assert.match(real.stdout, /dead by last error \(rows hookdrill check sent left out\):/);
  assert.doesNotMatch(real.stdout, /deliberately dead/);
  assert.match(real.stdout, /^ +2 +forward target answered 422/m);
  const json = JSON.parse((await hookdrill(['inspect', '--inbox', path, '--exclude-check', '--json'])).stdout) as InspectResult;
  assert.equal(json.view, 'overview');
});

test('requeue during live traffic: a receiver and a worker keep running; nothing lost, nothing done twice', async () => {
  const path = join(tempDir(), 'inbox.db');
  const inbox = openSqliteInbox(path);
  // 600 dead rows from an earlier outage.
  for (let i = 0; i < 600; i++) {
    await inbox.put({
      source: 'stripe',
      deliveryId: `evt_old_${i}`,
      eventType: 'invoice.paid',
      body: Buffer.from(`{"id":"evt_old_${i}"}`),
      headers: {},
      receivedAt: NOW + i,
    });
  }
  for (const c of await inbox.claim({ limit: 600, leaseMs: 1_000, now: NOW + 10_000 })) {
    await inbox.fail(c, c.fence, 'crm down', { dead: true });
  }
  const handled = new Map<string, number>();
  const worker = new Worker({
    inbox,
    concurrency: 8,
    pollMs: 5,
    handler: async (item) => {
      handled.set(item.deliveryId, (handled.get(item.deliveryId) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 1));
    },
  });
  const server = createReceiverServer({ provider: providers.stripe, secrets: [SECRET], inbox, onRequest: () => worker.wake() });
  const { port } = await listen(server, 0, '127.0.0.1');
  worker.start();
  try {
    const [sent, moved] = await Promise.all([
      send({ url: `http://127.0.0.1:${port}/`, provider: 'stripe', secrets: [SECRET], count: 300, concurrency: 16, noRetry: true }),
      // Another process would do the same through its own connection: so does this.
      requeue({ inbox: path, status: ['dead'], rate: '2000/s' }).then((r) => r.moved),
    ]);
    assert.equal(sent.ok, true);
    assert.equal(moved, 600);
    const deadline = Date.now() + 20_000;
    while ((await inbox.stats()).counts.done < 900 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const stats = await inbox.stats();
    assert.deepEqual(stats.counts, { pending: 0, working: 0, done: 900, dead: 0 });
    assert.equal(handled.size, 900, 'every row was processed');
    assert.deepEqual(
      [...handled.values()].filter((n) => n > 1),
      [],
      'no row was processed twice',
    );
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await worker.stop();
    await inbox.close();
  }
});

test('replay: re-signed with a fresh timestamp and the original id, or with the original headers', async () => {
  const path = join(tempDir(), 'inbox.db');
  const inbox = openSqliteInbox(path);
  // Three deliveries received an hour ago: their stored signatures are now far outside Stripe's 300 s.
  const hourAgo = Date.now() - 3_600_000;
  const ids = ['evt_replay_a', 'evt_replay_b', 'evt_replay_c'];
  for (const id of ids) {
    const body = Buffer.from(JSON.stringify({ id, object: 'event', type: 'invoice.paid' }));
    const signed = providers.stripe.sign(body, [SECRET], { nowMs: hourAgo, deliveryId: id, eventType: 'invoice.paid' });
    const headers = Object.fromEntries(Object.entries(signed).map(([k, v]) => [k.toLowerCase(), v]));
    await inbox.put({ source: 'stripe', deliveryId: id, eventType: 'invoice.paid', body, headers, receivedAt: hourAgo });
  }
  await inbox.close();

  const rejected: string[] = [];
  const target = await startServer(async (req, res) => {
    try {
      await verifyWithOfficialCode('stripe', req.rawBody, req.headers, SECRET);
      reply(res, 200);
    } catch (err) {
      rejected.push((err as Error).message);
      reply(res, 400);
    }
  });
  try {
    const resigned = await replay({ inbox: path, to: target.url, status: ['pending'], provider: 'stripe', secrets: [SECRET] });
    assert.equal(resigned.ok, true, rejected.join('; '));
    assert.deepEqual(resigned.deliveries.map((d) => d.deliveryId).sort(), ids, 'the original ids');
    const stored = openSqliteInbox(path, { readonly: true });
    for (const req of target.requests) {
      const row = await stored.get({ source: 'stripe', deliveryId: JSON.parse(req.rawBody.toString()).id as string });
      assert.ok(row?.body?.equals(req.rawBody), 'the stored bytes, exactly');
    }
    await stored.close();

    // The stored headers, untouched: their hour-old signature is what the official verifier now refuses.
    const original = await replay({ inbox: path, to: target.url, ids: [ids[0]!], originalHeaders: true, noRetry: true });
    assert.equal(original.ok, false);
    assert.equal(original.deliveries[0]?.finalStatus, 400);
    assert.match(rejected.at(-1) ?? '', /tolerance|timestamp/i);
    await assert.rejects(replay({ inbox: path, to: target.url, provider: 'stripe', secrets: [SECRET] }), /replay needs a selector/);
  } finally {
    await target.close();
  }
});

test('a missing file, a foreign file, a newer schema, a locked database: one line, exit 2, nothing written', async () => {
  const dir = tempDir();
  const missing = await hookdrill(['inspect', '--inbox', join(dir, 'nope.db')]);
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /^hookdrill: no inbox at .*nope\.db\n$/);
  assert.ok(!existsSync(join(dir, 'nope.db')), 'inspect created nothing');

  const foreign = join(dir, 'notes.db');
  writeFileSync(foreign, 'plain text, not SQLite\n'.repeat(100));
  for (const cmd of [['inspect'], ['requeue', '--status', 'dead']]) {
    const r = await hookdrill([...cmd, '--inbox', foreign]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /is not a hookdrill inbox/);
  }

  const newer = join(dir, 'newer.db');
  await openSqliteInbox(newer).close();
  const n = new Database(newer);
  n.prepare('INSERT INTO hookdrill_migrations (version, name, applied_at) VALUES (99, ?, 0)').run('future');
  n.close();
  const r = await hookdrill(['requeue', '--inbox', newer, '--status', 'dead']);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /made by a newer hookdrill/);

  const locked = join(dir, 'locked.db');
  const seededInbox = await seeded(locked);
  await seededInbox.close();
  const holder = new Database(locked);
  holder.exec('BEGIN EXCLUSIVE');
  try {
    const l = await hookdrill(['requeue', '--inbox', locked, '--status', 'dead']);
    assert.equal(l.code, 2, l.stderr);
    assert.match(l.stderr, /^hookdrill: (inbox .* is locked by another process|cannot (open|read) inbox).*\n$/);
  } finally {
    holder.exec('ROLLBACK');
    holder.close();
  }
  const after = openSqliteInbox(locked, { readonly: true });
  assert.equal((await after.stats()).counts.dead, 8, 'nothing was requeued');
  await after.close();
  assert.deepEqual(
    readdirSync(dir).filter((f) => f.includes('tmp')),
    [],
  );
});

test('inspect reads while a writer holds an open transaction, and sees only committed rows', async () => {
  const path = join(tempDir(), 'inbox.db');
  await (await seeded(path)).close();
  const writer = new Database(path);
  writer.exec('BEGIN IMMEDIATE');
  writer
    .prepare(
      `INSERT INTO deliveries (source, delivery_id, event_type, body, headers, received_at, status, attempts, next_attempt_at) VALUES ('stripe', 'evt_uncommitted', 'x', x'7b7d', '{}', 1, 'pending', 0, 1)`,
    )
    .run();
  try {
    const view = await inspect({ inbox: path, now: NOW });
    assert.equal(view.view === 'overview' && view.overview.stats.total, 14, 'the uncommitted row is not counted');
  } finally {
    writer.exec('ROLLBACK');
    writer.close();
  }
});
