import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { HookdrillAssertionError, ReceiverStartError, assertCheckPassed, check, startReceiver } from '../src/index.js';
import { freePort } from './helpers/ports.js';
import { tempDir } from './helpers/tmp.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SIMPLE = fileURLToPath(new URL('./receivers/simple.js', import.meta.url));

/** The examples marked ```js node:test or ```js vitest in the README and docs/library.md, each with the runner it is for. */
function readmeExamples(): { runner: 'node:test' | 'vitest'; source: string }[] {
  const readme = ['README.md', 'docs/library.md'].map((f) => readFileSync(join(ROOT, f), 'utf8')).join('\n');
  return [...readme.matchAll(/```js (node:test|vitest)\n([\s\S]*?)```/g)].map((m) => ({
    runner: m[1] as 'node:test' | 'vitest',
    source: m[2] as string,
  }));
}

/**
 * A project as a user has it after `npm install -D hookdrill`: node_modules/hookdrill (this
 * package, built) and node_modules/.bin/hookdrill, so both `import … from 'hookdrill'` and
 * `npx hookdrill` resolve as they would there. Inside the package (for its own modules) and
 * removed afterwards.
 */
function userProject(): string {
  const dir = join(ROOT, '.hookdrill-tmp', `project-${process.pid}-${Date.now()}`);
  mkdirSync(join(dir, 'node_modules', '.bin'), { recursive: true });
  symlinkSync(ROOT, join(dir, 'node_modules', 'hookdrill'));
  symlinkSync(join('..', 'hookdrill', 'bin', 'hookdrill'), join(dir, 'node_modules', '.bin', 'hookdrill'));
  symlinkSync(join(ROOT, 'node_modules', 'vitest'), join(dir, 'node_modules', 'vitest'));
  writeFileSync(join(dir, 'package.json'), '{"name":"my-app","private":true,"type":"module"}\n');
  return dir;
}

/** Run a test file as a user runs it, with Vitest or node:test: not as a child of this test run (node:test would skip its files). */
function runSuite(dir: string, runner: 'node:test' | 'vitest', file: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    let out = '';
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    const args = runner === 'vitest' ? [join(dir, 'node_modules', 'vitest', 'vitest.mjs'), 'run', file] : ['--test', file];
    const child = spawn(process.execPath, args, { cwd: dir, env: { ...env, CI: 'true', NO_COLOR: '1' } });
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('close', (code) => resolve({ code, out }));
  });
}

test('a Vitest suite that uses only the package, with options in JavaScript shapes (test/vitest/library.test.mjs), passes', async () => {
  const dir = userProject();
  try {
    const file = join(dir, 'library.test.mjs');
    copyFileSync(join(ROOT, 'test', 'vitest', 'library.test.mjs'), file);
    const r = await runSuite(dir, 'vitest', file);
    assert.equal(r.code, 0, r.out);
    assert.match(r.out, /Tests\s+4 passed \(4\)/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the README's and the library page's node:test and Vitest examples run as written in a user's project, and pass against hookdrill listen", async () => {
  const examples = readmeExamples();
  assert.deepEqual(
    [...new Set(examples.map((e) => e.runner))].sort(),
    ['node:test', 'vitest'],
    'an example is missing: this test would prove less',
  );
  const dir = userProject();
  try {
    for (const [i, { runner, source }] of examples.entries()) {
      // The one change: a free port instead of the README's 3999, so suites running alongside cannot collide.
      const port = String(await freePort());
      const file = join(dir, `example-${i}.test.mjs`);
      // Vitest and node:test examples both use inbox.db: each starts from none.
      rmSync(join(dir, 'inbox.db'), { force: true });
      writeFileSync(file, source.replaceAll('3999', port));
      const r = await runSuite(dir, runner, file);
      assert.equal(r.code, 0, r.out);
      if (runner === 'vitest') assert.match(r.out, /Tests\s+\d+ passed/);
      else {
        assert.match(r.out, /# pass [1-9]/);
        assert.match(r.out, /# fail 0/);
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('check({ receiver }) starts a receiver that does not verify signatures, finds it out, stops it; assertCheckPassed names the failed cases and why', async () => {
  const stored = join(tempDir(), 'stored.txt');
  writeFileSync(stored, '');
  const port = await freePort();
  const result = await check({
    receiver: `node ${SIMPLE} store-first ${stored}`,
    url: `http://127.0.0.1:${port}/`,
    provider: 'stripe',
    secrets: ['whsec_api_test'],
    stored: `cat ${stored}`,
  });
  assert.equal(result.ok, false);
  assert.match(String(result.receiver), /simple\.js store-first/);
  const failed = result.cases.filter((c) => c.status === 'fail');
  assert.ok(failed.length > 0);
  assert.throws(
    () => assertCheckPassed(result),
    (err: unknown) =>
      err instanceof HookdrillAssertionError &&
      failed.every((c) => err.message.includes(`✗ ${c.name}: ${c.observed}${c.diagnosis ? `\n    → ${c.diagnosis}` : ''}`)) &&
      failed.some((c) => c.diagnosis && err.message.includes(`→ ${c.diagnosis}`)) &&
      err.result === result,
  );
  // Stopped: nothing answers on its port any more.
  await assert.rejects(fetch(`http://127.0.0.1:${port}/`));
});

test('startReceiver: ready when its port answers, restart and kill, a receiver that never listens is a typed error', async () => {
  const stored = join(tempDir(), 'stored.txt');
  const port = await freePort();
  const r = await startReceiver({ command: `node ${SIMPLE} store-first ${stored}`, url: `http://127.0.0.1:${port}/` });
  try {
    assert.equal((await fetch(r.url, { method: 'POST', body: '{}' })).ok, true);
    await r.restart();
    assert.equal(r.starts, 2);
    assert.equal((await fetch(r.url, { method: 'POST', body: '{}' })).ok, true);
    await r.kill();
    await assert.rejects(fetch(r.url));
  } finally {
    await r.stop();
  }
  await assert.rejects(
    startReceiver({ command: `node ${SIMPLE} never-listens ${stored}`, url: `http://127.0.0.1:${await freePort()}/`, readyTimeout: 500 }),
    (err: unknown) =>
      err instanceof ReceiverStartError && err.name === 'ReceiverStartError' && /did not accept connections/.test(err.message),
  );
});

test('assertSendPassed and assertChaosPassed name the deliveries at fault', async () => {
  const { send, chaos, assertSendPassed, assertChaosPassed } = await import('../src/index.js');
  const { startServer, reply } = await import('./helpers/server.js');
  const app = await startServer((_req, res) => reply(res, 500, 'down'));
  try {
    const sent = await send({ url: app.url, provider: 'stripe', secrets: ['whsec_api'], count: 2, noRetry: true });
    assert.equal(sent.ok, false);
    assert.throws(
      () => assertSendPassed(sent),
      (err: unknown) =>
        err instanceof HookdrillAssertionError &&
        /2 of 2 deliveries did not get 2xx/.test(err.message) &&
        sent.deliveries.every((d) => err.message.includes(d.deliveryId)),
    );
  } finally {
    await app.close();
  }
  // A receiver that answers before it stores: chaos finds the lost deliveries, and the message names them.
  const stored = join(tempDir(), 'stored.txt');
  writeFileSync(stored, '');
  const result = await chaos({
    receiver: `node ${SIMPLE} ack-first ${stored}`,
    url: `http://127.0.0.1:${await freePort()}/`,
    provider: 'stripe',
    secrets: ['whsec_api'],
    stored: `cat ${stored}`,
    rounds: 2,
  });
  assert.equal(result.ok, false);
  assert.throws(
    () => assertChaosPassed(result),
    (err: unknown) => err instanceof HookdrillAssertionError && /lost \(acknowledged, then not held\): evt_/.test(err.message),
  );
});
