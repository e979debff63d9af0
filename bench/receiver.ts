/**
 * `npm run bench` (third part): acknowledgements per second of receivers, side by side in one run,
 * under the same load from a separate process (bench/load.ts: autocannon, each request a distinct,
 * freshly signed Standard Webhooks delivery) at concurrency 1, 16 and 64, each for a fixed time.
 * Each row's ratio is to the textbook WAL design (one INSERT committed per request) at the same
 * concurrency. Prints a table and writes bench-receiver.json.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { busyShare, cpu } from './cpu.js';
import { REDIS_URL, removeQueue } from './redis.js';

const BIN = fileURLToPath(new URL('../../bin/hookdrill', import.meta.url));
const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const TEXTBOOK = here('./receivers/textbook.js');
const MAIN_THREAD = here('./receivers/main-thread.js');
const WRITER_THREAD = here('./receivers/writer-thread.js');
const LOAD = here('./load.js');
const SECRET = `whsec_${Buffer.from('hookdrill receiver benchmark key!').toString('base64')}`;
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SECONDS = Number(process.env.BENCH_RECEIVER_SECONDS ?? 5);
const LEVELS = (process.env.BENCH_RECEIVER_LEVELS ?? '1,16,64').split(',').map(Number);

export interface Row {
  receiver: string;
  concurrency: number;
  acksPerSec: number;
  other: number;
  p50: number;
  p99: number;
  /** Share of the machine's CPU (both cores) busy during the load: near 100% means the machine, not a stage, is the limit. */
  machineBusy: number;
}

/** Start a receiver and wait for its port: listen prints a ready line, the others a bare port. */
function start(args: string[]): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (c: Buffer) => {
      out += c.toString();
      const m = /"url":"http:\/\/127\.0\.0\.1:(\d+)\/|^(\d+)\n/.exec(out);
      if (!m) return;
      // From here on its output is read and dropped, so a receiver that logs is never held up by the pipe.
      child.stdout?.off('data', onData);
      child.stdout?.resume();
      resolve({ child, port: Number(m[1] ?? m[2]) });
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited ${code}`)));
  });
}

function load(port: number, concurrency: number): Promise<Omit<Row, 'receiver' | 'concurrency' | 'machineBusy'>> {
  return new Promise((resolve, reject) => {
    let out = '';
    const c = spawn(process.execPath, [LOAD, String(port), SECRET, String(concurrency), String(SECONDS)], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.on('close', (code) => {
      if (code !== 0) return reject(new Error(`the load process exited ${code}`));
      const r = JSON.parse(out) as { acksPerSec: number; other: number; p50: number; p99: number };
      resolve({ acksPerSec: Math.round(r.acksPerSec), other: r.other, p50: r.p50, p99: r.p99 });
    });
  });
}

const listen = (db: string, ...more: string[]) => [
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
  ...more,
];
/** A Postgres URL naming a schema of its own for one row; the schemas are dropped at the end. */
const schemas: string[] = [];
const pgTarget = () => {
  const schema = `hd_bench_${process.pid}_${schemas.length}`;
  schemas.push(schema);
  const url = new URL(DATABASE_URL);
  url.searchParams.set('schema', schema);
  return url.toString();
};
/** A BullMQ queue of its own for one row; the queues are removed at the end. */
const queues: string[] = [];
const redisTarget = () => {
  const queue = `hd-bench-${process.pid}-${queues.length}`;
  queues.push(queue);
  return `${REDIS_URL}/${queue}`;
};
const receivers: [string, (db: string) => string[]][] = [
  ['verify only (the ceiling)', () => [TEXTBOOK, 'verify-only', '0', SECRET]],
  ['textbook: rollback journal, EXTRA', (db) => [TEXTBOOK, 'sqlite-rollback', '0', SECRET, db]],
  ['textbook: WAL + FULL, one commit each', (db) => [TEXTBOOK, 'sqlite-wal', '0', SECRET, db]],
  ['listen --commit-batch 1 (one commit each)', (db) => listen(db, '--no-worker', '--log', 'summary', '--commit-batch', '1')],
  ['group commit on the main thread, SQLite syncs', (db) => [MAIN_THREAD, '0', SECRET, db]],
  ['group commit, every write on a thread', (db) => [WRITER_THREAD, '0', SECRET, db]],
  ['listen, group commit', (db) => listen(db, '--no-worker', '--log', 'summary')],
  ['listen, group commit, a log line each', (db) => listen(db, '--no-worker', '--log', 'requests')],
  ['listen, group commit, worker running', (db) => listen(db, '--log', 'summary')],
  ['textbook: Postgres, one INSERT each (pool 16)', () => [TEXTBOOK, 'postgres', '0', SECRET, pgTarget()]],
  ['listen on Postgres, group commit', () => listen(pgTarget(), '--no-worker', '--log', 'summary')],
  ['listen on Postgres, worker running', () => listen(pgTarget(), '--log', 'summary')],
  ['listen on BullMQ (Redis)', () => listen(redisTarget(), '--no-worker', '--log', 'summary')],
  ['listen on BullMQ (Redis), worker running', () => listen(redisTarget(), '--log', 'summary')],
];

const only = process.env.BENCH_RECEIVERS ? new RegExp(process.env.BENCH_RECEIVERS) : undefined;
const dir = mkdtempSync(join(tmpdir(), 'hookdrill-bench-receiver-'));
const rows: Row[] = [];
const CEILING = receivers[0] as (typeof receivers)[number];
// The ceiling is measured first and again last, and the higher of the two is the one every ratio
// is to: on a shared machine one slow minute must not make every other row look closer to it.
const ceilingAgain: Row[] = [];
async function measure(name: string, args: (db: string) => string[], c: number, into: Row[]): Promise<void> {
  const { child, port } = await start(args(join(dir, `${rows.length + ceilingAgain.length}.db`)));
  try {
    const before = cpu();
    const measured = await load(port, c);
    into.push({ receiver: name, concurrency: c, ...measured, machineBusy: busyShare(before, cpu()) });
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}
try {
  for (const [name, args] of receivers) {
    if (only && !only.test(name) && !/^(textbook: WAL|verify only)/.test(name)) continue;
    for (const c of LEVELS) await measure(name, args, c, rows);
  }
  for (const c of LEVELS) await measure(CEILING[0], CEILING[1], c, ceilingAgain);
} finally {
  rmSync(dir, { recursive: true, force: true });
  if (schemas.length > 0) {
    const client = new pg.Client(DATABASE_URL);
    await client.connect();
    for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  }
  for (const name of queues) await removeQueue(name);
}

for (const again of ceilingAgain) {
  const first = rows.find((r) => r.receiver === again.receiver && r.concurrency === again.concurrency);
  if (!first) continue;
  console.log(`the ceiling at c=${again.concurrency}: ${first.acksPerSec} acks/s first, ${again.acksPerSec} last; the higher is used`);
  if (again.acksPerSec > first.acksPerSec) rows.splice(rows.indexOf(first), 1, again);
}
const at = (prefix: string, c: number) => rows.find((r) => r.receiver.startsWith(prefix) && r.concurrency === c)?.acksPerSec;
console.log(`CPU: how busy the whole machine (both cores: load, receiver, database) was during the row.`);
console.log(`receivers under ${SECONDS} s of distinct signed deliveries per level, load from another process (autocannon):`);
console.log(
  `${'receiver'.padEnd(42)} ${'c'.padStart(3)} ${'acks/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ${'× WAL'.padStart(6)} ${'× ceiling'.padStart(9)} ${'CPU'.padStart(5)}`,
);
for (const r of rows) {
  const wal = at('textbook: WAL', r.concurrency) ?? Number.NaN;
  const ceiling = at('verify only', r.concurrency) ?? Number.NaN;
  const other = r.other > 0 ? `  (${r.other} not 2xx)` : '';
  console.log(
    `${r.receiver.padEnd(42)} ${String(r.concurrency).padStart(3)} ${String(r.acksPerSec).padStart(8)} ${r.p50.toFixed(1).padStart(7)} ${r.p99.toFixed(1).padStart(7)} ${(r.acksPerSec / wal).toFixed(2).padStart(6)} ${(r.acksPerSec / ceiling).toFixed(2).padStart(9)} ${`${Math.round(r.machineBusy * 100)}%`.padStart(5)}${other}`,
  );
}
const pgBase = at('textbook: Postgres', 64);
const pgListen = at('listen on Postgres, group commit', 64);
if (pgBase && pgListen) console.log(`listen on Postgres ÷ the textbook Postgres receiver at c=64: ${(pgListen / pgBase).toFixed(2)}×`);
// What issue 28 set: acknowledgements within reach of the ceiling, with and without the worker.
const ceiling64 = at('verify only', 64);
const targets: [string, string, number][] = [
  ['SQLite, worker off', 'listen, group commit', 0.6],
  ['SQLite, worker on', 'listen, group commit, worker running', 0.5],
  ['Postgres, worker off', 'listen on Postgres, group commit', 0.5],
  ['Postgres, worker on', 'listen on Postgres, worker running', 0.4],
  ['BullMQ, worker off', 'listen on BullMQ (Redis)', 0.5],
  ['BullMQ, worker on', 'listen on BullMQ (Redis), worker running', 0.4],
];
if (ceiling64) {
  console.log('at c=64, × the ceiling against the targets:');
  for (const [what, prefix, target] of targets) {
    const r = rows.find((x) => x.receiver === prefix && x.concurrency === 64);
    if (!r) continue;
    const ratio = r.acksPerSec / ceiling64;
    console.log(
      `  ${what.padEnd(22)} ${ratio.toFixed(2)} (target ${target.toFixed(1)}: ${ratio >= target ? 'met' : 'missed'})  p99 ${r.p99} ms`,
    );
  }
}
const one = (prefix: string) => rows.find((x) => x.receiver.startsWith(prefix) && x.concurrency === 1);
const [wal1, listen1] = [one('textbook: WAL'), one('listen, group commit')];
if (wal1 && listen1)
  console.log(
    `at c=1: listen ${listen1.acksPerSec} acks/s, p99 ${listen1.p99} ms; the textbook WAL receiver ${wal1.acksPerSec}, p99 ${wal1.p99} ms`,
  );
writeFileSync('bench-receiver.json', `${JSON.stringify({ bench: 'receiver', seconds: SECONDS, rows, ceilingAgain }, null, 2)}\n`);
