/**
 * `npm run bench` (fourth part): how fast listen's worker drains a backlog, by claim batch. The
 * worker claims up to its concurrency in one statement and records the outcomes of rows finished
 * together in one transaction; with a claim batch of 1 every delivery costs two commits of its own.
 * A no-op handler, the inbox as listen opens it (writes on the writer thread). Each batch size runs
 * for a fixed time on a backlog it cannot finish. Prints a table and writes bench-drain.json.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { busyShare, cpu } from './cpu.js';
import { REDIS_URL, removeQueue } from './redis.js';
import { openInbox } from '../src/inbox/open.js';
import type { Inbox } from '../src/inbox/types.js';
import { ThreadedSqliteInbox } from '../src/inbox/sqlite/threaded.js';
import { Worker } from '../src/worker/index.js';

const SECONDS = Number(process.env.BENCH_DRAIN_SECONDS ?? 3);
const BACKLOG = Number(process.env.BENCH_DRAIN_ROWS ?? 60_000);
const BATCHES = [1, 10, 100];

/** The backlog, put in slices (the batcher refuses more than 10,000 waiting writes at once). */
async function fill(put: (i: number) => Promise<unknown>): Promise<void> {
  for (let from = 0; from < BACKLOG; from += 5_000) {
    await Promise.all(Array.from({ length: Math.min(5_000, BACKLOG - from) }, (_, k) => put(from + k)));
  }
}

/**
 * `workers` inboxes on one target (each a worker of its own, claim batch 10) draining a backlog put
 * there first, for SECONDS: rows/s and how busy the machine was. For the backends that scale out.
 */
async function drainShared(target: string, workers: number): Promise<{ workers: number; rowsPerSec: number; machineBusy: number }> {
  const filler = await openInbox(target, { receiver: { groupCommit: { maxBatch: 1_000, maxWaitMs: 0 } } });
  const body = Buffer.from(JSON.stringify({ type: 'invoice.paid', data: { amount: 4200 } }));
  const at = Date.now() - 60_000;
  await fill((i) =>
    filler.put({ source: 'standard', deliveryId: `msg_${i}`, eventType: 'invoice.paid', body, headers: {}, receivedAt: at }),
  );
  await filler.close();
  const inboxes: Inbox[] = [];
  for (let i = 0; i < workers; i++) inboxes.push(await openInbox(target));
  let done = 0;
  const pool = inboxes.map((inbox) => new Worker({ inbox, concurrency: 10, handler: async () => undefined, onOutcome: () => void done++ }));
  const started = performance.now();
  const before = cpu();
  for (const w of pool) w.start();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const after = cpu();
  await Promise.all(pool.map((w) => w.stop()));
  for (const inbox of inboxes) await inbox.close();
  return { workers, rowsPerSec: Math.round(done / ((performance.now() - started) / 1000)), machineBusy: busyShare(before, after) };
}

const dir = mkdtempSync(join(tmpdir(), 'hookdrill-bench-drain-'));
const rows: { claimBatch: number; rowsPerSec: number }[] = [];
try {
  for (const batch of BATCHES) {
    const inbox = await ThreadedSqliteInbox.open(join(dir, `${batch}.db`), { groupCommit: { maxBatch: 1_000, maxWaitMs: 0 } });
    const body = Buffer.from(JSON.stringify({ type: 'invoice.paid', data: { amount: 4200 } }));
    const at = Date.now() - 60_000;
    await fill((i) =>
      inbox.put({ source: 'standard', deliveryId: `msg_${i}`, eventType: 'invoice.paid', body, headers: {}, receivedAt: at }),
    );
    let done = 0;
    const worker = new Worker({ inbox, concurrency: batch, handler: async () => undefined, onOutcome: () => void done++ });
    const started = performance.now();
    worker.start();
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    await worker.stop();
    const seconds = (performance.now() - started) / 1000;
    rows.push({ claimBatch: batch, rowsPerSec: Math.round(done / seconds) });
    await inbox.close();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * Postgres: 1, 2 and 4 workers (each its own connections, claim batch 10) draining one backlog —
 * what scaling out workers buys. Skipped with a line when Postgres cannot be reached.
 */
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const pgRows: { workers: number; rowsPerSec: number; machineBusy: number }[] = [];

const admin = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 3_000 });
let pgSkipped: string | undefined;
try {
  await admin.connect();
} catch (err) {
  pgSkipped = (err as Error).message;
}
if (!pgSkipped) {
  try {
    for (const workers of [1, 2, 4]) {
      const schema = `hd_bench_drain_${process.pid}_${workers}`;
      const url = new URL(DATABASE_URL);
      url.searchParams.set('schema', schema);
      pgRows.push(await drainShared(url.toString(), workers));
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    }
  } finally {
    await admin.end();
  }
}

/**
 * BullMQ (Redis): 1 and 2 workers (claim batch 10 each) on one queue, beside the Postgres rows.
 * The backlog is smaller (every job is its own Redis hash); the queue is removed afterwards.
 */
const redisRows: { workers: number; rowsPerSec: number; machineBusy: number }[] = [];
let redisSkipped: string | undefined;
for (const workers of [1, 2]) {
  const queue = `hd-bench-drain-${process.pid}-${workers}`;
  try {
    redisRows.push(await drainShared(`${REDIS_URL}/${queue}`, workers));
  } catch (err) {
    redisSkipped = (err as Error).message;
    break;
  } finally {
    // Redis not there: nothing to remove (a Queue would wait for it for ever).
    if (redisSkipped === undefined) await removeQueue(queue);
  }
}

const one = rows[0]?.rowsPerSec ?? Number.NaN;
console.log(`worker drain, no-op handler, ${SECONDS} s per claim batch (its concurrency), same run:`);
console.log(`${'claim batch'.padEnd(12)} ${'rows/s'.padStart(8)} ${'× batch 1'.padStart(10)}`);
for (const r of rows)
  console.log(`${String(r.claimBatch).padEnd(12)} ${String(r.rowsPerSec).padStart(8)} ${(r.rowsPerSec / one).toFixed(2).padStart(10)}`);
if (pgSkipped) console.log(`Postgres drain skipped: ${pgSkipped}`);
else {
  const single = pgRows[0]?.rowsPerSec ?? Number.NaN;
  console.log('Postgres, workers on one inbox (claim batch 10 each):');
  console.log(`${'workers'.padEnd(12)} ${'rows/s'.padStart(8)} ${'× 1 worker'.padStart(10)} ${'CPU busy'.padStart(9)}`);
  for (const r of pgRows)
    console.log(
      `${String(r.workers).padEnd(12)} ${String(r.rowsPerSec).padStart(8)} ${(r.rowsPerSec / single).toFixed(2).padStart(10)} ${`${Math.round(r.machineBusy * 100)}%`.padStart(9)}`,
    );
}
if (redisSkipped) console.log(`BullMQ drain skipped: ${redisSkipped}`);
else {
  console.log('BullMQ (Redis), workers on one queue (claim batch 10 each):');
  for (const r of redisRows)
    console.log(
      `${String(r.workers).padEnd(12)} ${String(r.rowsPerSec).padStart(8)} ${(r.rowsPerSec / (redisRows[0]?.rowsPerSec ?? Number.NaN)).toFixed(2).padStart(10)} ${`${Math.round(r.machineBusy * 100)}%`.padStart(9)}`,
    );
}
writeFileSync(
  'bench-drain.json',
  `${JSON.stringify({ bench: 'drain', seconds: SECONDS, rows, postgres: pgRows, bullmq: redisRows }, null, 2)}\n`,
);
