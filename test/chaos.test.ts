import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../src/chaos/run.js';
import { UsageError } from '../src/util/errors.js';
import { BIN, hookdrill } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { tempDir } from './helpers/tmp.js';

const SIMPLE = fileURLToPath(new URL('./receivers/simple.js', import.meta.url));
const PRINT_DONE = fileURLToPath(new URL('./receivers/print-done.js', import.meta.url));
const SECRET = 'whsec_chaos_test';

/** An empty file in a fresh directory: where the test receivers write the ids they store. */
function emptyStore(): string {
  const file = join(tempDir(), 'stored.txt');
  writeFileSync(file, '');
  return file;
}

/** chaos against one of test/receivers/simple.ts's receivers, storing into a fresh file, on a free port. */
async function chaosOnSimple(mode: string, o: Partial<Parameters<typeof run>[0]>) {
  const file = emptyStore();
  const port = await freePort();
  const result = await run({
    receiver: `node ${SIMPLE} ${mode} ${file}`,
    url: `http://127.0.0.1:${port}/`,
    provider: 'stripe',
    secrets: [SECRET],
    stored: `cat ${file}`,
    ...o,
  });
  return { file, port, result };
}

function alive(pattern: string): boolean {
  try {
    return execSync(`ps -eo args`)
      .toString()
      .split('\n')
      .some((l) => l.includes(pattern) && !l.includes('ps -eo'));
  } catch {
    return false;
  }
}

test('an ack-first receiver fails, with exactly the ids it acknowledged and lost', async () => {
  const { file, result } = await chaosOnSimple('ack-first', { events: 10, concurrency: 5, rounds: 3, settle: '700ms' });
  assert.equal(result.ok, false);
  assert.equal(result.rounds.length, 3);
  const stored = new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean));
  // Every id reported lost was acknowledged and is not in the store; and none is missing from the report.
  assert.ok(result.totals.lost.length > 0);
  for (const id of result.totals.lost) assert.ok(!stored.has(id), `${id} is stored but reported lost`);
  assert.ok(
    result.rounds.every((r) => r.killed && r.lost.length > 0),
    'each kill lost what was acknowledged in memory',
  );
  assert.equal(result.totals.lost.length, result.totals.acknowledged - result.totals.stored + result.totals.unacknowledgedStored);
  assert.ok(!alive(`simple.js ack-first ${file}`), 'no receiver left behind');
});

test('a store-first receiver passes over several rounds; unacknowledged deliveries are retried after each restart', async () => {
  const { file, result } = await chaosOnSimple('store-first', { events: 10, concurrency: 5, rounds: 4, settle: '100ms' });
  assert.equal(result.ok, true, JSON.stringify(result.problems));
  assert.deepEqual(result.totals.lost, []);
  assert.equal(result.totals.sent, 40);
  assert.equal(result.receiverStarts, 5, 'one start, one restart per round');
  assert.equal(result.totals.kills, 4);
  assert.equal(result.totals.acknowledged, 40, 'every delivery got through in the end, thanks to the retries');
  assert.ok(result.rounds.every((r) => typeof r.killLandedMs === 'number' && r.killLandedMs >= 0));
  assert.ok(!alive(`simple.js store-first ${file}`));
});

test('hookdrill listen passes, read through --inbox, with every acknowledged delivery processed', async () => {
  const dir = tempDir();
  const inbox = join(dir, 'inbox.db');
  const port = await freePort();
  const result = await run({
    receiver: `node ${BIN} listen --provider stripe --secret ${SECRET} --port ${port} --inbox ${inbox} --lease 300ms`,
    url: `http://127.0.0.1:${port}/`,
    provider: 'stripe',
    secrets: [SECRET],
    inbox,
    processed: `node ${PRINT_DONE} ${inbox}`,
    events: 10,
    rounds: 3,
    settle: '1500ms',
  });
  assert.equal(result.ok, true, JSON.stringify(result.problems));
  assert.equal(result.totals.acknowledged, 30);
  assert.equal(result.totals.stored, 30);
  assert.equal(result.totals.processed, 30);
  assert.deepEqual(result.totals.notProcessed, []);
  assert.ok(!result.receiver.includes(SECRET), 'the secret in the receiver command is masked');
});

test('a receiver that crashes at startup, or never listens: a clear error with its stderr', async () => {
  const port = await freePort();
  const base = { url: `http://127.0.0.1:${port}/`, provider: 'stripe', secrets: [SECRET], stored: 'true' };
  await assert.rejects(
    run({ ...base, receiver: `node ${SIMPLE} crash` }),
    (err: unknown) =>
      err instanceof UsageError &&
      /exited \(code 1\) before accepting connections; its stderr ended with: loading config \| fatal: DATABASE_URL is not set/.test(
        err.message,
      ),
  );
  await assert.rejects(
    run({ ...base, receiver: `node ${SIMPLE} never-listens`, readyTimeout: '500ms' }),
    (err: unknown) => err instanceof UsageError && /did not accept connections on 127.0.0.1:\d+ within 500 ms/.test(err.message),
  );
  assert.ok(!alive(`simple.js never-listens`), 'the receiver that never listened was killed');
});

test('--signal TERM on a receiver that ignores it: escalates to SIGKILL and says so', async () => {
  const { file, result } = await chaosOnSimple('ignore-term', { events: 4, killSignal: 'TERM', settle: '50ms' });
  assert.equal(result.ok, true);
  assert.equal(result.rounds[0]?.escalated, true);
  assert.ok(!alive(`simple.js ignore-term ${file}`));
});

test('a chaos FAIL with lost deliveries says the fix under their ids, as check does under a failed case', async () => {
  const { renderChaos } = await import('../src/render/chaos.js');
  const { result } = await chaosOnSimple('ack-first', { events: 5, rounds: 1, settle: '700ms' });
  assert.ok(result.totals.lost.length > 0);
  assert.match(
    renderChaos(result),
    /lost \(acknowledged, then not stored\): \d+\n( {2}\S+\n)+ {2}→ your receiver answers 2xx before the delivery is durably stored: commit it/,
  );
});

test('a --stored sqlite3 that meets "database is locked" is asked again, not the whole run thrown away; still locked, the error says how to give sqlite3 a busy timeout', async () => {
  const file = emptyStore();
  const calls = join(tempDir(), 'calls');
  // Locked on every other call, as sqlite3 without a busy timeout is while the receiver writes.
  const flaky = `n=$(cat ${calls} 2>/dev/null || echo 0); echo $((n+1)) > ${calls}; if [ $((n % 2)) -eq 0 ]; then echo 'Error: in prepare, database is locked (5)' >&2; exit 1; fi; cat ${file}`;
  const port = await freePort();
  const r = await hookdrill(
    [
      'chaos',
      '--receiver',
      `node ${SIMPLE} store-first ${file}`,
      '--url',
      `http://127.0.0.1:${port}/`,
      '--provider',
      'stripe',
      '--secret',
      SECRET,
      '--stored',
      flaky,
      '--events',
      '5',
      '--rounds',
      '2',
      '--settle',
      '700ms',
    ],
    {},
    [],
    undefined,
    120_000,
  );
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.match(r.stdout, /PASS/);
  const { runIdsCommand } = await import('../src/harness/store-probe.js');
  const always = join(tempDir(), 'always');
  await assert.rejects(runIdsCommand(`echo x >> ${always}; echo 'Error: database is locked' >&2; exit 5`, '--stored', {}), (e: Error) =>
    /^--stored command failed \(5\): Error: database is locked; still locked after 5 tries: .*sqlite3 -cmd '\.timeout 2000'/.test(
      e.message,
    ),
  );
  assert.equal(readFileSync(always, 'utf8').split('\n').filter(Boolean).length, 5);
  // A command failing for any other reason is not asked again.
  const once = join(tempDir(), 'once');
  await assert.rejects(runIdsCommand(`echo x >> ${once}; exit 3`, '--stored', {}), /--stored command failed \(3\)/);
  assert.equal(readFileSync(once, 'utf8'), 'x\n');
});

test('chaos CLI: exit 1 with the lost ids for ack-first, --json and --junit; bad input exit 2', async () => {
  const dir = tempDir();
  const file = join(dir, 'stored.txt');
  writeFileSync(file, '');
  const port = await freePort();
  const junit = join(dir, 'chaos.xml');
  const r = await hookdrill([
    'chaos',
    '--receiver',
    `node ${SIMPLE} ack-first ${file}`,
    '--url',
    `http://127.0.0.1:${port}/`,
    '--provider',
    'stripe',
    '--secret',
    SECRET,
    '--stored',
    `cat ${file}`,
    '--events',
    '5',
    '--settle',
    '700ms',
    '--json',
    '--junit',
    junit,
  ]);
  assert.equal(r.code, 1, r.stderr);
  const result = JSON.parse(r.stdout) as { ok: boolean; totals: { lost: string[] } };
  assert.equal(result.ok, false);
  assert.ok(result.totals.lost.length > 0);
  assert.ok(existsSync(junit));
  assert.match(readFileSync(junit, 'utf8'), new RegExp(`lost ${result.totals.lost[0]}`));
  const bad = await hookdrill(['chaos', '--receiver', 'true', '--url', 'http://127.0.0.1:1/', '--provider', 'stripe', '--secret', 's']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /--inbox FILE or --stored/);
});

test('--kill-point random: kills mid-round, and a store-first receiver still loses nothing', async () => {
  const { result } = await chaosOnSimple('store-first', {
    events: 10,
    concurrency: 5,
    rounds: 3,
    killPoint: 'random',
    random: () => 0.5,
    settle: '100ms',
  });
  assert.equal(result.ok, true, JSON.stringify(result.problems));
  assert.equal(result.killPoint, 'random');
  assert.ok(result.rounds.every((r) => r.killed));
  assert.equal(result.totals.lost.length, 0);
  assert.equal(result.receiverStarts, 4);
});

/** A plain HTTP server on the port that answers 200 to everything: the stranger chaos must not test. */
async function stranger(port: number): Promise<{ close(): Promise<void>; hits: () => number }> {
  const { createServer: createHttp } = await import('node:http');
  let hits = 0;
  const server = createHttp((req, res) => {
    hits++;
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  return {
    hits: () => hits,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

test('a port that already answers: chaos refuses to start instead of testing whatever holds it', async () => {
  const file = emptyStore();
  const port = await freePort();
  const other = await stranger(port);
  try {
    await assert.rejects(
      run({
        receiver: `node ${SIMPLE} ack-first ${file}`,
        url: `http://127.0.0.1:${port}/`,
        provider: 'stripe',
        secrets: [SECRET],
        stored: `cat ${file}`,
        events: 5,
        settle: '50ms',
      }),
      (err: unknown) =>
        err instanceof UsageError &&
        /already answers on 127\.0\.0\.1:\d+ \(pid \d+: .*node.*\), before the receiver was started/.test(err.message),
    );
    assert.equal(other.hits(), 0, 'no delivery was sent to the stranger');
    assert.ok(!alive(`simple.js ack-first ${file}`), 'the receiver under test was never left running');
  } finally {
    await other.close();
  }
});

test('a receiver whose listener leaves its process group: refused, since chaos could not kill it', async () => {
  const file = emptyStore();
  const port = await freePort();
  try {
    await assert.rejects(
      run({
        receiver: `node ${SIMPLE} escape ${file}`,
        url: `http://127.0.0.1:${port}/`,
        provider: 'stripe',
        secrets: [SECRET],
        stored: `cat ${file}`,
        events: 5,
        settle: '50ms',
      }),
      (err: unknown) => err instanceof UsageError && /outside the receiver's process group/.test(err.message),
    );
    assert.equal(readFileSync(file, 'utf8'), '', 'nothing was sent to it');
  } finally {
    const pidFile = `${file}.escaped-pid`;
    if (existsSync(pidFile)) {
      try {
        process.kill(Number(readFileSync(pidFile, 'utf8')), 'SIGKILL');
      } catch {
        /* gone */
      }
    }
  }
});

test('hookdrill chaos SIGKILLed mid-run: its receiver dies with it and the port is free again', async () => {
  const { spawn } = await import('node:child_process');
  const file = emptyStore();
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      BIN,
      'chaos',
      '--receiver',
      `node ${SIMPLE} store-first ${file}`,
      '--url',
      `http://127.0.0.1:${port}/`,
      '--provider',
      'stripe',
      '--secret',
      SECRET,
      '--stored',
      `cat ${file}`,
      '--events',
      '5',
      '--rounds',
      '10000',
    ],
    { stdio: 'ignore' },
  );
  const exited = new Promise((r) => child.on('exit', r));
  try {
    const deadline = Date.now() + 10_000;
    while (readFileSync(file, 'utf8').split('\n').filter(Boolean).length < 20) {
      assert.ok(Date.now() < deadline, 'chaos never got going');
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    child.kill('SIGKILL');
    await exited;
  }
  // Its process is gone (the port alone would not prove it: another test file running alongside
  // may be handed the same free port a moment later).
  const deadline = Date.now() + 5_000;
  while (alive(`simple.js store-first ${file}`)) {
    assert.ok(
      Date.now() < deadline,
      `the receiver outlived hookdrill by 5 s:\n${execSync('ps -eo pid,pgid,stat,args')
        .toString()
        .split('\n')
        .filter((l) => l.includes(file) || l.includes('while read'))
        .join('\n')}`,
    );
    await new Promise((r) => setTimeout(r, 50));
  }
});

test('a receiver that stores 2 ms after replying fails at --concurrency 1, on a machine as busy as a CI runner', async () => {
  const { spawn } = await import('node:child_process');
  // 400 idle processes, as a shared CI runner has: a look through /proc before the signal then
  // takes milliseconds, long enough for this receiver to write in time and pass (a false pass).
  const crowd = spawn('sh', ['-c', 'for i in $(seq 400); do sleep 120 & done; wait'], { detached: true, stdio: 'ignore' });
  const file = emptyStore();
  const port = await freePort();
  await new Promise((r) => setTimeout(r, 300));
  const result = await run({
    receiver: `node ${SIMPLE} write-after-reply ${file}`,
    url: `http://127.0.0.1:${port}/`,
    provider: 'stripe',
    secrets: [SECRET],
    stored: `cat ${file}`,
    events: 3,
    concurrency: 1,
    rounds: 5,
    settle: '100ms',
  }).finally(() => process.kill(-(crowd.pid as number), 'SIGKILL'));
  assert.equal(result.ok, false, 'acknowledged, then stored too late: that is a loss');
  assert.ok(result.totals.lost.length > 0);
  assert.ok(
    result.rounds.every((r) => typeof r.killSentMs === 'number'),
    'each round reports its ack→signal time',
  );
  assert.equal(result.totals.maxKillSentMs, Math.max(...result.rounds.map((r) => r.killSentMs as number)));
});

test('a receiver that answers 500 to a delivery it already holds: never acknowledged is a finding, with the answers', async () => {
  const { result } = await chaosOnSimple('refuse-duplicates', { events: 10, concurrency: 10, rounds: 3, settle: '50ms' });
  assert.equal(result.ok, false, JSON.stringify(result.totals));
  assert.ok(result.totals.refused.length > 0);
  assert.equal(result.totals.unacknowledgedStored, result.totals.refused.length, 'it held every one it refused');
  assert.ok((result.totals.answers['500'] ?? 0) > 0, JSON.stringify(result.totals.answers));
  assert.match(
    result.problems.join('\n'),
    /never acknowledged, even by the retries after the restart \(last answers: 500 ×\d+\); the receiver holds \d+ of them/,
  );
});

test('nothing acknowledged: the summary names the most common answer and what it usually means', async () => {
  const file = emptyStore();
  const port = await freePort();
  const result = await run({
    receiver: `node ${SIMPLE} store-first ${file}`,
    url: `https://127.0.0.1:${port}/`,
    provider: 'stripe',
    secrets: [SECRET],
    stored: `cat ${file}`,
    events: 3,
    settle: '50ms',
  });
  assert.equal(result.ok, false);
  assert.equal(result.totals.acknowledged, 0);
  const [answer] = Object.keys(result.rounds[0]?.answers ?? {});
  assert.ok(answer && !/^\d+$/.test(answer), `each attempt's transport error is kept: ${JSON.stringify(result.rounds[0]?.answers)}`);
  assert.match(
    result.problems[0] ?? '',
    /acknowledged nothing.*\d+ of \d+ attempts got \w+ \(an https:\/\/ --url for a receiver that speaks plain HTTP\?\)/,
  );
});

test('rows a killed worker still leases are waited for, not called "never processed"', async () => {
  const { createServer: createHttp } = await import('node:http');
  // The app listen forwards to takes 300 ms: a kill right after an ack finds rows mid-forward.
  const app = createHttp((req, res) => {
    req.resume();
    setTimeout(() => res.end('ok'), 300);
  });
  await new Promise<void>((r) => app.listen(0, '127.0.0.1', r));
  const appPort = (app.address() as AddressInfo).port;
  const dir = tempDir();
  const inbox = join(dir, 'inbox.db');
  const port = await freePort();
  const waits: number[] = [];
  try {
    const result = await run({
      receiver: `node ${BIN} listen --provider stripe --secret ${SECRET} --port ${port} --inbox ${inbox} --forward-to http://127.0.0.1:${appPort}/ --forward-timeout 1s --lease 2s`,
      url: `http://127.0.0.1:${port}/`,
      provider: 'stripe',
      secrets: [SECRET],
      inbox,
      processed: `node ${PRINT_DONE} ${inbox}`,
      events: 6,
      // One round, as it was written for: six rows, one kill mid-forward (the default is 3 rounds).
      rounds: 1,
      killAfter: 6,
      settle: '100ms',
      onSettleWait: (w) => waits.push(w.leased),
    });
    assert.equal(result.ok, true, JSON.stringify(result.problems));
    assert.ok((result.settleWaitMs ?? 0) > 0, 'it had to wait for the lease to run out');
    assert.ok(
      waits.some((n) => n > 0),
      'and said it was waiting for leased rows',
    );
    assert.equal(result.totals.processed, 6);
  } finally {
    app.closeAllConnections();
    await new Promise((r) => app.close(r));
  }
});
