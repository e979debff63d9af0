import { test } from 'node:test';
import assert from 'node:assert/strict';
import { run as chaos } from '../src/chaos/run.js';
import { checkReceiver, explain, named, official, python, SECRET } from './helpers/verdicts.js';
import { freePort } from './helpers/ports.js';

/**
 * PayPal as a built-in provider (issue 55), on the certificate scheme: SHA256withRSA over
 * `<PAYPAL-TRANSMISSION-ID>|<PAYPAL-TRANSMISSION-TIME>|<webhook id>|<CRC-32 of the raw body>`, the
 * certificate at PAYPAL-CERT-URL, served by check on HOOKDRILL_CERT_HOST. Receivers not written in
 * TypeScript: test/receivers/paypal_scheme.py (through webhook_receiver.py, `cryptography`),
 * right or wrong in exactly one way, and official_library.mjs on PayPal's documented offline check
 * (its Node SDK is deprecated). Each trusts the host through the certificate file hookdrill writes.
 */

const status = (r: Awaited<ReturnType<typeof checkReceiver>>, name: string) => r.cases.find((c) => c.name === name);

test("PayPal: a Python receiver right by PayPal's docs passes check — the certificate from the pinned host only, the CRC-32 of the raw bytes, keyed on the event id", async () => {
  const r = await checkReceiver('paypal', python('paypal'));
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  for (const name of [
    'valid',
    'duplicate',
    'retry',
    'reserialized',
    'forged-certificate',
    'wrong-secret',
    'flipped-byte',
    'missing-signature',
  ])
    assert.equal(status(r, name)?.status, 'pass', `${name}: ${explain(r)}`);
});

test("PayPal: a plain-Node receiver on PayPal's documented offline check passes check", async () => {
  const r = await checkReceiver('paypal', official('paypal'));
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  for (const name of ['valid', 'duplicate', 'retry', 'forged-certificate', 'wrong-secret', 'flipped-byte'])
    assert.equal(status(r, name)?.status, 'pass', `${name}: ${explain(r)}`);
});

test('PayPal: a receiver that fetches the certificate from any https host takes a forgery signed by that host and fails forged-certificate', async () => {
  const r = await checkReceiver('paypal', python('paypal', 'paypal-any-cert-host'), { only: 'valid,wrong-secret,forged-certificate' });
  assert.equal(status(r, 'valid')?.status, 'pass', explain(r));
  assert.equal(status(r, 'wrong-secret')?.status, 'pass', explain(r));
  const forged = status(r, 'forged-certificate');
  assert.equal(forged?.status, 'fail', explain(r));
  assert.match(
    forged?.diagnosis ?? '',
    /fetched the signing certificate from https:\/\/localhost:\d+\/v1\/notifications\/certs\/CERT-[0-9a-f]{24}.*accept the certificate URL only as https on PayPal's own host/,
  );
});

test('PayPal: a receiver that computes the CRC-32 over the body written again (json.dumps), not the bytes that came, fails valid', async () => {
  const r = await checkReceiver('paypal', python('paypal', 'paypal-crc-reserialized'), { only: 'valid' });
  const valid = status(r, 'valid');
  assert.equal(valid?.status, 'fail', explain(r));
  assert.match(valid?.observed ?? '', /it took Python's json\.dumps layout/);
  assert.match(valid?.diagnosis ?? '', /verify the raw bytes as they arrived/);
});

test('PayPal: a receiver keyed on PAYPAL-TRANSMISSION-ID (new for every attempt: a resend of one event stored again) fails valid, and its duplicates are not passed', async () => {
  const r = await checkReceiver('paypal', python('paypal', 'paypal-transmission-key'), { only: 'valid,duplicate,retry' });
  const valid = status(r, 'valid');
  assert.equal(valid?.status, 'fail', explain(r));
  assert.match(valid?.observed ?? '', /stored under PAYPAL-TRANSMISSION-ID/);
  assert.match(valid?.diagnosis ?? '', /stores deliveries under PAYPAL-TRANSMISSION-ID .* key the store on the delivery id/);
  for (const name of ['duplicate', 'retry']) assert.notEqual(status(r, name)?.status, 'pass', `${name}: ${explain(r)}`);
});

test('PayPal under chaos: the certificate host is served while the rounds run, and a right Python receiver killed after its 2xx loses nothing and stores nothing twice', async () => {
  const r = python('paypal');
  const port = await freePort();
  const result = await chaos({
    receiver: r.command,
    stored: r.stored,
    url: `http://127.0.0.1:${port}/`,
    provider: 'paypal',
    secrets: [SECRET.paypal as string],
    rounds: 2,
  });
  assert.equal(result.ok, true, result.problems.join('\n'));
  assert.equal(result.totals.lost.length, 0);
  assert.equal(result.totals.storedTwice.length, 0);
});
