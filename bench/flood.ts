/**
 * `npm run bench` (a part of its own): `listen` under a flood, side by side in one run. The same
 * load of valid Standard Webhooks deliveries (bench/load.ts, c=16) alone, then beside 100
 * connections sending 30 MiB bodies over and over (bench/flood-load.ts) unsigned, then forged
 * (well-formed, fresh, wrong). For each: acks/s of the valid load and its ratio to the load alone,
 * its p99, and listen's peak RSS (sampled from /proc every 50 ms). With BENCH_FLOOD_BASELINE=BIN
 * (another checkout's bin/hookdrill, e.g. the code before) the same rows are measured for it too.
 * Prints a table and writes bench-flood.json.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = (file: string) => fileURLToPath(new URL(file, import.meta.url));
const BIN = fileURLToPath(new URL('../../bin/hookdrill', import.meta.url));
const LOAD = here('./load.js');
const FLOOD = here('./flood-load.js');
const SECRET = `whsec_${Buffer.from('hookdrill receiver benchmark key!').toString('base64')}`;
const SECONDS = Number(process.env.BENCH_FLOOD_SECONDS ?? 8);
const CONNECTIONS = Number(process.env.BENCH_FLOOD_CONNECTIONS ?? 100);
const MIB = Number(process.env.BENCH_FLOOD_MIB ?? 30);

interface Row {
  listen: string;
  flood: 'none' | 'unsigned' | 'forged';
  acksPerSec: number;
  other: number;
  p99: number;
  peakRssMiB: number;
  floodAnswers?: Record<string, number>;
}

function startListen(bin: string, db: string): Promise<{ child: ChildProcess; port: number }> {
  const args = [bin, 'listen', '--json', '--port', '0', '--provider', 'standard', '--secret', SECRET, '--inbox', db];
  const child = spawn(process.execPath, [...args, '--no-worker', '--log', 'summary'], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    const onData = (c: Buffer) => {
      out += c.toString();
      const m = /"url":"http:\/\/127\.0\.0\.1:(\d+)\//.exec(out);
      if (!m) return;
      child.stdout?.off('data', onData);
      child.stdout?.resume();
      resolve({ child, port: Number(m[1]) });
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) => reject(new Error(`listen exited ${code}`)));
  });
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

/** The highest resident set of pid while `during` runs. */
async function peakRss<T>(pid: number, during: Promise<T>): Promise<{ value: T; peakMiB: number }> {
  let peak = 0;
  const sample = () => {
    try {
      const kb = Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
      peak = Math.max(peak, kb);
    } catch {
      // the process is gone: its last sample stands
    }
  };
  const timer = setInterval(sample, 50);
  try {
    const value = await during;
    sample();
    return { value, peakMiB: Math.round(peak / 1024) };
  } finally {
    clearInterval(timer);
  }
}

const dir = mkdtempSync(join(tmpdir(), 'hookdrill-bench-flood-'));
const rows: Row[] = [];
const bins: [string, string][] = [['this checkout', BIN]];
if (process.env.BENCH_FLOOD_BASELINE) bins.unshift(['baseline', process.env.BENCH_FLOOD_BASELINE]);
try {
  for (const [name, bin] of bins) {
    for (const flood of ['none', 'unsigned', 'forged'] as const) {
      const { child, port } = await startListen(bin, join(dir, `${rows.length}.db`));
      try {
        const floodRun =
          flood === 'none' ? undefined : run(FLOOD, [String(port), flood, String(CONNECTIONS), String(MIB), String(SECONDS + 1)]);
        // The flood gets a second's head start, so the valid load meets it at full strength.
        if (floodRun) await new Promise((r) => setTimeout(r, 1_000));
        const { value, peakMiB } = await peakRss(
          child.pid as number,
          Promise.all([run(LOAD, [String(port), SECRET, '16', String(SECONDS)]), floodRun]),
        );
        const [load, floodResult] = value;
        rows.push({
          listen: name,
          flood,
          acksPerSec: Math.round(Number(load.acksPerSec)),
          other: Number(load.other),
          p99: Number(load.p99),
          peakRssMiB: peakMiB,
          ...(floodResult ? { floodAnswers: floodResult.answers as Record<string, number> } : {}),
        });
      } finally {
        child.kill('SIGTERM');
        await new Promise((r) => child.once('exit', r));
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

console.log(`listen under ${CONNECTIONS} connections of ${MIB} MiB bodies, beside ${SECONDS} s of valid deliveries at c=16:`);
console.log(
  `${'listen'.padEnd(14)} ${'flood'.padEnd(9)} ${'acks/s'.padStart(7)} ${'× alone'.padStart(8)} ${'p99 ms'.padStart(7)} ${'not 2xx'.padStart(8)} ${'peak RSS'.padStart(9)}  flood's answers`,
);
for (const r of rows) {
  const alone = rows.find((x) => x.listen === r.listen && x.flood === 'none')?.acksPerSec ?? Number.NaN;
  const answers = r.floodAnswers
    ? Object.entries(r.floodAnswers)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ')
    : '';
  console.log(
    `${r.listen.padEnd(14)} ${r.flood.padEnd(9)} ${String(r.acksPerSec).padStart(7)} ${(r.acksPerSec / alone).toFixed(2).padStart(8)} ${r.p99.toFixed(0).padStart(7)} ${String(r.other).padStart(8)} ${`${r.peakRssMiB} MiB`.padStart(9)}  ${answers}`,
  );
}
writeFileSync('bench-flood.json', `${JSON.stringify(rows, null, 2)}\n`);
