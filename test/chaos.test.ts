import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../src/commands/chaos.js';
import { UsageError } from '../src/errors.js';
import { BIN, hookdrill } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';

const SIMPLE = fileURLToPath(new URL('./receivers/simple.js', import.meta.url));
const PRINT_DONE = fileURLToPath(new URL('./receivers/print-done.js', import.meta.url));
const SECRET = 'whsec_chaos_test';

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((r) => s.close(() => r()));
  return port;
}

function alive(pattern: string): boolean {
  try {
    return execSync(`ps -eo args`).toString().split('\n').some((l) => l.includes(pattern) && !l.includes('ps -eo'));
  } catch {
    return false;
  }
}

test('an ack-first receiver fails, with exactly the ids it acknowledged and lost', async () => {
  const file = join(tempDir(), 'stored.txt');
  writeFileSync(file, '');
  const port = await freePort();
  const result = await run({
    receiver: `node ${SIMPLE} ack-first ${file}`,
    url: `http://127.0.0.1:${port}/`,
    provider: 'stripe',
    secrets: [SECRET],
    stored: `cat ${file}`,
    events: 10,
    concurrency: 5,
    rounds: 3,
    settle: '700ms',
  });
  assert.equal(result.ok, false);
  assert.equal(result.rounds.length, 3);
  const stored = new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean));
  // Every id reported lost was acknowledged and is not in the store; and none is missing from the report.
  assert.ok(result.totals.lost.length > 0);
  for (const id of result.totals.lost) assert.ok(!stored.has(id), `${id} is stored but reported lost`);
  assert.ok(result.rounds.every((r) => r.killed && r.lost.length > 0), 'each kill lost what was acknowledged in memory');
  assert.equal(result.totals.lost.length, result.totals.acknowledged - result.totals.stored + result.totals.unacknowledgedStored);
  assert.ok(!alive(`simple.js ack-first ${file}`), 'no receiver left behind');
});

test('a store-first receiver passes over several rounds; unacknowledged deliveries are retried after each restart', async () => {
  const file = join(tempDir(), 'stored.txt');
  writeFileSync(file, '');
  const port = await freePort();
  const result = await run({
    receiver: `node ${SIMPLE} store-first ${file}`,
    url: `http://127.0.0.1:${port}/`,
    provider: 'stripe',
    secrets: [SECRET],
    stored: `cat ${file}`,
    events: 10,
    concurrency: 5,
    rounds: 4,
    settle: '100ms',
  });
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
    (err: unknown) => err instanceof UsageError && /exited \(code 1\) before accepting connections; its stderr ended with: loading config \| fatal: DATABASE_URL is not set/.test(err.message),
  );
  await assert.rejects(
    run({ ...base, receiver: `node ${SIMPLE} never-listens`, readyTimeout: '500ms' }),
    (err: unknown) => err instanceof UsageError && /did not accept connections on 127.0.0.1:\d+ within 500 ms/.test(err.message),
  );
  assert.ok(!alive(`simple.js never-listens`), 'the receiver that never listened was killed');
});

test('--signal TERM on a receiver that ignores it: escalates to SIGKILL and says so', async () => {
  const file = join(tempDir(), 'stored.txt');
  writeFileSync(file, '');
  const port = await freePort();
  const result = await run({
    receiver: `node ${SIMPLE} ignore-term ${file}`,
    url: `http://127.0.0.1:${port}/`,
    provider: 'stripe',
    secrets: [SECRET],
    stored: `cat ${file}`,
    events: 4,
    signal: 'TERM',
    settle: '50ms',
  });
  assert.equal(result.ok, true);
  assert.equal(result.rounds[0]?.escalated, true);
  assert.ok(!alive(`simple.js ignore-term ${file}`));
});

test('chaos CLI: exit 1 with the lost ids for ack-first, --json and --junit; bad input exit 2', async () => {
  const dir = tempDir();
  const file = join(dir, 'stored.txt');
  writeFileSync(file, '');
  const port = await freePort();
  const junit = join(dir, 'chaos.xml');
  const r = await hookdrill([
    'chaos', '--receiver', `node ${SIMPLE} ack-first ${file}`, '--url', `http://127.0.0.1:${port}/`, '--provider', 'stripe',
    '--secret', SECRET, '--stored', `cat ${file}`, '--events', '5', '--settle', '700ms', '--json', '--junit', junit,
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
  const file = join(tempDir(), 'stored.txt');
  writeFileSync(file, '');
  const port = await freePort();
  const result = await run({
    receiver: `node ${SIMPLE} store-first ${file}`,
    url: `http://127.0.0.1:${port}/`,
    provider: 'stripe',
    secrets: [SECRET],
    stored: `cat ${file}`,
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
