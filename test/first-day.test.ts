import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { stripVTControlCharacters } from 'node:util';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { BIN, hookdrill } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { stripeRow } from './helpers/rows.js';
import { tempDir } from './helpers/tmp.js';
import { until } from './helpers/until.js';
import { SECRET, checkReceiver, explain, python } from './helpers/verdicts.js';

/** A new user's first day with check and inspect (issue 53, 13): what they read must be right and readable. */

const run = promisify(execFile);

/** hookdrill at a real terminal `cols` wide (util-linux's script gives it a pseudo-terminal). */
async function atTerminal(args: string[], cols: number): Promise<string> {
  const line = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
  const { stdout } = await run('script', ['-qec', `stty cols ${cols} rows 40; ${line}`, '/dev/null'], {
    env: { ...process.env, TERM: 'xterm-256color', NO_COLOR: '1', CI: 'true' },
    maxBuffer: 16 * 1024 * 1024,
  }).catch((e: { stdout: string }) => ({ stdout: e.stdout }));
  return stripVTControlCharacters(stdout).replace(/\r/g, '');
}

/** check's CLI against the Python receiver with a flaw, on a free port. */
async function checkCli(flaw: string, extra: string[], cols?: number): Promise<string> {
  const r = python('stripe', flaw);
  const port = await freePort();
  const args = [
    'check',
    '--receiver',
    r.command,
    '--url',
    `http://127.0.0.1:${port}/`,
    '--provider',
    'stripe',
    '--secret',
    SECRET.stripe as string,
    '--stored',
    r.stored,
    ...extra,
  ];
  if (cols !== undefined) return atTerminal(args, cols);
  const out = await hookdrill(args, {}, [], undefined, 180_000);
  return out.stdout;
}

test("other-types labels its unknown-type probe with the type it sends, not the default fixture's name", async () => {
  const r = await checkReceiver('stripe', python('stripe', 'refuse-unknown-types'), { only: ['valid', 'multibyte-body', 'other-types'] });
  const c = r.cases.find((x) => x.name === 'other-types');
  assert.equal(c?.status, 'fail', explain(r));
  assert.match(c?.observed ?? '', /hookdrill\.unknown_event_type \(400/);
  assert.doesNotMatch(c?.observed ?? '', /invoice\.paid \(400/);
});

test('the summary gives a diagnosis up to its first clause, never cut inside a quote', async () => {
  const { firstClause } = await import('../src/render/check.js');
  assert.equal(
    firstClause('your receiver answers the PING with 200 "ok", not {"type": 1}: answer it'),
    'your receiver answers the PING with 200 "ok", not {"type": 1}',
  );
  assert.equal(firstClause('a `key: value` header — then more'), 'a `key: value` header');
});

test('the cases not judged name the failed case they depend on, not every failure', async () => {
  // Two flaws: stale timestamps accepted (future-timestamp depends on stale-timestamp), and a 64 KiB body limit.
  const out = await checkCli('accepts-stale,limit-64k', ['--only', 'valid,wrong-secret,stale-timestamp,future-timestamp,large-body']);
  assert.match(out, /✗ stale-timestamp/);
  assert.match(out, /✗ large-body/);
  assert.match(out, /the 1 not judged depend on a failed case: fix stale-timestamp, then run check again/);
});

test('--only valid: one line for the cases not asked for, not a SKIP line each', async () => {
  const out = await checkCli('', ['--only', 'valid']);
  assert.match(out, /^PASS valid/m);
  assert.doesNotMatch(out, /^SKIP /m);
  assert.match(out, /^\d+ cases not asked for \(--only\)$/m);
});

test('check at a 60-column terminal breaks its lines at spaces, indented under them, never mid-word', async () => {
  const out = await checkCli('join-lines', ['--only', 'valid'], 60);
  const lines = out.split('\n');
  // Every line fits, but one holding a command to copy (the terminal wraps it, and copies it back whole).
  const long = lines.filter((l) => [...l].length > 59 && !/\bhookdrill [a-z]+ -/.test(l));
  assert.deepEqual(long, []);
  const words = out.replace(/\s+/g, ' ');
  assert.match(words, /its line ends are removed or changed before it verifies/);
});

test('inspect --exclude-check: the header counts leave out the rows check sent, as the groups under it do', async () => {
  const file = join(tempDir(), 'inbox.db');
  const inbox = openSqliteInbox(file);
  await inbox.put(stripeRow('evt_real'));
  for (const id of ['evt_c1', 'evt_c2', 'evt_c3']) await inbox.put(stripeRow(id, { headers: { 'x-hookdrill-check': 'chk-1' } }));
  await inbox.close();
  const all = await hookdrill(['inspect', '--inbox', file]);
  assert.match(all.stdout, /total 4/);
  const real = await hookdrill(['inspect', '--inbox', file, '--exclude-check']);
  assert.equal(real.code, 0, real.stderr);
  assert.match(real.stdout, /pending 1 · working 0 · done 0 · dead 0 · total 1/);
});

test('demo at a 60-column terminal breaks its lines at spaces, never mid-word', async () => {
  const out = await atTerminal(['demo'], 60);
  assert.match(out, /Inline work vs queue-first/);
  assert.deepEqual(
    out.split('\n').filter((l) => [...l].length > 59),
    [],
  );
  assert.match(out.replace(/\s+/g, ' '), /acknowledged, then lost with the process/);
});

test('Ctrl-C while the --stored probe runs (sqlite3 gets the signal too): exit 130, the finished cases reported and in the JUnit, the rest not judged, no one blamed', async () => {
  const { spawn } = await import('node:child_process');
  const { existsSync, readFileSync } = await import('node:fs');
  const r = python('stripe');
  const dir = tempDir();
  const calls = join(dir, 'calls');
  const marker = join(dir, 'probing');
  const junit = join(dir, 'check.xml');
  // The third look at the store hangs, as a slow query does, until Ctrl-C.
  const stored = `n=$(cat ${calls} 2>/dev/null || echo 0); echo $((n+1)) > ${calls}; if [ "$n" -eq 2 ]; then touch ${marker}; sleep 30; fi; ${r.stored}`;
  const port = await freePort();
  // A process group of its own, as a shell gives a job: Ctrl-C reaches hookdrill and every child.
  const child = spawn(
    process.execPath,
    [
      BIN,
      'check',
      '--receiver',
      r.command,
      '--url',
      `http://127.0.0.1:${port}/`,
      '--provider',
      'stripe',
      '--secret',
      SECRET.stripe as string,
      '--stored',
      stored,
      '--junit',
      junit,
    ],
    { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, CI: 'true' } },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  while (!existsSync(marker)) {
    const done = await Promise.race([exit.then(() => true), new Promise((res) => setTimeout(() => res(false), 50))]);
    assert.equal(done, false, `check ended before the probe: ${out}${err}`);
  }
  // The marker is touched just before the sleep starts: a Ctrl-C in between once reached the
  // shell alone, the sleep ran on to exec's 30 s timeout, and the probe "failed" (CI, 2026-12-07).
  // Sent once the sleep itself is in the group, as a person's Ctrl-C at a hung query would be.
  const { readdirSync } = await import('node:fs');
  // /proc/PID/stat: "pid (comm) state ppid pgrp …".
  const sleeping = () =>
    readdirSync('/proc')
      .filter((d) => /^\d+$/.test(d))
      .some((d) => {
        try {
          const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
          const rest = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
          return stat.includes('(sleep)') && rest[2] === String(child.pid);
        } catch {
          return false; // gone meanwhile
        }
      });
  await until(sleeping, 'the probe sleeping', 10_000);
  process.kill(-(child.pid as number), 'SIGINT');
  assert.equal(await exit, 130, out + err);
  assert.doesNotMatch(err, /--stored command failed/);
  assert.match(out, /^PASS valid/m);
  assert.match(out, /^SKIP \S+ +not judged: interrupted while it ran/m);
  assert.match(out, /^interrupted: FAIL \d+ passed, 0 failed/m);
  const xml = readFileSync(junit, 'utf8');
  assert.match(xml, /name="valid" time=/);
  assert.match(xml, /<skipped message="not judged: interrupted/);
  assert.doesNotMatch(xml, /<error/);
});

test("send with a mistyped secret: the 401 ends the delivery at once with what to check, not Stripe's three-day schedule; --retry-refused keeps the schedule", async () => {
  const { startServer, reply } = await import('./helpers/server.js');
  const target = await startServer((_req, res) => reply(res, 401, 'No signatures found matching the expected signature'));
  try {
    // Stripe's own profile, unscaled: its first retry would be a minute away.
    const r = await hookdrill(
      ['send', 'stripe/invoice.paid', '--url', target.url, '--secret', 'whsec_mistyped'],
      {},
      [],
      undefined,
      30_000,
    );
    assert.equal(r.code, 1, r.stdout + r.stderr);
    assert.equal(target.requests.length, 1);
    assert.match(r.stdout, /refused \(401\): not retried/);
    assert.match(r.stdout, /↳ 401 is the receiver refusing the request: check --secret/);
    const once = await hookdrill(['send', 'stripe/invoice.paid', '--url', target.url, '--secret', 'whsec_mistyped', '--no-retry']);
    assert.equal(once.code, 1);
    assert.match(once.stdout, /↳ 401 is the receiver refusing the request: check --secret/, 'the hint without a retry line');
    const kept = await hookdrill([
      'send',
      'stripe/invoice.paid',
      '--url',
      target.url,
      '--secret',
      'whsec_mistyped',
      '--retry-refused',
      '--retry-delays',
      '10ms,10ms',
    ]);
    assert.equal(kept.code, 1);
    assert.equal(target.requests.length, 1 + 1 + 3, '--retry-refused: the schedule, three attempts');
  } finally {
    await target.close();
  }
});
