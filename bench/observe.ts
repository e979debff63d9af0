/**
 * `npm run bench` (a part of its own): what watching a receiver costs it, side by side in one run.
 * A 1,000,000-row inbox (SQLite, then Postgres; 90% done, 5% dead over 20 errors, 5% pending, a
 * month of received_at) is given to `listen --ui`, and the same load of valid Standard Webhooks
 * deliveries (bench/load.ts, c=16) is measured alone, beside a /metrics flood (4 connections
 * scraping back to back), beside an open inspector (the page's live refresh) and one with a filter being typed
 * (bench/observe-load.ts). For each: acks/s and its ratio to the load alone, p99, and what the
 * observers got. With BENCH_OBSERVE_BASELINE=BIN (another checkout's bin/hookdrill, e.g. the code
 * before) the same rows are measured for it too, on the same inbox. Prints a table and writes
 * bench-observe.json. BENCH_OBSERVE_ROWS and BENCH_OBSERVE_SECONDS change the size and length.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import pg from 'pg';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { openPostgresInbox } from '../src/inbox/postgres/index.js';

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/hookdrill', import.meta.url));
const LOAD = here('./load.js');
const OBSERVERS = here('./observe-load.js');
const SECRET = `whsec_${Buffer.from('hookdrill receiver benchmark key!').toString('base64')}`;
const SECONDS = Number(process.env.BENCH_OBSERVE_SECONDS ?? 10);
const ROWS = Number(process.env.BENCH_OBSERVE_ROWS ?? 1_000_000);
const DATABASE_URL = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const SCHEMA = 'hookdrill_bench_observe';

/**
 * 'ui elsewhere, typing' is the control: the same inspector load on `hookdrill ui`, another process on the
 * same inbox. What it costs the acks is what the queries' CPU costs on this machine's cores, with
 * nothing of listen's own design in it; listen --ui can do no better than that.
 */
type Observer = 'none' | 'metrics flood' | 'inspector open' | 'inspector typing' | 'ui elsewhere, typing';
interface Row {
  store: string;
  listen: string;
  observer: Observer;
  acksPerSec: number;
  other: number;
  p99: number;
  /** CPU seconds listen spent (all its threads) per 1,000 acks. */
  cpuPer1kAcks: number;
  observed?: { answers: Record<string, number>; p50: number; max: number };
}

/** The rows as SQL over a counter x (1..ROWS): mostly done, some dead over 20 errors, some pending far ahead. */
const DAY = 86_400_000;
function rowSql(x: string, now: number, concat: (...parts: string[]) => string, blob: (text: string) => string): string {
  const status = `CASE WHEN ${x} % 20 = 0 THEN 'dead' WHEN ${x} % 20 = 1 THEN 'pending' ELSE 'done' END`;
  return `'standard', ${concat("'msg_bench_'", x)}, CASE WHEN ${x} % 3 = 0 THEN 'invoice.paid' ELSE 'customer.updated' END,
    ${blob(concat(`'{"type":"invoice.paid","data":{"id":"in_'`, x, `'","amount":4200,"currency":"eur"}}'`))},
    '{"content-type":"application/json"}', ${now - 30 * DAY} + (${x} * ${Math.floor((30 * DAY) / ROWS)}),
    ${status}, 1, ${now + DAY},
    CASE WHEN ${x} % 20 = 0 THEN ${concat("'HTTP 500 from the handler: case '", `(${x} % 400) / 20`)} END,
    CASE WHEN ${x} % 20 > 1 THEN ${now - DAY} END`;
}
const COLUMNS = 'source, delivery_id, event_type, body, headers, received_at, status, attempts, next_attempt_at, last_error, finished_at';

function fillSqlite(path: string): void {
  openSqliteInbox(path).close();
  const db = new Database(path);
  const now = Date.now();
  const cat = (...parts: string[]) => parts.join(' || ');
  db.exec(`WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < ${ROWS})
    INSERT INTO deliveries (${COLUMNS}) SELECT ${rowSql('x', now, cat, (t) => `CAST(${t} AS BLOB)`)} FROM c`);
  db.exec('ANALYZE');
  db.close();
}

async function fillPostgres(): Promise<string> {
  const admin = new pg.Client({ connectionString: DATABASE_URL });
  await admin.connect();
  await admin.query(`DROP SCHEMA IF EXISTS ${SCHEMA} CASCADE`);
  const target = `${DATABASE_URL}?schema=${SCHEMA}`;
  await (await openPostgresInbox(target)).close();
  const now = Date.now();
  const cat = (...parts: string[]) => parts.map((p) => (/^'/.test(p) ? p : `(${p})::text`)).join(' || ');
  await admin.query(
    `INSERT INTO ${SCHEMA}.deliveries (${COLUMNS}) SELECT ${rowSql('(x::bigint)', now, cat, (t) => `convert_to(${t}, 'UTF8')`)} FROM generate_series(1, ${ROWS}) AS x`,
  );
  await admin.query(`VACUUM ANALYZE ${SCHEMA}.deliveries`);
  await admin.end();
  return target;
}

function startListen(bin: string, inbox: string): Promise<{ child: ChildProcess; port: number; page: string }> {
  const args = [bin, 'listen', '--json', '--port', '0', '--ui', '0', '--provider', 'standard', '--secret', SECRET, '--inbox', inbox];
  const child = spawn(process.execPath, [...args, '--no-worker', '--log', 'summary'], { stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const check = () => {
      const port = /"url":"http:\/\/127\.0\.0\.1:(\d+)\//.exec(out)?.[1];
      const page = /the inbox in a browser: (http:\/\/\S+)/.exec(err)?.[1];
      if (!port || !page) return;
      child.stdout?.removeAllListeners('data');
      child.stderr?.removeAllListeners('data');
      child.stdout?.resume();
      child.stderr?.resume();
      resolve({ child, port: Number(port), page });
    };
    child.stdout?.on('data', (c: Buffer) => {
      out += c.toString();
      check();
    });
    child.stderr?.on('data', (c: Buffer) => {
      err += c.toString();
      check();
    });
    child.once('exit', (code) => reject(new Error(`listen exited ${code}: ${err}`)));
  });
}

function startUi(bin: string, inbox: string): Promise<{ child: ChildProcess; page: string }> {
  const child = spawn(process.execPath, [bin, 'ui', '--inbox', inbox, '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (c: Buffer) => {
      out += c.toString();
      const page = /open (http:\/\/\S+)/.exec(out)?.[1];
      if (!page) return;
      child.stdout?.off('data', onData);
      child.stdout?.resume();
      resolve({ child, page });
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`ui exited ${code}`)));
  });
}

/** CPU seconds a process has used so far, all its threads (utime + stime from /proc). */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function run(script: string, args: string[]): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let out = '';
    const c = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.on('close', (code) =>
      code === 0 ? resolve(JSON.parse(out) as Record<string, unknown>) : reject(new Error(`${script} exited ${code}`)),
    );
  });
}

const dir = mkdtempSync(join(tmpdir(), 'hookdrill-bench-observe-'));
const rows: Row[] = [];
const bins: [string, string][] = [['this checkout', BIN]];
if (process.env.BENCH_OBSERVE_BASELINE) bins.unshift(['baseline', process.env.BENCH_OBSERVE_BASELINE]);
try {
  const stores: [string, () => Promise<string>][] = [
    [
      'SQLite',
      async () => {
        const path = join(dir, 'inbox.db');
        fillSqlite(path);
        return path;
      },
    ],
    ['Postgres', fillPostgres],
  ];
  for (const [store, fill] of stores) {
    const t0 = Date.now();
    const inbox = await fill();
    process.stderr.write(`${store}: ${ROWS.toLocaleString('en-US')} rows in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
    for (const [name, bin] of bins) {
      for (const observer of ['none', 'metrics flood', 'inspector open', 'inspector typing', 'ui elsewhere, typing'] as const) {
        const { child, port, page: own } = await startListen(bin, inbox);
        const elsewhere = observer === 'ui elsewhere, typing' ? await startUi(bin, inbox) : undefined;
        const page = elsewhere?.page ?? own;
        try {
          const watching =
            observer === 'none'
              ? undefined
              : observer === 'metrics flood'
                ? run(OBSERVERS, ['scrape', String(port), '4', String(SECONDS)])
                : run(OBSERVERS, [observer === 'inspector open' ? 'inspector-open' : 'inspector-typing', page, String(SECONDS)]);
          // (for 'ui elsewhere, typing' the CPU below is listen's alone: the queries' is in the other process)
          const cpu0 = cpuSeconds(child.pid as number);
          const [load, observed] = await Promise.all([run(LOAD, [String(port), SECRET, '16', String(SECONDS)]), watching]);
          const cpu = cpuSeconds(child.pid as number) - cpu0;
          rows.push({
            store,
            listen: name,
            observer,
            acksPerSec: Math.round(Number(load.acksPerSec)),
            other: Number(load.other),
            p99: Number(load.p99),
            cpuPer1kAcks: cpu / ((Number(load.acksPerSec) * SECONDS) / 1000),
            ...(observed ? { observed: observed as unknown as NonNullable<Row['observed']> } : {}),
          });
        } finally {
          for (const c of [child, elsewhere?.child]) {
            if (!c) continue;
            c.kill('SIGTERM');
            await new Promise((r) => c.once('exit', r));
          }
        }
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

console.log(`listen --ui on a ${ROWS.toLocaleString('en-US')}-row inbox, ${SECONDS} s of valid deliveries at c=16 beside each observer:`);
console.log(
  `${'store'.padEnd(9)} ${'listen'.padEnd(14)} ${'observer'.padEnd(21)} ${'acks/s'.padStart(7)} ${'× alone'.padStart(8)} ${'p99 ms'.padStart(7)} ${'not 2xx'.padStart(8)} ${'CPU s/1k'.padStart(9)}  observers got`,
);
for (const r of rows) {
  const alone = rows.find((x) => x.store === r.store && x.listen === r.listen && x.observer === 'none')?.acksPerSec ?? Number.NaN;
  const got = r.observed
    ? `${Object.entries(r.observed.answers)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ')} (p50 ${r.observed.p50} ms, max ${r.observed.max} ms)`
    : '';
  console.log(
    `${r.store.padEnd(9)} ${r.listen.padEnd(14)} ${r.observer.padEnd(21)} ${String(r.acksPerSec).padStart(7)} ${(r.acksPerSec / alone).toFixed(2).padStart(8)} ${r.p99.toFixed(0).padStart(7)} ${String(r.other).padStart(8)} ${r.cpuPer1kAcks.toFixed(3).padStart(9)}  ${got}`,
  );
}
writeFileSync('bench-observe.json', `${JSON.stringify(rows, null, 2)}\n`);
