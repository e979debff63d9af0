/**
 * Issue 53: false verdicts a new user met on a first day, each held to what the provider would say,
 * with a Python receiver wrong (or merely different) in exactly that way.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkReceiver, explain, named, python } from './helpers/verdicts.js';

test('a GitHub receiver that verifies only the legacy X-Hub-Signature (SHA-1), which GitHub still sends, passes check with a warning to move to SHA-256', async () => {
  const r = await checkReceiver('github', python('github', 'sha1-only'));
  // Every forgery it took carried no valid SHA-1 signature: as GitHub would judge it, it works.
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  assert.equal(r.ok, true);
  assert.deepEqual(named(r, 'warn'), ['legacy-signature'], explain(r));
  const warn = r.cases.find((c) => c.name === 'legacy-signature');
  assert.match(warn?.diagnosis ?? '', /X-Hub-Signature \(HMAC-SHA1\).*X-Hub-Signature-256/, explain(r));
  // The right receiver (SHA-256) passes the same case without a warning.
  const right = await checkReceiver('github', python('github'), { only: 'valid,wrong-secret,legacy-signature,missing-signature' });
  assert.deepEqual(named(right, 'warn'), [], explain(right));
  assert.deepEqual(named(right, 'fail'), [], explain(right));
});

test('oversized-body: a receiver with no body cap of its own (behind a proxy that holds it) passes with a warning, not a failure', async () => {
  const r = await checkReceiver('github', python('github', 'no-body-cap'), { only: 'valid,oversized-body' });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  assert.equal(r.ok, true);
  const c = r.cases.find((x) => x.name === 'oversized-body');
  assert.equal(c?.status, 'warn', explain(r));
  assert.match(c?.diagnosis ?? '', /GitHub sends at most 25 MB/, explain(r));
  assert.match(c?.diagnosis ?? '', /proxy/, explain(r));
});

test('a GitHub receiver keyed on X-GitHub-Hook-ID, not X-GitHub-Delivery, is a finding against it (exit 1), named so — not bad input', async () => {
  const r = await checkReceiver('github', python('github', 'hook-id-key'));
  assert.equal(r.ok, false);
  assert.deepEqual(named(r, 'fail'), ['valid'], explain(r));
  const valid = r.cases.find((c) => c.name === 'valid');
  assert.match(valid?.diagnosis ?? '', /stores deliveries under X-GitHub-Hook-ID/, explain(r));
  assert.match(valid?.diagnosis ?? '', /X-GitHub-Delivery/, explain(r));
  assert.match(valid?.diagnosis ?? '', /X-GitHub-Hook-ID is the same on distinct deliveries.*drop every other as a duplicate/, explain(r));
});

test('a receiver that answers 200 and stores the delivery after it is told so, not that it stores nothing', async () => {
  // The store lands half a second after the 200 (a slow insert of a large row, off the request's thread).
  const r = await checkReceiver('github', python('github', 'ack-first', '--store-after 0.5'), { only: 'valid,large-body' });
  assert.equal(r.ok, false);
  const failed = r.cases.filter((c) => c.status === 'fail');
  assert.ok(failed.length > 0, explain(r));
  for (const c of failed) {
    assert.match(c.diagnosis ?? '', /answered 2xx before storing/, explain(r));
    assert.doesNotMatch(c.diagnosis ?? '', /does not store/, explain(r));
  }
});
