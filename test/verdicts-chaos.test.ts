import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { run as chaos } from '../src/chaos/run.js';
import type { ChaosOptions } from '../src/chaos/run.js';
import { renderChaos, renderChaosJunit } from '../src/render/chaos.js';
import { SECRET, python } from './helpers/verdicts.js';
import { freePort } from './helpers/ports.js';
import { BIN } from './helpers/cli.js';
import { PYTHON } from './helpers/python.js';
import { tempDir } from './helpers/tmp.js';

async function chaosOf(provider: string, command: string, o: Partial<ChaosOptions>) {
  const port = await freePort();
  return chaos({ receiver: command, url: `http://127.0.0.1:${port}/`, provider, secrets: [SECRET[provider] as string], rounds: 3, ...o });
}

test('a receiver that dedupes in memory stores a duplicate again after a restart: chaos fails, naming them', async () => {
  const r = python('stripe', 'memory-dedupe');
  const result = await chaosOf('stripe', r.command, { stored: r.stored });
  assert.equal(result.ok, false);
  assert.ok(result.totals.storedTwice.length > 0, JSON.stringify(result.totals));
  assert.equal(result.totals.lost.length, 0);
  assert.ok(
    result.problems.some((p) => /stored more than once/.test(p)),
    result.problems.join('\n'),
  );
});

test('processed twice across a restart fails the run, unless the handler is declared idempotent', async () => {
  // The same receiver, its store read as "processed" (each store is its handler's work), and as
  // "stored" once per id, so that only the processing is judged.
  const r = python('stripe', 'memory-dedupe');
  const once = `${r.stored} | sort -u`;
  const result = await chaosOf('stripe', r.command, { stored: once, processed: r.stored });
  assert.equal(result.ok, false);
  assert.ok((result.totals.processedTwice ?? []).length > 0);
  assert.ok(
    result.problems.some((p) => /processed more than once.*--allow-reprocess/.test(p)),
    result.problems.join('\n'),
  );
  const r2 = python('stripe', 'memory-dedupe');
  const allowed = await chaosOf('stripe', r2.command, { stored: `${r2.stored} | sort -u`, processed: r2.stored, allowReprocess: true });
  assert.deepEqual(allowed.problems, []);
  // The JUnit report names them as failures, unless they were allowed.
  assert.match(renderChaosJunit(result), /<failure [^>]*>[^<]*processed twice evt_/);
  assert.doesNotMatch(renderChaosJunit(allowed), /processed twice/);
});

test("a right Slack receiver on Python's http.server (answers ~40 ms late on a reused connection) passes chaos at the default time scale", async () => {
  const r = python('slack');
  const result = await chaosOf('slack', r.command, { stored: r.stored });
  assert.deepEqual(result.problems, []);
  assert.equal(result.ok, true);
  assert.equal(result.timing.timeoutMs, 3000, "Slack's own 3 s: the time scale compresses the waits, not the timeout");
  // A process kill cannot see an unsynced write go: never a bare PASS.
  assert.equal(result.durability, 'process-kill');
  assert.match(renderChaos(result), /a process kill cannot judge power-loss durability/);
});

test("a GitHub receiver that does its work inline in 1.5 s (inside GitHub's 10 s) passes chaos at the default time scale; --scale-timeout holds it to 1 s and says so", async () => {
  // At 0.01 a scaled timeout was 1 s (the floor): every delivery timed out, a false FAIL for a
  // receiver GitHub accepts. The time scale now compresses the waits only.
  const r = python('github', '', '--answer-after 1.5');
  const result = await chaosOf('github', r.command, { stored: r.stored, rounds: 1, events: 4, duplicates: 1 });
  assert.deepEqual(result.problems, []);
  assert.equal(result.ok, true);
  assert.equal(result.timing.timeoutMs, 10_000);
  assert.match(renderChaos(result), /profile github ×0\.01 \(waits only; the timeout is real\): timeout 10s/);
  const r2 = python('github', '', '--answer-after 1.5');
  const strict = await chaosOf('github', r2.command, { stored: r2.stored, rounds: 1, events: 4, duplicates: 1, scaleTimeout: true });
  assert.equal(strict.ok, false, 'the stricter rule, asked for by name, is kept');
  assert.equal(strict.timing.timeoutMs, 1_000);
  assert.match(renderChaos(strict), /×0\.01 \(waits and timeout, scaled to 1s\)/);
});

const root = process.getuid?.() === 0;

test('power cut: SQLite synchronous=OFF and NORMAL lose acknowledged deliveries, FULL loses none', {
  skip: root ? false : '--power-cut needs root (loop devices); CI runs as root',
}, async () => {
  for (const sync of ['OFF', 'NORMAL', 'FULL']) {
    const dir = join(tempDir(), 'data');
    const r = python('stripe', '', `--sqlite-sync ${sync}`);
    const command = r.command.replace(/--store \S+/, '--store "$DATA_DIR/inbox.db"');
    const stored = `${PYTHON} ${r.stored.split(' ')[1]} ids --store ${dir}/inbox.db`;
    const result = await chaosOf('stripe', command, { stored, powerCut: dir, events: 40, killAfter: 30 });
    assert.equal(result.durability, 'power-cut');
    if (sync === 'FULL') {
      assert.deepEqual(result.problems, [], sync);
      assert.equal(result.totals.stored, result.totals.sent);
    } else {
      assert.equal(result.ok, false, `synchronous=${sync} acknowledged before its commit reached the disk`);
      assert.ok(result.totals.lost.length > 0, sync);
    }
  }
});

test('--power-cut refuses a directory that is not empty, and a server-side inbox', async () => {
  const dir = tempDir();
  const { writeFileSync } = await import('node:fs');
  writeFileSync(join(dir, 'x'), '');
  const r = python('stripe');
  await assert.rejects(chaosOf('stripe', r.command, { stored: r.stored, powerCut: dir }), root ? /must be empty/ : /needs root/);
  await assert.rejects(
    chaosOf('stripe', r.command, { inbox: 'postgres://postgres@127.0.0.1/test', powerCut: tempDir() }),
    /a server's, not the receiver's/,
  );
});

test('power cut: hookdrill listen loses no acknowledged delivery (it commits unsynced and syncs the WAL itself before each 200)', {
  skip: root ? false : '--power-cut needs root (loop devices); CI runs as root',
}, async () => {
  const dir = join(tempDir(), 'data');
  const port = await freePort();
  const result = await chaos({
    receiver: `node ${BIN} listen --provider stripe --secret ${SECRET.stripe} --port ${port} --inbox "$DATA_DIR/inbox.db" --no-worker --log none`,
    url: `http://127.0.0.1:${port}/`,
    provider: 'stripe',
    secrets: [SECRET.stripe as string],
    inbox: join(dir, 'inbox.db'),
    powerCut: dir,
    events: 60,
    killAfter: 45,
    concurrency: 16,
    rounds: 3,
  });
  assert.equal(result.durability, 'power-cut');
  assert.deepEqual(result.problems, []);
  assert.equal(result.totals.lost.length, 0);
  assert.ok(result.totals.acknowledged >= 120, JSON.stringify(result.totals));
});
