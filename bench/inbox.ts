/**
 * `npm run bench` (second part): the incident commands on a large inbox — 1,000,000 rows, 10,000 of
 * them dead. Targets from issue 5: the default `inspect` view under 300 ms, `requeue --status
 * dead` of the 10,000 under 2 s. Beside each figure, a baseline measured on the same file in the
 * same run (a full COUNT(*) scan), so a slow machine shows as a slow baseline too.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { run as inspect } from '../src/incident/inspect.js';
import { run as requeue } from '../src/incident/requeue.js';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';

const ROWS = Number(process.env.BENCH_INBOX_ROWS ?? 1_000_000);
const DEAD = Math.min(10_000, Math.floor(ROWS / 100));
const REPEAT = 5;

const dir = mkdtempSync(join(tmpdir(), 'hookdrill-bench-'));
const path = join(dir, 'inbox.db');
try {
  await openSqliteInbox(path).close(); // the real schema, through the real open
  const db = new Database(path);
  const now = Date.now();
  const started = performance.now();
  const insert = db.prepare(`
    INSERT INTO deliveries (source, delivery_id, event_type, body, headers, received_at, status, attempts, next_attempt_at, last_error, finished_at)
    VALUES (?, ?, ?, ?, '{}', ?, ?, ?, ?, ?, ?)`);
  const body = Buffer.from(JSON.stringify({ id: 'evt_x', type: 'invoice.paid', data: { object: { amount_paid: 2000 } } }));
  db.transaction(() => {
    for (let i = 0; i < ROWS; i++) {
      const dead = i % (ROWS / DEAD) === 0;
      const at = now - Math.floor(((ROWS - i) / ROWS) * 7 * 86_400_000); // a week of traffic
      const error = dead ? (i % 3 === 0 ? 'forward target answered 503: crm down' : 'body is not JSON') : null;
      insert.run(
        'stripe',
        `evt_${i.toString(36).padStart(10, '0')}`,
        i % 2 ? 'invoice.paid' : 'customer.created',
        body,
        at,
        dead ? 'dead' : 'done',
        dead ? 8 : 1,
        at,
        error,
        at + 50,
      );
    }
  })();
  db.close();
  process.stderr.write(
    `built ${ROWS.toLocaleString()} rows (${DEAD.toLocaleString()} dead) in ${((performance.now() - started) / 1000).toFixed(1)}s\n`,
  );

  const time = async (fn: () => Promise<unknown>) => {
    const t = performance.now();
    await fn();
    return performance.now() - t;
  };
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

  const baseline: number[] = [];
  const views: number[] = [];
  for (let i = 0; i < REPEAT; i++) {
    baseline.push(
      await time(async () => {
        const c = new Database(path, { readonly: true });
        c.prepare('SELECT COUNT(*) FROM deliveries').get();
        c.close();
      }),
    );
    views.push(await time(() => inspect({ inbox: path })));
  }

  const requeues: number[] = [];
  for (let i = 0; i < 3; i++) {
    requeues.push(await time(() => requeue({ inbox: path, status: ['dead'] })));
    // Bury them again for the next round (not timed).
    const c = new Database(path);
    c.prepare(
      `UPDATE deliveries SET status = 'dead', finished_at = received_at + 50 WHERE last_error IS NOT NULL AND status = 'pending'`,
    ).run();
    c.close();
  }
  const view = median(views);
  const base = median(baseline);
  const rq = median(requeues);
  const lines = [
    `inspect overview on ${ROWS.toLocaleString()} rows: ${view.toFixed(0)} ms (target < 300 ms: ${view < 300 ? 'met' : 'NOT met'}); ${(view / base).toFixed(2)}x a full COUNT(*) scan (${base.toFixed(0)} ms)`,
    `requeue --status dead of ${DEAD.toLocaleString()} rows: ${rq.toFixed(0)} ms (target < 2000 ms: ${rq < 2000 ? 'met' : 'NOT met'}); ${(rq / base).toFixed(2)}x the scan`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  process.stdout.write(
    `${JSON.stringify({ bench: 'inbox', rows: ROWS, dead: DEAD, inspectMs: Math.round(view), requeueMs: Math.round(rq), countScanMs: Math.round(base), inspectVsScan: Number((view / base).toFixed(3)), requeueVsScan: Number((rq / base).toFixed(3)) })}\n`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
