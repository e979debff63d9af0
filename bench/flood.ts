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
  /** CPU used in the run, ms: listen's, the valid load's, the flood's. */
  cpuMs: { listen: number; load: number; flood: number };
  /** Where the flood went: at this listen, at it from a generator at nice 19, or at another listen (the control). */
  at: 'none' | 'this' | 'niced' | 'elsewhere';
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

function run(script: string, args: string[], niced = false): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    let out = '';
    const c = niced
      ? spawn('nice', ['-n', '19', process.execPath, script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] })
      : spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
    c.stdout.on('data', (d: Buffer) => (out += d.toString()));
    c.on('close', (code) =>
      code === 0 ? resolve(JSON.parse(out) as Record<string, unknown>) : reject(new Error(`${script} exited ${code}`)),
    );
  });
}

/** CPU time pid has used so far, ms (utime + stime from /proc, in clock ticks of 10 ms). */
function cpuMsOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return (Number(fields[11]) + Number(fields[12])) * 10;
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
    // The control: the same flood at another listen on the same machine. What it costs the valid
    // load is the machine's (two cores shared with the flood's generator and the kernel's copies of
    // its bodies), not listen's handling of it. At nice 19 the generator takes only what listen
    // and the valid load leave: an attacker on another machine, as near as one machine comes.
    const kinds = [
      ['none', 'none'],
      ['unsigned', 'this'],
      ['forged', 'this'],
      ['unsigned', 'niced'],
      ['forged', 'niced'],
      ['unsigned', 'elsewhere'],
      ['forged', 'elsewhere'],
    ] as const;
    for (const [flood, at] of kinds) {
      if (at !== 'this' && at !== 'none' && name === 'baseline') continue;
      const { child, port } = await startListen(bin, join(dir, `${rows.length}.db`));
      const other = at === 'elsewhere' ? await startListen(bin, join(dir, `${rows.length}-other.db`)) : undefined;
      try {
        const cpu0 = cpuMsOf(child.pid as number);
        const floodRun =
          flood === 'none'
            ? undefined
            : run(FLOOD, [String(other?.port ?? port), flood, String(CONNECTIONS), String(MIB), String(SECONDS + 1)], at === 'niced');
        // The flood gets a second's head start, so the valid load meets it at full strength.
        if (floodRun) await new Promise((r) => setTimeout(r, 1_000));
        const { value, peakMiB } = await peakRss(
          child.pid as number,
          Promise.all([run(LOAD, [String(port), SECRET, '16', String(SECONDS)]), floodRun]),
        );
        const [load, floodResult] = value;
        const listenCpu = cpuMsOf(child.pid as number) - cpu0;
        rows.push({
          at,
          cpuMs: { listen: listenCpu, load: Number(load.cpuMs), flood: Number(floodResult?.cpuMs ?? 0) },
          listen: name,
          flood,
          acksPerSec: Math.round(Number(load.acksPerSec)),
          other: Number(load.other),
          p99: Number(load.p99),
          peakRssMiB: peakMiB,
          ...(floodResult ? { floodAnswers: floodResult.answers as Record<string, number> } : {}),
        });
      } finally {
        for (const c of [child, other?.child]) {
          if (!c) continue;
          c.kill('SIGTERM');
          await new Promise((r) => c.once('exit', r));
        }
      }
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

console.log(`listen under ${CONNECTIONS} connections of ${MIB} MiB bodies, beside ${SECONDS} s of valid deliveries at c=16:`);
console.log(
  `${'listen'.padEnd(14)} ${'flood'.padEnd(20)} ${'acks/s'.padStart(7)} ${'× alone'.padStart(8)} ${'p99 ms'.padStart(7)} ${'not 2xx'.padStart(8)} ${'peak RSS'.padStart(9)} ${'CPU s listen/load/flood'.padStart(24)}  flood's answers`,
);
for (const r of rows) {
  const alone = rows.find((x) => x.listen === r.listen && x.flood === 'none')?.acksPerSec ?? Number.NaN;
  const answers = r.floodAnswers
    ? Object.entries(r.floodAnswers)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ')
    : '';
  console.log(
    `${r.listen.padEnd(14)} ${`${r.flood}${r.at === 'niced' ? ', nice 19' : r.at === 'elsewhere' ? ', elsewhere' : ''}`.padEnd(20)} ${String(r.acksPerSec).padStart(7)} ${(r.acksPerSec / alone).toFixed(2).padStart(8)} ${r.p99.toFixed(0).padStart(7)} ${String(r.other).padStart(8)} ${`${r.peakRssMiB} MiB`.padStart(9)} ${[
      r.cpuMs.listen,
      r.cpuMs.load,
      r.cpuMs.flood,
    ]
      .map((ms) => (ms / 1000).toFixed(1))
      .join(' / ')
      .padStart(24)}  ${answers}`,
  );
}
writeFileSync('bench-flood.json', `${JSON.stringify(rows, null, 2)}\n`);
