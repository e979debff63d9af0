import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
// Only what the package exports, as a user's test suite would import it.
import { inspect, openSqliteInbox, pull, reconcile, replay, requeue, scenario, send } from '../src/index.js';
import { reply, startServer } from './helpers/server.js';
import { tempDir } from './helpers/tmp.js';

const SECRET = `whsec_${Buffer.from('library-exports-secret-00').toString('base64')}`;

test('every engine the CLI runs on is exported, each returning its --json Result', () => {
  for (const f of [inspect, requeue, replay, scenario, reconcile, pull, send]) assert.equal(typeof f, 'function');
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
  const started = Date.now();
  const { code, out } = await new Promise<{ code: number | null; out: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error('the script hung: the receiver kept its event loop alive'));
    }, 20_000);
    child.on('exit', (c) => {
      clearTimeout(timer);
      resolve({ code: c, out });
    });
  });
  assert.equal(code, 0);
  assert.ok(Date.now() - started < 20_000);
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
