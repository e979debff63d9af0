import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { hookdrill } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { PY, SECRET, checkReceiver, explain, named, python } from './helpers/verdicts.js';
import { PYTHON } from './helpers/python.js';
import { tempDir } from './helpers/tmp.js';

/**
 * Issue 52: bodies that hold what the providers' real deliveries hold. A handler that reads a
 * field every real delivery carries (Paddle's details.totals.total, Linear's updatedFrom and actor
 * on an update) is right in production; on the old catalogue, which left them out, it answered 500
 * and was judged wrong.
 */

test("a Paddle handler that reads a transaction's details.totals.total, as every real delivery has it, passes valid", async () => {
  const r = await checkReceiver('paddle', python('paddle', 'reads-fields'), { only: 'valid' });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  assert.equal(r.cases.find((c) => c.name === 'valid')?.status, 'pass');
});

test("a Linear handler that reads an Issue update's updatedFrom and actor takes send's Issue.update (and check's related case)", async () => {
  const store = join(tempDir(), 'stored.txt');
  const port = await freePort();
  const child = spawn(
    PYTHON,
    [
      PY,
      'serve',
      '--provider',
      'linear',
      '--secret',
      SECRET.linear as string,
      '--port',
      String(port),
      '--store',
      store,
      '--flaw',
      'reads-fields',
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  try {
    await new Promise((ok, fail) => {
      child.stdout?.once('data', ok);
      child.once('exit', () => fail(new Error('the Python receiver exited')));
    });
    const sent = await hookdrill([
      'send',
      'linear/Issue.update',
      '--url',
      `http://127.0.0.1:${port}/`,
      '--secret',
      SECRET.linear as string,
      '--no-retry',
    ]);
    assert.equal(sent.code, 0, sent.stdout + sent.stderr);
  } finally {
    child.kill();
  }
  const r = await checkReceiver('linear', python('linear', 'reads-fields'), { only: 'valid,related' });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
});
