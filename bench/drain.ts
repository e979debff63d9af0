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
import { ThreadedSqliteInbox } from '../src/inbox/sqlite/threaded.js';
import { Worker } from '../src/worker/index.js';

const SECONDS = Number(process.env.BENCH_DRAIN_SECONDS ?? 3);
const BACKLOG = Number(process.env.BENCH_DRAIN_ROWS ?? 60_000);
const BATCHES = [1, 10, 100];

const dir = mkdtempSync(join(tmpdir(), 'hookdrill-bench-drain-'));
const rows: { claimBatch: number; rowsPerSec: number }[] = [];
try {
  for (const batch of BATCHES) {
    const inbox = await ThreadedSqliteInbox.open(join(dir, `${batch}.db`), { groupCommit: { maxBatch: 1_000, maxWaitMs: 0 } });
    const body = Buffer.from(JSON.stringify({ type: 'invoice.paid', data: { amount: 4200 } }));
    const at = Date.now() - 60_000;
    await Promise.all(
      Array.from({ length: BACKLOG }, (_, i) =>
        inbox.put({ source: 'standard', deliveryId: `msg_${i}`, eventType: 'invoice.paid', body, headers: {}, receivedAt: at }),
      ),
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

const one = rows[0]?.rowsPerSec ?? Number.NaN;
console.log(`worker drain, no-op handler, ${SECONDS} s per claim batch (its concurrency), same run:`);
console.log(`${'claim batch'.padEnd(12)} ${'rows/s'.padStart(8)} ${'× batch 1'.padStart(10)}`);
for (const r of rows)
  console.log(`${String(r.claimBatch).padEnd(12)} ${String(r.rowsPerSec).padStart(8)} ${(r.rowsPerSec / one).toFixed(2).padStart(10)}`);
writeFileSync('bench-drain.json', `${JSON.stringify({ bench: 'drain', seconds: SECONDS, rows }, null, 2)}\n`);
