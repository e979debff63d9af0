/**
 * `npm run bench`: the incident commands on a large Postgres inbox, as bench/inbox.ts does on
 * SQLite — 1,000,000 rows (10,000 dead; BENCH_INBOX_ROWS), the default `inspect` view (read-only
 * connection) and `requeue --status dead`, beside a full COUNT(*) scan of the same table in the
 * same run. Skipped with a line when Postgres cannot be reached.
 */
import pg from 'pg';
import { run as inspect } from '../src/incident/inspect.js';
import { run as requeue } from '../src/incident/requeue.js';
import { openInbox } from '../src/inbox/open.js';

const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ROWS = Number(process.env.BENCH_INBOX_ROWS ?? 1_000_000);
const DEAD = Math.min(10_000, Math.floor(ROWS / 100));
const schema = `hd_bench_inbox_${process.pid}`;
const url = new URL(DATABASE_URL);
url.searchParams.set('schema', schema);
const target = url.toString();

const admin = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 3_000 });
try {
  await admin.connect();
} catch (err) {
  console.log(`Postgres inbox bench skipped: ${(err as Error).message}`);
  process.exit(0);
}
try {
  await (await openInbox(target)).close(); // the real schema, through the real open
  const started = performance.now();
  const now = Date.now();
  const every = Math.floor(ROWS / DEAD);
  // A week of traffic, built server-side.
  await admin.query(
    `INSERT INTO ${schema}.deliveries (source, delivery_id, event_type, body, headers, received_at, status, attempts, next_attempt_at, last_error, finished_at)
     SELECT 'stripe', 'evt_' || lpad(to_hex(i), 10, '0'), CASE WHEN i % 2 = 1 THEN 'invoice.paid' ELSE 'customer.created' END,
            '\\x7b7d'::bytea, '{}', $1::bigint - ((($2::bigint - i) * 604800000) / $2::bigint),
            CASE WHEN i % $3 = 0 THEN 'dead' ELSE 'done' END, CASE WHEN i % $3 = 0 THEN 8 ELSE 1 END,
            $1::bigint - ((($2::bigint - i) * 604800000) / $2::bigint),
            CASE WHEN i % $3 = 0 THEN (CASE WHEN i % 3 = 0 THEN 'forward target answered 503: crm down' ELSE 'body is not JSON' END) END,
            $1::bigint - ((($2::bigint - i) * 604800000) / $2::bigint) + 50
       FROM generate_series(0, $2::bigint - 1) AS i`,
    [now, ROWS, every],
  );
  await admin.query(`ANALYZE ${schema}.deliveries`);
  process.stderr.write(`built ${ROWS.toLocaleString()} Postgres rows in ${((performance.now() - started) / 1000).toFixed(1)}s\n`);

  const time = async (fn: () => Promise<unknown>) => {
    const t = performance.now();
    await fn();
    return performance.now() - t;
  };
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  const baseline: number[] = [];
  const views: number[] = [];
  for (let i = 0; i < 5; i++) {
    baseline.push(await time(() => admin.query(`SELECT count(*) FROM ${schema}.deliveries`)));
    views.push(await time(() => inspect({ inbox: target })));
  }
  const requeues: number[] = [];
  for (let i = 0; i < 3; i++) {
    requeues.push(await time(() => requeue({ inbox: target, status: ['dead'] })));
    await admin.query(
      `UPDATE ${schema}.deliveries SET status = 'dead', finished_at = received_at + 50 WHERE last_error IS NOT NULL AND status = 'pending'`,
    );
  }
  const view = median(views);
  const base = median(baseline);
  const rq = median(requeues);
  console.log(
    `Postgres: inspect overview on ${ROWS.toLocaleString()} rows: ${view.toFixed(0)} ms (${(view / base).toFixed(2)}x a full count(*) scan, ${base.toFixed(0)} ms); requeue --status dead of ${DEAD.toLocaleString()} rows: ${rq.toFixed(0)} ms (${(rq / base).toFixed(2)}x)`,
  );
} finally {
  await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  await admin.end();
}
