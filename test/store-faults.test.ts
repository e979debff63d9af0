import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { Redis } from 'ioredis';
import { hookdrill } from './helpers/cli.js';
import { postSignedStripe, startListen, stopAll } from './helpers/listen.js';
import { DATABASE_URL, postgresMissing } from './helpers/postgres.js';
import { ownRedis, redisMissing } from './helpers/redis.js';
import { until } from './helpers/until.js';

/** Faults of the store under a running listen (issue 26): what /healthz, stderr and the next commands say. */

const SECRET = `whsec_${Buffer.from('store-faults-secret-00000').toString('base64')}`;

async function healthz(url: string): Promise<{ status: number; body: { ok: boolean; problem?: string; warnings?: string[] } }> {
  const r = await fetch(new URL('/healthz', url));
  return { status: r.status, body: (await r.json()) as { ok: boolean; problem?: string; warnings?: string[] } };
}

async function sendSome(url: string, prefix: string, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await postSignedStripe(url, `evt_${prefix}_${i}`, SECRET)).status);
  return out;
}

test('BullMQ: a Redis restarted empty under listen is found and said (stderr and /healthz), and what comes after stays reachable by inspect and a restarted listen', async (t) => {
  if (await redisMissing()) return t.skip('no Redis');
  const redis = await ownRedis();
  const inbox = `${redis.url}/lost`;
  try {
    let { p, url } = await startListen(inbox, SECRET, '--no-worker');
    try {
      assert.deepEqual(await sendSome(url, 'before', 3), [200, 200, 200]);
      await redis.restart();
      // The connection comes back on its own; every delivery after it is stored (or 503 until then).
      await until(async () => (await postSignedStripe(url, 'evt_probe', SECRET)).status === 200, 'Redis back', 15_000);
      assert.deepEqual(await sendSome(url, 'after', 4), [200, 200, 200, 200]);
      await until(() => /Redis lost the data of BullMQ queue lost/.test(p.stderr()), 'the loss said on stderr', 5_000);
      assert.match(
        p.stderr(),
        /hookdrill: warning: Redis lost the data of BullMQ queue lost .*: up to 3 jobs it held — deliveries already acknowledged — are gone/,
      );
      const h = await healthz(url);
      assert.equal(h.status, 200, 'writes work again');
      assert.equal(h.body.ok, true);
      assert.match(h.body.warnings?.[0] ?? '', /Redis lost the data of BullMQ queue lost .*up to 3 jobs/);
      assert.doesNotMatch(JSON.stringify(h.body), /127\.0\.0\.1/, '/healthz does not say where the store is');

      // inspect reaches what was stored after the loss (before the fix: "no hookdrill inbox", exit 2).
      const seen = await hookdrill(['inspect', '--inbox', inbox, '--status', 'pending', '--json', '--limit', '100']);
      assert.equal(seen.code, 0, seen.stderr);
      const ids = (JSON.parse(seen.stdout) as { rows: { deliveryId: string }[] }).rows.map((r) => r.deliveryId).sort();
      assert.deepEqual(ids, ['evt_after_0', 'evt_after_1', 'evt_after_2', 'evt_after_3', 'evt_probe']);
    } finally {
      await stopAll(p);
    }
    // A restarted listen takes the queue back (before the fix: "holds jobs that hookdrill did not put").
    ({ p, url } = await startListen(inbox, SECRET));
    try {
      await until(
        async () => {
          const r = JSON.parse((await hookdrill(['inspect', '--inbox', inbox, '--json'])).stdout) as {
            overview: { stats: { counts: { done: number } } };
          };
          return r.overview.stats.counts.done === 5;
        },
        'the worker of a restarted listen to process them',
        15_000,
      );
    } finally {
      await stopAll(p);
    }
  } finally {
    await redis.stop();
  }
});

test('/healthz is 503 while Redis is at its maxmemory (noeviction) and refuses every delivery; it was 200', async (t) => {
  if (await redisMissing()) return t.skip('no Redis');
  const redis = await ownRedis(['--maxmemory', '3mb', '--maxmemory-policy', 'noeviction']);
  try {
    const { p, url } = await startListen(`${redis.url}/full`, SECRET, '--no-worker');
    try {
      assert.equal((await healthz(url)).status, 200);
      const filler = new Redis(redis.url, { maxRetriesPerRequest: 0 });
      filler.on('error', () => undefined);
      try {
        // Filled as an app sharing the Redis would fill it, until Redis refuses more (OOM).
        for (let i = 0; ; i++) {
          const refused = await filler.set(`filler:${i}`, randomBytes(64 * 1024).toString('base64')).then(
            () => false,
            (err: Error) => /OOM/.test(err.message),
          );
          if (refused) break;
        }
      } finally {
        filler.disconnect();
      }
      // Seen by /healthz's own probe before any delivery was refused.
      const probed = await healthz(url);
      assert.equal(probed.status, 503);
      assert.match(probed.body.problem ?? '', /^Redis is at its maxmemory \(3 MiB, noeviction\)/);
      assert.equal((await postSignedStripe(url, 'evt_refused', SECRET)).status, 503);
      const h = await healthz(url);
      assert.equal(h.status, 503);
      assert.match(h.body.problem ?? '', /maxmemory|OOM/);
    } finally {
      await stopAll(p);
    }
  } finally {
    await redis.stop();
  }
});

/** A database of the test's own: made read-only, or given a trigger, without touching what other suites use. */
async function ownDatabase(): Promise<{ url: string; admin: (sql: string) => Promise<void>; drop: () => Promise<void> }> {
  const name = `hd_fault_${randomBytes(5).toString('hex')}`;
  const admin = async (sql: string, db = DATABASE_URL) => {
    const c = new pg.Client(db);
    await c.connect();
    try {
      await c.query(sql);
    } finally {
      await c.end();
    }
  };
  await admin(`CREATE DATABASE ${name}`);
  const url = new URL(DATABASE_URL);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    admin: (sql) => admin(sql, url.toString()),
    drop: () => admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  };
}

test('Postgres turned read-only under listen: /healthz is 503 and says so (it answered 200 to every poll), without naming the database', async (t) => {
  if (await postgresMissing()) return t.skip('no Postgres');
  const db = await ownDatabase();
  try {
    const { p, url } = await startListen(db.url, SECRET, '--no-worker');
    try {
      assert.deepEqual(await sendSome(url, 'ok', 1), [200]);
      const name = new URL(db.url).pathname.slice(1);
      // Every session from now on is read-only; the pool's are ended so that it opens new ones.
      await db.admin(`ALTER DATABASE ${name} SET default_transaction_read_only = on`);
      await db.admin(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${name}' AND pid <> pg_backend_pid()`);
      // Seen by /healthz's own probe before any delivery is refused: not only after a failed write.
      await until(
        async () => /^Postgres is read-only \(default_transaction_read_only\)/.test((await healthz(url)).body.problem ?? ''),
        'the health probe to find it read-only, with no write tried',
        10_000,
      );
      await until(async () => (await postSignedStripe(url, `evt_ro_${Date.now()}`, SECRET)).status === 503, 'writes refused', 10_000);
      const h = await healthz(url);
      assert.equal(h.status, 503);
      assert.match(h.body.problem ?? '', /read-only/);
      assert.doesNotMatch(h.body.problem ?? '', new RegExp(`${name}|postgres@|127\\.0\\.0\\.1|hookdrill\\.`), h.body.problem);
      assert.doesNotMatch(p.stderr(), /inspect opens the inbox read-only/, 'the old, misleading reason');
    } finally {
      await stopAll(p);
    }
  } finally {
    await db.drop();
  }
});

test('Postgres that refuses every insert (a full tablespace, here a trigger) answers reads: /healthz is 503 from the first refused write', async (t) => {
  if (await postgresMissing()) return t.skip('no Postgres');
  const db = await ownDatabase();
  try {
    const { p, url } = await startListen(db.url, SECRET, '--no-worker');
    try {
      await db.admin(`CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN RAISE EXCEPTION 'could not extend file: No space left on device' USING ERRCODE = '53100'; END $$`);
      await db.admin('CREATE TRIGGER refuse BEFORE INSERT ON hookdrill.deliveries FOR EACH ROW EXECUTE FUNCTION refuse()');
      assert.equal((await healthz(url)).status, 200, 'nothing written yet: nothing known');
      assert.equal((await postSignedStripe(url, 'evt_full', SECRET)).status, 503);
      const h = await healthz(url);
      assert.equal(h.status, 503);
      assert.match(h.body.problem ?? '', /the last write failed .* No space left on device/);
      await db.admin('DROP TRIGGER refuse ON hookdrill.deliveries');
      assert.equal((await postSignedStripe(url, 'evt_full', SECRET)).status, 200, 'the retry is stored once space is back');
      assert.equal((await healthz(url)).status, 200, 'and health follows the write that went through');
    } finally {
      await stopAll(p);
    }
  } finally {
    await db.drop();
  }
});
