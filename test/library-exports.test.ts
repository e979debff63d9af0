import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
// Only what the package exports, as a user's test suite would import it.
import {
  UsageError,
  chaos,
  check,
  inspect,
  openSqliteInbox,
  pull,
  reconcile,
  replay,
  requeue,
  scenario,
  send,
  startReceiver,
  startUi,
} from '../src/index.js';
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { freePort } from './helpers/ports.js';
import { reply, startServer } from './helpers/server.js';
import { tempDir } from './helpers/tmp.js';

const SECRET = `whsec_${Buffer.from('library-exports-secret-00').toString('base64')}`;

test('every engine the CLI runs on is exported, each returning its --json Result', () => {
  for (const f of [inspect, requeue, replay, scenario, reconcile, pull, send, startUi]) assert.equal(typeof f, 'function');
});

test('a bare number is milliseconds in every duration option: send({ timeout: 500 }) is half a second, not 500 s', async () => {
  const target = await startServer((_req, res) => reply(res, 200));
  try {
    const r = await send({ fixtures: ['stripe/invoice.paid'], url: target.url, secrets: [SECRET], timeout: 500, noRetry: true });
    assert.equal(r.timing.timeoutMs, 500);
    assert.equal(r.ok, true);
    const s = await send({ fixtures: ['stripe/invoice.paid'], url: target.url, secrets: [SECRET], timeout: '2s', noRetry: true });
    assert.equal(s.timing.timeoutMs, 2_000, 'a duration string still works');
  } finally {
    await target.close();
  }
});

test('the incident engines from the library: inspect, requeue, replay on an inbox', async () => {
  const path = join(tempDir(), 'inbox.db');
  const db = openSqliteInbox(path);
  await db.put({
    source: 'stripe',
    deliveryId: 'evt_lib',
    eventType: 'invoice.paid',
    body: Buffer.from('{"id":"evt_lib"}'),
    headers: {},
    receivedAt: Date.now(),
  });
  const [row] = await db.claim({ limit: 1, leaseMs: 60_000 });
  if (row) await db.settle([{ key: row, fence: row.fence, outcome: 'dead', error: 'crm down' }]);
  await db.close();
  const seen = await inspect({ inbox: path });
  assert.equal(seen.view, 'overview');
  const target = await startServer((_req, res) => reply(res, 200));
  try {
    const replayed = await replay({ inbox: path, status: ['dead'], to: target.url, provider: 'stripe', secrets: [SECRET] });
    assert.equal(replayed.ok, true);
    assert.equal(target.requests.length, 1);
  } finally {
    await target.close();
  }
  const moved = await requeue({ inbox: path, status: ['dead'] });
  assert.equal(moved.moved, 1);
  assert.equal(moved.resetAttempts, true, 'a fresh start by default');
});

test('a test that forgets receiver.stop() does not hang its runner, and the receiver dies with it', async () => {
  const { spawn } = await import('node:child_process');
  const { writeFileSync } = await import('node:fs');
  const { fileURLToPath } = await import('node:url');
  const { freePort } = await import('./helpers/ports.js');
  const index = fileURLToPath(new URL('../src/index.js', import.meta.url));
  const port = await freePort();
  const script = join(tempDir(), 'forgets-stop.mjs');
  writeFileSync(
    script,
    [
      `import { startReceiver } from ${JSON.stringify(index)};`,
      `const r = await startReceiver({ command: 'python3 -m http.server ${port} --bind 127.0.0.1', url: 'http://127.0.0.1:${port}/' });`,
      'console.log(r.url);',
      '// no r.stop(): the script ends here',
    ].join('\n'),
  );
  const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('the script hung: the receiver kept its event loop alive'));
    }, 120_000);
    child.on('exit', (c) => {
      clearTimeout(timer);
      resolve({ code: c, out });
    });
  });
  assert.equal(code, 0);
  assert.match(out, /127\.0\.0\.1/);
  // Once the script is gone, nothing answers on the receiver's port.
  const deadline = Date.now() + 5_000;
  let alive = true;
  while (alive && Date.now() < deadline) {
    try {
      await fetch(`http://127.0.0.1:${port}/`, { signal: AbortSignal.timeout(1_000) });
      await new Promise((r) => setTimeout(r, 50));
    } catch {
      alive = false;
    }
  }
  assert.equal(alive, false, 'the receiver died with the process that started it');
});

test("options in JavaScript's shapes: headers and sets as objects, retryDelays as numbers, fixtures as one string", async () => {
  let n = 0;
  const target = await startServer((_req, res) => reply(res, ++n === 1 ? 500 : 200));
  try {
    const r = await send({
      fixtures: 'stripe/invoice.paid',
      url: target.url,
      secrets: SECRET,
      headers: { 'X-Env': 'ci', 'X-Build': 42 },
      sets: { 'data.object.amount_paid': 5000, 'data.object.status_transitions': { paid_at: 1 } },
      retryDelays: [0, 100],
    });
    assert.equal(r.ok, true);
    assert.deepEqual(r.timing.retryDelaysMs, [0, 100]);
    assert.equal(target.requests.length, 2, 'the 500 was retried on the given schedule');
    const req = target.requests[1]!;
    assert.equal(req.headers['x-env'], 'ci');
    assert.equal(req.headers['x-build'], '42');
    const body = JSON.parse(req.rawBody.toString()) as { data: { object: { amount_paid: number; status_transitions: unknown } } };
    assert.equal(body.data.object.amount_paid, 5000);
    assert.deepEqual(body.data.object.status_transitions, { paid_at: 1 }, 'an object value is set as an object');
    // The CLI's shapes still work through the same options.
    const s = await send({
      fixtures: ['stripe/invoice.paid'],
      url: target.url,
      secrets: [SECRET],
      headers: ['X-Env: ci'],
      sets: ['data.object.amount_paid=7'],
      retryDelays: 'none',
    });
    assert.equal(s.ok, true);
    assert.equal(
      (JSON.parse(target.requests[2]!.rawBody.toString()) as { data: { object: { amount_paid: number } } }).data.object.amount_paid,
      7,
    );
  } finally {
    await target.close();
  }
});

test('an option of the wrong shape is a UsageError that names it, never a raw TypeError', async () => {
  const base = { fixtures: ['stripe/invoice.paid'], url: 'http://127.0.0.1:9/', secrets: [SECRET] };
  const cases: [Record<string, unknown>, RegExp][] = [
    [{ headers: 'X-Env: ci' }, /^option headers: expected an object of headers/],
    [{ headers: { 'X-Env': { nested: true } } }, /^option headers\.X-Env: expected a string or a number, got an object$/],
    [{ headers: { 'X-Env': 'a\r\nInjected: 1' } }, /^header X-Env: its value holds a control character \(0x0d\)/],
    [{ headers: { 'Bad Name': 'x' } }, /^header "Bad Name": not a valid header name$/],
    [{ sets: 5 }, /^option sets: expected an object of path → value/],
    [{ sets: { 'data.object.x': undefined } }, /^option sets\.data\.object\.x: expected a JSON value/],
    [{ retryDelays: 100 }, /^option retryDelays: expected an array of durations/],
    [{ retryDelays: [0, null] }, /^option retryDelays: expected durations .* in the array, got null$/],
    [{ secrets: 7 }, /^option secrets: expected an array of strings, got a number$/],
    [{ provider: 3 }, /^option provider: expected a string, got a number$/],
    [{ url: new URL('http://127.0.0.1:9/') }, /^option url: expected a string, got an object$/],
  ];
  for (const [extra, message] of cases) {
    await assert.rejects(
      send({ ...base, ...extra } as Parameters<typeof send>[0]),
      (err: unknown) => err instanceof UsageError && message.test(err.message),
      JSON.stringify(extra),
    );
  }
  await assert.rejects(
    check({ url: 'http://127.0.0.1:9/', provider: 'stripe', secrets: [SECRET], skip: 5 as unknown as string[] }),
    (err: unknown) =>
      err instanceof UsageError &&
      /^option skip: expected an array of strings or a comma-separated string, got a number$/.test(err.message),
  );
  await assert.rejects(
    check({ url: 'http://127.0.0.1:9/', provider: 'stripe', secrets: [SECRET], only: ['duplicat'] }),
    (err: unknown) => err instanceof UsageError && /^--only duplicat: no such case/.test(err.message),
  );
});

test('check({ only, skip }) take arrays of case names', async () => {
  const target = await startServer((_req, res) => reply(res, 200));
  try {
    const r = await check({ url: target.url, provider: 'stripe', secrets: [SECRET], only: ['duplicate', 'retry'], skip: ['retry'] });
    const ran = r.cases.filter((c) => c.status !== 'skipped').map((c) => c.name);
    assert.deepEqual(ran, ['duplicate']);
    assert.match(r.cases.find((c) => c.name === 'retry')!.observed, /in --skip/);
  } finally {
    await target.close();
  }
});

test('chaos({ env, killSignal, signal }): env reaches the receiver, killSignal is how it dies, signal is an AbortSignal', async () => {
  const simple = fileURLToPath(new URL('./receivers/simple.js', import.meta.url));
  const stored = join(tempDir(), 'stored.txt');
  writeFileSync(stored, '');
  const stop = new AbortController();
  // Aborted once the receiver has stored something: the run ends after the round in hand.
  const watch = setInterval(() => {
    if (readFileSync(stored, 'utf8').includes('evt_')) stop.abort();
  }, 10);
  const r = await chaos({
    // The shell expands $STORED_FILE from the environment chaos gives the receiver.
    receiver: `node ${simple} store-first "$STORED_FILE"`,
    env: { STORED_FILE: stored },
    url: `http://127.0.0.1:${await freePort()}/`,
    provider: 'stripe',
    secrets: [SECRET],
    stored: `cat ${stored}`,
    rounds: 50,
    events: 4,
    killSignal: 'TERM',
    signal: stop.signal,
  }).finally(() => clearInterval(watch));
  assert.equal(r.signal, 'TERM');
  assert.ok(r.rounds.length >= 1 && r.rounds.length < 50, `the abort stopped the run (${r.rounds.length} rounds)`);
  assert.equal(r.interrupted, true);
  assert.ok(readFileSync(stored, 'utf8').includes('evt_'), 'the receiver stored into the file named by env');
});

test('startReceiver({ readyTimeout }) is milliseconds or a duration, like every other duration option', async () => {
  await assert.rejects(
    startReceiver({ command: 'sleep 30', url: `http://127.0.0.1:${await freePort()}/`, readyTimeout: '300ms' }),
    (err: unknown) => err instanceof UsageError && /did not accept connections on .* within 300 ms/.test(err.message),
  );
});
