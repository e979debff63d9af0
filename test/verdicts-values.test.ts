import { test } from 'node:test';
import assert from 'node:assert/strict';
import { hookdrill } from './helpers/cli.js';
import { SECRET, checkReceiver, explain, named, python, startPython } from './helpers/verdicts.js';

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
  const receiver = await startPython('linear', { flaw: 'reads-fields' });
  try {
    const sent = await hookdrill(['send', 'linear/Issue.update', '--url', receiver.url, '--secret', SECRET.linear as string, '--no-retry']);
    assert.equal(sent.code, 0, sent.stdout + sent.stderr);
  } finally {
    receiver.stop();
  }
  const r = await checkReceiver('linear', python('linear', 'reads-fields'), { only: 'valid,related' });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
});
