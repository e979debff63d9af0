/**
 * `npm run bench` (third part): acknowledgements per second of receivers, side by side in one run,
 * under the same load from a separate process (`hookdrill send` of distinct, freshly signed
 * Standard Webhooks deliveries at concurrency 1, 16 and 64). Each row's ratio is to the textbook
 * WAL design (one INSERT committed per request). Prints a table and writes bench-receiver.json.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/hookdrill', import.meta.url));
const TEXTBOOK = fileURLToPath(new URL('./receivers/textbook.js', import.meta.url));
const SECRET = `whsec_${Buffer.from('hookdrill receiver benchmark key!').toString('base64')}`;
const COUNT = Number(process.env.BENCH_RECEIVER_COUNT ?? 3_000);
const LEVELS = [1, 16, 64];

interface Row {
  receiver: string;
  concurrency: number;
  acksPerSec: number;
  p50: number;
  p99: number;
}

function start(args: string[], cwdFile: boolean): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      const m = cwdFile ? /"url":"http:\/\/127\.0\.0\.1:(\d+)\//.exec(out) : /^(\d+)\n/.exec(out);
      if (m) resolve({ child, port: Number(m[1]) });
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}`)));
  });
}

async function load(port: number, concurrency: number): Promise<Omit<Row, 'receiver'>> {
  const count = concurrency === 1 ? Math.min(COUNT, 500) : COUNT;
  const out = await new Promise<string>((resolve) => {
    let o = '';
    const c = spawn(process.execPath, [
      BIN,
      'send',
      '--provider',
      'standard',
      '--secret',
      SECRET,
      '--url',
      `http://127.0.0.1:${port}/`,
      '--count',
      String(count),
      '--concurrency',
      String(concurrency),
      '--no-retry',
      '--json',
    ]);
    c.stdout.on('data', (d: Buffer) => (o += d.toString()));
    c.on('close', () => resolve(o));
  });
  const r = JSON.parse(out) as { summary: { delivered: number; deliveriesPerSec: number; latencyMs: { p50?: number; p99?: number } } };
  if (r.summary.delivered !== count) throw new Error(`only ${r.summary.delivered} of ${count} acknowledged`);
  return {
    concurrency,
    acksPerSec: Math.round(r.summary.deliveriesPerSec),
    p50: r.summary.latencyMs.p50 ?? 0,
    p99: r.summary.latencyMs.p99 ?? 0,
  };
}

const dir = mkdtempSync(join(tmpdir(), 'hookdrill-bench-receiver-'));
const receivers: [string, (db: string) => string[], boolean][] = [
  ['verify only (the ceiling)', () => [TEXTBOOK, 'verify-only', '0', SECRET], false],
  ['textbook: rollback journal, EXTRA', (db) => [TEXTBOOK, 'sqlite-rollback', '0', SECRET, db], false],
  ['textbook: WAL + FULL, one commit each', (db) => [TEXTBOOK, 'sqlite-wal', '0', SECRET, db], false],
  [
    'listen, one commit each (--commit-batch 1)',
    (db) => [
      BIN,
      'listen',
      '--json',
      '--port',
      '0',
      '--provider',
      'standard',
      '--secret',
      SECRET,
      '--inbox',
      db,
      '--no-worker',
      '--commit-batch',
      '1',
    ],
    true,
  ],
  [
    'listen, group commit',
    (db) => [BIN, 'listen', '--json', '--port', '0', '--provider', 'standard', '--secret', SECRET, '--inbox', db, '--no-worker'],
    true,
  ],
  [
    'listen, group commit, worker running',
    (db) => [BIN, 'listen', '--json', '--port', '0', '--provider', 'standard', '--secret', SECRET, '--inbox', db],
    true,
  ],
];
const rows: Row[] = [];
try {
  for (const [name, args, json] of receivers) {
    for (const c of LEVELS) {
      const db = join(dir, `${rows.length}.db`);
      // JSON lines for listen, but only the ready line matters here; the request lines go nowhere.
      const { child, port } = await start(args(db), json);
      try {
        rows.push({ receiver: name, ...(await load(port, c)) });
      } finally {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const base = (c: number) => rows.find((r) => r.receiver.startsWith('textbook: WAL') && r.concurrency === c)?.acksPerSec ?? 1;
console.log(`receivers, ${COUNT} distinct signed deliveries per level (500 at concurrency 1), load from another process:`);
console.log(
  `${'receiver'.padEnd(44)} ${'c'.padStart(3)} ${'acks/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'× WAL'.padStart(6)}`,
);
for (const r of rows) {
  console.log(
    `${r.receiver.padEnd(44)} ${String(r.concurrency).padStart(3)} ${String(r.acksPerSec).padStart(8)} ${r.p50.toFixed(1).padStart(7)} ${r.p99.toFixed(1).padStart(7)} ${(r.acksPerSec / base(r.concurrency)).toFixed(2).padStart(6)}`,
  );
}
writeFileSync('bench-receiver.json', `${JSON.stringify({ bench: 'receiver', count: COUNT, rows }, null, 2)}\n`);
