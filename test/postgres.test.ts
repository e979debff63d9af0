import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { run as chaos } from '../src/chaos/run.js';
import { BIN, hookdrill } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { DATABASE_URL, freshSchema, postgresMissing } from './helpers/postgres.js';
import { displayTarget, openInbox } from '../src/inbox/open.js';
import type { NewDelivery } from '../src/inbox/index.js';
import type { PostgresInbox } from '../src/inbox/postgres/index.js';
import { reply, startServer } from './helpers/server.js';
import { postSignedStripe, startListen as startListenWith, stopAll } from './helpers/listen.js';
import type { Spawned } from './helpers/spawned.js';

const SECRET = 'whsec_postgres_tests';

/** Skips (with the reason) where Postgres cannot be reached; fails instead under HOOKDRILL_REQUIRE_PG=1. */
async function needPostgres(t: TestContext): Promise<boolean> {
  const why = await postgresMissing();
  if (why) t.skip(why);
  return why === undefined;
}

async function sql<R extends pg.QueryResultRow>(text: string, params: unknown[] = []): Promise<R[]> {
  const client = new pg.Client(DATABASE_URL);
  await client.connect();
  try {
    return (await client.query<R>(text, params)).rows;
  } finally {
    await client.end();
  }
}

/** A refused or reset connection counts as an answer too (599): the load must go on through a storm. */
const deliver = (url: string, id: string) => postSignedStripe(url, id, SECRET).catch(() => new Response(null, { status: 599 }));
const startListen = (inbox: string, ...more: string[]) => startListenWith(inbox, SECRET, ...more);
const stop = stopAll;

test('two receivers and four workers on one Postgres inbox: every delivery stored once and forwarded once, none lost', async (t) => {
  if (!(await needPostgres(t))) return;
  const s = freshSchema();
  const app = await startServer((_req, res) => reply(res, 200, 'ok'));
  const listens: Spawned[] = [];
  try {
    // Two take the traffic; all four run workers that forward to the app.
    for (let i = 0; i < 4; i++) listens.push((await startListen(s.url, '--forward-to', app.url, '--concurrency', '8')).p);
    const urls = await Promise.all(listens.slice(0, 2).map((p) => p.waitFor((l) => l.event === 'ready').then((l) => String(l.url))));
    // The same events through both receivers at once, each sent twice: a provider retrying into a load balancer.
    const ids = Array.from({ length: 150 }, (_, i) => `evt_pg_scale_${i}`);
    const answers = await Promise.all(ids.flatMap((id) => urls.map((u) => deliver(u, id))));
    assert.deepEqual([...new Set(answers.map((a) => a.status))], [200]);
    const [stored] = await sql<{ n: string }>(`SELECT count(*) AS n FROM "${s.schema}".deliveries`);
    assert.equal(Number(stored?.n), 150, 'each delivery stored once');
    for (let i = 0; ; i++) {
      const [left] = await sql<{ n: string }>(`SELECT count(*) AS n FROM "${s.schema}".deliveries WHERE status <> 'done'`);
      if (Number(left?.n) === 0) break;
      if (i > 200) assert.fail(`${left?.n} rows never finished`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const forwarded = app.requests.map((r) => String(r.headers['x-hookdrill-delivery-id']));
    assert.equal(forwarded.length, 150, `forwarded ${forwarded.length} times for 150 deliveries`);
    assert.deepEqual(new Set(forwarded), new Set(ids), 'each forwarded exactly once');
  } finally {
    await stop(...listens);
    await app.close();
    await s.drop();
  }
});

test('Postgres connections terminated under load: 503s, never a 200 for a delivery it does not hold, and it recovers by itself', async (t) => {
  if (!(await needPostgres(t))) return;
  const s = freshSchema();
  const name = `hd_${s.schema}`;
  const url = new URL(s.url);
  url.searchParams.set('application_name', name);
  const { p, url: receiver } = await startListen(url.toString(), '--no-worker');
  try {
    const answered: { id: string; status: number }[] = [];
    let n = 0;
    const load = async (until: () => boolean) => {
      while (!until()) {
        const id = `evt_pg_term_${n++}`;
        answered.push({ id, status: (await deliver(receiver, id)).status });
      }
    };
    let done = false;
    const senders = Promise.all(Array.from({ length: 8 }, () => load(() => done)));
    await new Promise((r) => setTimeout(r, 300));
    // Terminate the receiver's connections until one of them was busy with a delivery (a 503 shows
    // it): terminating only idle connections would prove nothing.
    let storms = 0;
    while (!answered.some((a) => a.status === 503)) {
      if (++storms > 50) assert.fail('no delivery was ever caught by a terminated connection');
      await sql('SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1', [name]);
      await new Promise((r) => setTimeout(r, 100));
    }
    await new Promise((r) => setTimeout(r, 300));
    done = true;
    await senders;
    const ok = answered.filter((a) => a.status === 200).map((a) => a.id);
    const held = new Set(
      (await sql<{ delivery_id: string }>(`SELECT delivery_id FROM "${s.schema}".deliveries`)).map((r) => r.delivery_id),
    );
    assert.deepEqual(
      ok.filter((id) => !held.has(id)),
      [],
      'a 200 for a delivery the inbox does not hold',
    );
    assert.ok(ok.length > 0);
    assert.ok(
      answered.every((a) => a.status === 200 || a.status === 503),
      JSON.stringify(answered.filter((a) => a.status !== 200 && a.status !== 503).slice(0, 3)),
    );
    // After the storm, new deliveries are stored again without a restart.
    assert.equal((await deliver(receiver, 'evt_pg_after')).status, 200);
    assert.equal((await fetch(`${receiver}healthz`)).status, 200);
  } finally {
    await stop(p);
    await s.drop();
  }
});

test('the CLI on Postgres: inspect and requeue work on a URL; a database that is down is one line, exit 2, no password shown', async (t) => {
  if (!(await needPostgres(t))) return;
  const s = freshSchema();
  const { p, url } = await startListen(s.url, '--no-worker');
  try {
    for (const id of ['evt_a', 'evt_b', 'evt_c']) assert.equal((await deliver(url, id)).status, 200);
    const inspect = await hookdrill(['inspect', '--inbox', s.url, '--json']);
    assert.equal(inspect.code, 0, inspect.stderr);
    assert.equal((JSON.parse(inspect.stdout) as { overview: { stats: { counts: { pending: number } } } }).overview.stats.counts.pending, 3);
    await sql(`UPDATE "${s.schema}".deliveries SET status = 'dead', last_error = 'crm answered 500', finished_at = 1`);
    const requeue = await hookdrill(['requeue', '--inbox', s.url, '--status', 'dead', '--error', 'crm']);
    assert.equal(requeue.code, 0, requeue.stderr);
    assert.match(requeue.stdout, /requeued 3 of 3/);
    const [pending] = await sql<{ n: string }>(`SELECT count(*) AS n FROM "${s.schema}".deliveries WHERE status = 'pending'`);
    assert.equal(Number(pending?.n), 3);
    // inspect is read-only: the database itself would refuse a write.
    const missing = await hookdrill(['inspect', '--inbox', `${s.url.replace(s.schema, `${s.schema}_none`)}`]);
    assert.equal(missing.code, 2);
    assert.match(missing.stderr, /no hookdrill inbox in schema/);
  } finally {
    await stop(p);
    await s.drop();
  }
  const port = await freePort(); // nothing listens there
  const down = await hookdrill(['inspect', '--inbox', `postgres://ops:hunter2@127.0.0.1:${port}/test`]);
  assert.equal(down.code, 2);
  assert.equal(down.stderr.trim().split('\n').length, 1, down.stderr);
  assert.match(down.stderr, /refused the connection/);
  assert.doesNotMatch(down.stderr + down.stdout, /hunter2/);
});

test('chaos --inbox postgres:// against listen on Postgres, killed at random moments: nothing acknowledged lost', async (t) => {
  if (!(await needPostgres(t))) return;
  const s = freshSchema();
  const port = await freePort();
  try {
    const result = await chaos({
      receiver: `node ${BIN} listen --provider stripe --secret ${SECRET} --port ${port} --inbox '${s.url}' --lease 500ms`,
      url: `http://127.0.0.1:${port}/`,
      provider: 'stripe',
      secrets: [SECRET],
      inbox: s.url,
      events: 20,
      concurrency: 16,
      rounds: 4,
      killPoint: 'random',
      settle: '300ms',
    });
    assert.deepEqual(result.totals.lost, [], JSON.stringify(result.problems));
    assert.equal(result.ok, true, JSON.stringify(result.problems));
    assert.equal(result.totals.stored, result.totals.sent);
  } finally {
    await s.drop();
  }
});

test('a worker SIGKILLed mid-handler on Postgres: its row is claimed again by another once the lease runs out', async (t) => {
  if (!(await needPostgres(t))) return;
  const s = freshSchema();
  let hang = true;
  // The app holds the first forward open (the worker dies while waiting for it), then answers.
  const app = await startServer((_req, res) => {
    if (hang) return;
    reply(res, 200, 'ok');
  });
  const lease = ['--lease', '1500ms', '--forward-timeout', '1s', '--forward-to', app.url];
  const first = await startListen(s.url, ...lease);
  let second: Spawned | undefined;
  try {
    assert.equal((await deliver(first.url, 'evt_pg_killed')).status, 200);
    for (let i = 0; app.requests.length === 0; i++) {
      if (i > 100) assert.fail('the first worker never forwarded');
      await new Promise((r) => setTimeout(r, 20));
    }
    first.p.child.kill('SIGKILL');
    await first.p.exit;
    hang = false;
    second = (await startListen(s.url, ...lease)).p;
    for (let i = 0; ; i++) {
      const [row] = await sql<{ status: string; attempts: number }>(`SELECT status, attempts FROM "${s.schema}".deliveries`);
      if (row?.status === 'done') {
        assert.equal(row.attempts, 2, 'claimed once by the killed worker, once after its lease ran out');
        break;
      }
      if (i > 200) assert.fail(`never reclaimed: ${JSON.stringify(row)}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(app.requests.length, 2);
  } finally {
    await stop(...[first.p, ...(second ? [second] : [])].filter((p) => p.child.exitCode === null && p.child.signalCode === null));
    await app.close();
    await s.drop();
  }
});

test('requeue on Postgres while workers run: dead rows come back and are processed once each', async (t) => {
  if (!(await needPostgres(t))) return;
  const s = freshSchema();
  let failing = true;
  const app = await startServer((_req, res) => reply(res, failing ? 500 : 200, failing ? 'crm down' : 'ok'));
  const workers = [
    await startListen(s.url, '--forward-to', app.url, '--max-attempts', '1'),
    await startListen(s.url, '--forward-to', app.url, '--max-attempts', '1'),
  ];
  try {
    const ids = Array.from({ length: 40 }, (_, i) => `evt_pg_requeue_${i}`);
    for (const id of ids) assert.equal((await deliver(workers[0]!.url, id)).status, 200);
    const count = async (status: string) =>
      Number((await sql<{ n: string }>(`SELECT count(*) AS n FROM "${s.schema}".deliveries WHERE status = $1`, [status]))[0]?.n);
    for (let i = 0; (await count('dead')) < 40; i++) {
      if (i > 200) assert.fail('rows never went dead');
      await new Promise((r) => setTimeout(r, 50));
    }
    failing = false;
    const before = app.requests.length;
    const requeue = await hookdrill(['requeue', '--inbox', s.url, '--status', 'dead', '--error', 'crm down']);
    assert.equal(requeue.code, 0, requeue.stderr);
    for (let i = 0; (await count('done')) < 40; i++) {
      if (i > 200) assert.fail(`only ${await count('done')} of 40 done after the requeue`);
      await new Promise((r) => setTimeout(r, 50));
    }
    const again = app.requests.slice(before).map((r) => String(r.headers['x-hookdrill-delivery-id']));
    assert.equal(again.length, 40, 'each requeued row forwarded once');
    assert.deepEqual(new Set(again), new Set(ids));
  } finally {
    await stop(...workers.map((w) => w.p));
    await app.close();
    await s.drop();
  }
});

test('a Postgres URL is shown without its password wherever the URL keeps one', () => {
  for (const [target, leak] of [
    ['postgres://ops:hunter2@db.internal:5432/app', 'hunter2'],
    ['postgres://ops:p@ss@db.internal/app', 'p@ss'],
    ['postgresql://ops@db.internal/app?password=hunter2&sslmode=require', 'hunter2'],
    ['postgres://ops@db.internal/app?sslpassword=hunter2', 'hunter2'],
  ] as const) {
    const shown = displayTarget(target);
    assert.doesNotMatch(shown, new RegExp(leak.replace(/[@]/g, '\\@')), shown);
    assert.match(shown, /db\.internal/);
  }
});

test('Postgres: batches in flight at once that share keys in opposite orders neither deadlock nor fail', async (t) => {
  if (!(await needPostgres(t))) return;
  const s = freshSchema();
  const inbox = (await openInbox(s.url)) as PostgresInbox;
  try {
    const row = (id: string): NewDelivery => ({
      source: 'stripe',
      deliveryId: id,
      eventType: 'x',
      body: Buffer.from('{}'),
      headers: {},
      receivedAt: Date.now(),
    });
    for (let round = 0; round < 10; round++) {
      const ids = Array.from({ length: 200 }, (_, i) => `evt_dl_${round}_${i}`);
      const [a, b] = await Promise.all([inbox.putMany(ids.map(row)), inbox.putMany([...ids].reverse().map(row))]);
      const inserted = [...a, ...b].filter((r) => r.inserted).length;
      assert.equal(inserted, 200, 'each key stored once, by one batch or the other');
    }
  } finally {
    await inbox.close();
    await s.drop();
  }
});

test('Postgres: an inbox opened read-only (inspect) cannot write, even by mistake', async (t) => {
  if (!(await needPostgres(t))) return;
  const s = freshSchema();
  await (await openInbox(s.url)).close();
  const inbox = await openInbox(s.url, { readonly: true, create: false });
  try {
    await assert.rejects(
      inbox.put({ source: 'stripe', deliveryId: 'evt_ro', eventType: 'x', body: Buffer.from('{}'), headers: {}, receivedAt: 1 }),
      /read-only/,
    );
    assert.equal(await inbox.count({}), 0);
  } finally {
    await inbox.close();
    await s.drop();
  }
});
