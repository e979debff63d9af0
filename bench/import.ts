/**
 * `npm run bench` (import): how long `hookdrill import` takes to put a HAR file's captures into a
 * SQLite inbox, against the baseline measured in the same run — the same captures put one row per
 * transaction (what import did before batching). BENCH_IMPORT_ENTRIES (default 50,000) sets the
 * size. The ratio is baseline time / import time (above 1: import is faster). Writes bench-import.json.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { run } from '../src/fixtures/import/run.js';
import { openCaptures } from '../src/fixtures/import/files.js';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { providers } from '../src/providers/index.js';

const n = Number(process.env.BENCH_IMPORT_ENTRIES ?? 50_000);
const dir = mkdtempSync(join(tmpdir(), 'hookdrill-bench-import-'));
try {
  const file = join(dir, 'captures.har');
  const entries = Array.from({ length: n }, (_, i) => ({
    request: {
      method: 'POST',
      url: 'http://127.0.0.1/hooks',
      headers: [{ name: 'Content-Type', value: 'application/json' }],
      postData: {
        mimeType: 'application/json',
        text: JSON.stringify({ id: `evt_${i}`, object: 'event', type: 'invoice.paid', data: { object: { id: `in_${i}` } } }),
      },
    },
  }));
  writeFileSync(file, JSON.stringify({ log: { version: '1.2', entries } }));

  // Baseline: the same captures, one put (one transaction, one sync) each.
  const baseDb = join(dir, 'baseline.db');
  const t0 = performance.now();
  const inbox = openSqliteInbox(baseDb);
  const stripe = providers.stripe;
  for (const c of openCaptures(file).captures()) {
    await inbox.put({
      source: 'stripe',
      deliveryId: stripe.deliveryId(c.headers, c.body) as string,
      eventType: stripe.eventTypeOf(c.headers, c.body),
      body: c.body,
      headers: c.headers,
      receivedAt: Date.now(),
    });
  }
  await inbox.close();
  const baselineMs = performance.now() - t0;

  const t1 = performance.now();
  const result = await run({ files: [file], inbox: join(dir, 'import.db'), provider: 'stripe' });
  const importMs = performance.now() - t1;
  if (result.stored !== n) throw new Error(`import stored ${result.stored} of ${n}`);

  const report = {
    entries: n,
    baselineMs: Math.round(baselineMs),
    importMs: Math.round(importMs),
    ratio: Number((baselineMs / importMs).toFixed(1)),
    rowsPerSecond: Math.round(n / (importMs / 1000)),
  };
  writeFileSync('bench-import.json', `${JSON.stringify(report, null, 2)}\n`);
  console.log(
    `import: ${n.toLocaleString('en-US')} HAR captures into SQLite in ${report.importMs} ms (${report.rowsPerSecond.toLocaleString('en-US')} rows/s); a transaction per row (baseline): ${report.baselineMs} ms — ${report.ratio}× faster`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
