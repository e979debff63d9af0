import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkReceiver, explain, named, python } from './helpers/verdicts.js';
import { pythonLibMissing } from './helpers/python.js';

/**
 * Issue 51: each provider judged as it delivers (its contract, providers/contract.ts), by Python
 * receivers right or wrong in exactly one way. Each failed on the old code: it judged every
 * provider as if it sent one event a request, re-sent everything, and sent its checks only signed.
 */

for (const provider of ['line', 'sendgrid', 'hubspot']) {
  test(`${provider} batches events: a receiver that stores each passes batch, one that keeps the first fails it, named so`, {
    skip: pythonLibMissing(provider),
  }, async () => {
    const right = await checkReceiver(provider, python(provider), { only: 'valid,batch' });
    assert.deepEqual(named(right, 'fail'), [], explain(right));
    assert.equal(right.cases.find((c) => c.name === 'batch')?.status, 'pass', explain(right));
    const wrong = await checkReceiver(provider, python(provider, 'first-event-only'), { only: 'valid,batch' });
    assert.deepEqual(named(wrong, 'fail'), ['batch'], explain(wrong));
    assert.match(
      wrong.cases.find((c) => c.name === 'batch')?.diagnosis ?? '',
      /keeps only the first event of a batch and drops the other 2/,
    );
  });
}

test("LINE's Verify (a signed body with no events) must get 200: a receiver that refuses it fails empty-batch", async () => {
  const right = await checkReceiver('line', python('line'), { only: 'valid,empty-batch,forged-check' });
  assert.deepEqual(named(right, 'fail'), [], explain(right));
  assert.equal(right.cases.find((c) => c.name === 'empty-batch')?.status, 'pass');
  const wrong = await checkReceiver('line', python('line', 'refuse-empty'), { only: 'valid,empty-batch' });
  assert.deepEqual(named(wrong, 'fail'), ['empty-batch'], explain(wrong));
  assert.match(wrong.cases.find((c) => c.name === 'empty-batch')?.diagnosis ?? '', /Verify/);
});

test('Zoom: a receiver that answers url_validation before verifying it is a signing oracle, shown with the forged event it then accepts', async () => {
  const right = await checkReceiver('zoom', python('zoom'), { only: 'valid,url-verification,forged-check' });
  assert.deepEqual(named(right, 'fail'), [], explain(right));
  assert.equal(right.cases.find((c) => c.name === 'forged-check')?.status, 'pass');
  const wrong = await checkReceiver('zoom', python('zoom', 'challenge-unverified'), { only: 'valid,url-verification,forged-check' });
  assert.deepEqual(named(wrong, 'fail'), ['forged-check'], explain(wrong));
  assert.match(
    wrong.cases.find((c) => c.name === 'forged-check')?.diagnosis ?? '',
    /anyone can have it sign their own data .*the forged event posted with it got 200/,
  );
});

test("Slack: a receiver that echoes url_verification's challenge unverified is warned (it gives nothing away), never passed silently", async () => {
  const wrong = await checkReceiver('slack', python('slack', 'challenge-unverified'), { only: 'valid,forged-check' });
  assert.deepEqual(named(wrong, 'fail'), [], explain(wrong));
  assert.deepEqual(named(wrong, 'warn'), ['forged-check'], explain(wrong));
});

test('Discord never sends an interaction twice: a receiver that bounds replays by the signed timestamp, with no dedupe table, passes', {
  skip: pythonLibMissing('discord'),
}, async () => {
  const r = await checkReceiver('discord', python('discord', 'no-dedupe'));
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  for (const name of ['duplicate', 'retry', 'concurrent-duplicates']) {
    const c = r.cases.find((x) => x.name === name);
    assert.equal(c?.status, 'skipped', name);
    assert.match(c?.observed ?? '', /Discord never sends a request twice/, name);
  }
});
