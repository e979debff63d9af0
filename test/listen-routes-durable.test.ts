import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { BACKENDS } from './helpers/backends.js';
import { hookdrill } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { spawnHookdrill } from './helpers/spawned.js';
import { tempDir } from './helpers/tmp.js';
import { until } from './helpers/until.js';
import { ROUTED_EVENTS, ROUTE_SECRETS, nodeTarget, pythonTarget, writeRoutesConfig } from './helpers/routes.js';
import { MIGRATIONS } from '../src/inbox/sqlite/migrations.js';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import pg from 'pg';
import { DATABASE_URL, freshSchema, postgresMissing } from './helpers/postgres.js';
import { LEDGER_SQL as PG_LEDGER, MIGRATIONS as PG_MIGRATIONS } from '../src/inbox/postgres/migrations.js';
import { openPostgresInbox } from '../src/inbox/postgres/index.js';
import { openInbox } from '../src/inbox/open.js';

const SECRET_OF = {
  stripe: ROUTE_SECRETS.STRIPE_WEBHOOK_SECRET,
  github: ROUTE_SECRETS.GITHUB_WEBHOOK_SECRET,
  slack: ROUTE_SECRETS.SLACK_SIGNING_SECRET,
} as const;

type Line = Record<string, unknown>;

for (const backend of BACKENDS) {
  test(`${backend.name}: one listen, three providers, five routes; the CI service down: its rows retried then dead while the others flowed, one requeue of its route once it is back`, {
    timeout: 180_000,
  }, async (t) => {
    const missing = await backend.missing();
    if (missing) return t.skip(missing);
    const dir = tempDir();
    const inbox = backend.target();
    const billing = await nodeTarget();
    const ci = await pythonTarget(await freePort(), dir);
    const support = await nodeTarget();
    t.after(() => Promise.all([billing.close(), ci.close(), support.close()]));
    writeRoutesConfig(dir, { billing: billing.url.replace(/\/$/, ''), ci: ci.url, support: support.url.replace(/\/$/, '') });
    // The CI service is down before anything is sent.
    await ci.kill();
    const listen = spawnHookdrill(
      ['listen', '--json', '--port', '0', '--inbox', inbox.url, '--max-attempts', '3', '--backoff-base', '200ms', '--backoff-max', '400ms'],
      ROUTE_SECRETS,
      [],
      dir,
    );
    t.after(async () => {
      listen.child.kill('SIGTERM');
      // A listen that does not stop is a failure said as one, not a test run that never ends.
      const timer = setTimeout(() => listen.child.kill('SIGKILL'), 20_000);
      const code = await listen.exit;
      clearTimeout(timer);
      // The inbox goes only once listen has stopped: a BullMQ queue obliterated under a live worker
      // never finishes (the worker writes its stalled-check key again), and the run would hang.
      await inbox.drop();
      assert.notEqual(listen.child.signalCode, 'SIGKILL', `listen did not stop on SIGTERM (exit ${code}): ${listen.stderr()}`);
    });
    const ready = await listen.waitFor((l) => l.event === 'ready', 30_000);
    const mounts = ready.providers as { provider: keyof typeof ROUTED_EVENTS; url: string }[];
    for (const m of mounts) {
      const fixtures = Object.keys(ROUTED_EVENTS[m.provider]).map((type) => `${m.provider}/${type}`);
      const r = await hookdrill(
        ['send', ...fixtures, '--provider', m.provider, '--secret', SECRET_OF[m.provider], '--url', m.url, '--no-retry'],
        {},
        [],
        dir,
        60_000,
      );
      assert.equal(r.code, 0, `${m.provider}: ${r.stdout}${r.stderr}`);
    }
    const stored = listen.lines.filter((l) => l.event === 'request' && l.result === 'stored');
    assert.equal(stored.length, 11);
    const routeOf = (l: Line) => (ROUTED_EVENTS[l.source as keyof typeof ROUTED_EVENTS] as Record<string, string>)[String(l.eventType)];
    const ids = (route: string) =>
      stored
        .filter((s) => routeOf(s) === route)
        .map((s) => `${s.source} ${s.deliveryId}`)
        .sort();
    const got = (x: { got(): { source: string; deliveryId: string }[] }) =>
      x
        .got()
        .map((g) => `${g.source} ${g.deliveryId}`)
        .sort();
    const final = (id: unknown) =>
      listen.lines.find((l) => l.event === 'processed' && l.deliveryId === id && (l.outcome === 'done' || l.outcome === 'dead'));
    await until(() => stored.every((s) => final(s.deliveryId) !== undefined), 'every stored delivery done or dead', 60_000);
    // The services that were up got exactly their events; the down one got nothing.
    assert.deepEqual(got(billing), ids('billing'));
    assert.deepEqual(got(support), ids('support'));
    assert.deepEqual(got(ci), []);
    // The CI rows: retried, then dead. Every other route's row was forwarded on its first attempt:
    // the down service cost the others no failure and no retry. (Which came first is the machine's
    // timing, not the design's, so it is not asserted: a loaded machine may finish a billing row
    // after a CI row died.)
    const ciRows = stored.filter((s) => routeOf(s) === 'ci');
    assert.equal(ciRows.length, 2);
    for (const s of ciRows) {
      assert.equal(final(s.deliveryId)?.outcome, 'dead');
      assert.match(String(final(s.deliveryId)?.error), /ECONNREFUSED/);
      assert.equal(listen.lines.filter((l) => l.event === 'processed' && l.deliveryId === s.deliveryId && l.outcome === 'retry').length, 2);
    }
    for (const s of stored.filter((x) => ['billing', 'support'].includes(routeOf(x) as string))) {
      assert.equal(final(s.deliveryId)?.outcome, 'done', String(s.deliveryId));
      assert.equal(
        listen.lines.filter((l) => l.event === 'processed' && l.deliveryId === s.deliveryId && l.outcome !== 'done').length,
        0,
        `${String(s.deliveryId)} was held up by the CI rows`,
      );
    }

    // Each row records its route: inspect selects by it and shows it.
    const dead = await hookdrill(['inspect', '--inbox', inbox.url, '--route', 'ci', '--json'], {}, [], dir, 30_000);
    assert.equal(dead.code, 0, dead.stderr);
    const deadRows = (JSON.parse(dead.stdout) as { rows: { deliveryId: string; route: string; status: string }[] }).rows;
    assert.deepEqual(
      deadRows.map((r) => [r.route, r.status]),
      [
        ['ci', 'dead'],
        ['ci', 'dead'],
      ],
    );
    const table = await hookdrill(
      ['inspect', '--inbox', inbox.url, '--status', 'done', '--limit', '20'],
      { COLUMNS: '200' },
      [],
      dir,
      30_000,
    );
    assert.equal(table.code, 0, table.stderr);
    assert.match(table.stdout, /^id\s+type\s+route\s+status/m);
    assert.match(table.stdout, /invoice\.paid\s+billing\s+done/);
    assert.match(table.stdout, /app_mention\s+support\s+done/);
    assert.match(table.stdout, /push\s+rest\s+done/);

    // Back up: one line requeues the route's dead rows, and they reach it, and only it.
    await ci.restart();
    const before = { billing: billing.got().length, support: support.got().length };
    const requeued = await hookdrill(['requeue', '--inbox', inbox.url, '--route', 'ci', '--dead'], {}, [], dir, 30_000);
    assert.equal(requeued.code, 0, requeued.stdout + requeued.stderr);
    assert.match(requeued.stdout, /\b2\b/);
    await until(() => ci.got().length === 2, 'the requeued CI rows delivered', 30_000);
    assert.deepEqual(got(ci), ids('ci'));
    assert.deepEqual({ billing: billing.got().length, support: support.got().length }, before);
    // Held rows stayed held: not forwarded, dead with the reason, their route kept.
    const held = await hookdrill(['inspect', '--inbox', inbox.url, '--route', 'parked', '--json'], {}, [], dir, 30_000);
    const heldRows = (JSON.parse(held.stdout) as { rows: { status: string; lastError: string }[] }).rows;
    assert.equal(heldRows.length, 1);
    assert.match(heldRows[0]?.lastError ?? '', /held by route parked/);
    // /metrics counts by provider and route.
    const metrics = await (await fetch(`${String(ready.url)}metrics`, { signal: AbortSignal.timeout(15_000) })).text();
    assert.match(metrics, /hookdrill_route_outcomes_total\{provider="github",route="ci",outcome="dead"\} 2/);
    assert.match(metrics, /hookdrill_route_outcomes_total\{provider="github",route="ci",outcome="done"\} 2/);
    assert.match(metrics, /hookdrill_route_outcomes_total\{provider="stripe",route="billing",outcome="done"\} 3/);
    assert.match(metrics, /hookdrill_deliveries_total\{result="stored",provider="slack"\} 2/);
  });
}

test('SQLite: an inbox made before routes (schema 5) is migrated by listen, its rows kept and routed by the routes of now', async () => {
  const dir = tempDir();
  const path = join(dir, 'old.db');
  // The file as hookdrill made it before routes: migrations 1 to 5, and a row.
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('application_id = 0x686b6472');
  db.exec('CREATE TABLE hookdrill_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
  for (const m of MIGRATIONS.filter((x) => x.version <= 5)) {
    db.exec(m.sql);
    db.prepare('INSERT INTO hookdrill_migrations VALUES (?, ?, 0)').run(m.version, m.name);
  }
  db.prepare(
    `INSERT INTO deliveries (source, delivery_id, event_type, body, headers, received_at, status, attempts, next_attempt_at)
     VALUES ('stripe', 'evt_old', 'invoice.paid', '{}', '{}', 1, 'pending', 0, 1)`,
  ).run();
  db.close();
  const inbox = openSqliteInbox(path);
  try {
    const row = await inbox.get({ source: 'stripe', deliveryId: 'evt_old' });
    assert.equal(row?.route, undefined);
    await inbox.put({
      source: 'stripe',
      deliveryId: 'evt_new',
      eventType: 'invoice.paid',
      body: Buffer.from('{}'),
      headers: {},
      receivedAt: 2,
      route: 'billing',
    });
    assert.equal((await inbox.get({ source: 'stripe', deliveryId: 'evt_new' }))?.route, 'billing');
    assert.deepEqual(
      (await inbox.select({ route: 'billing' }, { limit: 10 })).map((r) => r.deliveryId),
      ['evt_new'],
    );
    const claimed = await inbox.claim({ limit: 10, leaseMs: 1_000, now: 10 });
    assert.deepEqual(
      claimed.map((c) => [c.deliveryId, c.route]),
      [
        ['evt_old', undefined],
        ['evt_new', 'billing'],
      ],
    );
  } finally {
    await inbox.close();
  }
});

test('Postgres: a schema made before routes (version 1) is migrated when opened, its rows kept, new ones with their route', async (t) => {
  const missing = await postgresMissing();
  if (missing) return t.skip(missing);
  const target = freshSchema();
  t.after(() => target.drop());
  const client = new pg.Client(DATABASE_URL);
  await client.connect();
  try {
    // The schema as hookdrill made it before routes: migration 1 and its ledger, and a row.
    const s = `"${target.schema}"`;
    await client.query(`CREATE SCHEMA ${s}`);
    await client.query(PG_LEDGER.replaceAll('{s}', s));
    const [first] = PG_MIGRATIONS;
    await client.query((first?.sql ?? '').replaceAll('{s}', s));
    await client.query(`INSERT INTO ${s}.hookdrill_migrations VALUES (1, 'deliveries', 0)`);
    await client.query(
      `INSERT INTO ${s}.deliveries (source, delivery_id, event_type, body, headers, received_at, status, next_attempt_at)
       VALUES ('github', 'old-1', 'push', '\\x7b7d', '{}', 1, 'pending', 1)`,
    );
  } finally {
    await client.end();
  }
  const inbox = await openPostgresInbox(target.url);
  try {
    assert.equal((await inbox.get({ source: 'github', deliveryId: 'old-1' }))?.route, undefined);
    await inbox.put({
      source: 'github',
      deliveryId: 'new-1',
      eventType: 'workflow_run.completed',
      body: Buffer.from('{}'),
      headers: {},
      receivedAt: 2,
      route: 'ci',
    });
    assert.deepEqual(
      (await inbox.select({ route: 'ci' }, { limit: 10 })).map((r) => r.deliveryId),
      ['new-1'],
    );
    const claimed = await inbox.claim({ limit: 10, leaseMs: 1_000 });
    assert.deepEqual(
      claimed.map((c) => [c.deliveryId, c.route]),
      [
        ['old-1', undefined],
        ['new-1', 'ci'],
      ],
    );
  } finally {
    await inbox.close();
  }
});

for (const backend of BACKENDS) {
  test(`${backend.name}: requeue --route R --dead keeps each row's route; with --reroute it forgets it, to be routed anew`, async (t) => {
    const missing = await backend.missing();
    if (missing) return t.skip(missing);
    const target = backend.target();
    t.after(() => target.drop());
    const inbox = await openInbox(target.url);
    try {
      for (const id of ['evt_1', 'evt_2'])
        await inbox.put({
          source: 'stripe',
          deliveryId: id,
          eventType: 'invoice.paid',
          body: Buffer.from('{}'),
          headers: {},
          receivedAt: Date.now(),
          route: 'billing',
        });
      const claimed = await inbox.claim({ limit: 10, leaseMs: 5_000 });
      assert.equal(claimed.length, 2);
      await inbox.settle(
        claimed.map((c) => ({
          key: c,
          fence: c.fence,
          outcome: 'dead' as const,
          error: 'forward to http://127.0.0.1:4000 failed: ECONNREFUSED',
        })),
      );
    } finally {
      await inbox.close();
    }
    const kept = await hookdrill(
      ['requeue', '--inbox', target.url, '--route', 'billing', '--dead', '--id', 'evt_1'],
      {},
      [],
      undefined,
      30_000,
    );
    assert.equal(kept.code, 0, kept.stdout + kept.stderr);
    const rerouted = await hookdrill(
      ['requeue', '--inbox', target.url, '--route', 'billing', '--dead', '--reroute'],
      {},
      [],
      undefined,
      30_000,
    );
    assert.equal(rerouted.code, 0, rerouted.stdout + rerouted.stderr);
    const after = await openInbox(target.url, { create: false, readonly: true });
    try {
      const one = await after.get({ source: 'stripe', deliveryId: 'evt_1' });
      const two = await after.get({ source: 'stripe', deliveryId: 'evt_2' });
      assert.deepEqual([one?.status, one?.route], ['pending', 'billing']);
      assert.deepEqual([two?.status, two?.route], ['pending', undefined]);
    } finally {
      await after.close();
    }
  });
}
