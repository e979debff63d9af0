import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SECRET, checkReceiver, explain, named, official, python } from './helpers/verdicts.js';

/** Every case that sends a valid delivery signed as the provider signs it: a receiver that refuses all of them fails these. */
const VALID_DELIVERY_CASES = [
  'valid',
  'duplicate',
  'retry',
  'concurrent-duplicates',
  'rotation',
  'other-schemes',
  'large-body',
  'multibyte-body',
  'other-types',
  'oversized-body',
  'latency',
  'slow-client',
];

/** Each receiver wrong in exactly one way fails exactly the cases that name its defect. */
const rows: { provider: string; flaw: string; fails: string[]; says: RegExp }[] = [
  {
    // Stripe's test-mode deliveries carry a v0= entry: a parser of exactly t=…,v1=… refuses every one.
    provider: 'stripe',
    flaw: 'strict-stripe-header',
    fails: VALID_DELIVERY_CASES,
    says: /holds two v1= entries and its own is in either place — Stripe sends two while a secret is being rolled/,
  },
  {
    // stripe-java#1151: lines joined without their line ends; Stripe's bodies are pretty-printed.
    provider: 'stripe',
    flaw: 'join-lines',
    fails: VALID_DELIVERY_CASES,
    says: /your receiver refuses a valid delivery signed as Stripe signs it: is the secret right, and is the signature checked over the raw bytes\?/,
  },
  {
    // octokit/webhooks.js#71: GitHub writes a control character as \u001B, a re-serialiser as
    // \u001b. Every push's head commit carries one (a terminal's colour codes), as real ones can.
    provider: 'github',
    flaw: 'reserialize-json',
    fails: VALID_DELIVERY_CASES.filter((c) => c !== 'rotation' && c !== 'other-schemes'),
    says: /your receiver refuses a valid delivery signed as GitHub signs it: is the secret right, and is the signature checked over the raw bytes\?/,
  },
  ...(['github', 'stripe', 'slack', 'svix', 'shopify'] as const).map((provider) => ({
    provider,
    flaw: 'decode-chunks',
    fails: ['multibyte-body'],
    says: /arrive split across two reads — it turns each chunk into text before joining them \(`body \+= chunk`\)/,
  })),
  {
    provider: 'stripe',
    flaw: 'first-v1-only',
    fails: ['rotation'],
    says: /its own is the second — Stripe sends two while a secret is being rolled/,
  },
  { provider: 'github', flaw: 'limit-64k', fails: ['large-body'], says: /refuses a valid 4\.0 MiB delivery — GitHub sends up to 25 MB/ },
  { provider: 'stripe', flaw: 'limit-64k', fails: ['large-body'], says: /refuses a valid 4\.0 MiB delivery/ },
  {
    provider: 'stripe',
    flaw: 'refuse-unknown-types',
    fails: ['other-types'],
    says: /types it has no handler for — Stripe retries each one/,
  },
  {
    provider: 'github',
    flaw: 'refuse-unknown-types',
    fails: ['other-types'],
    says: /types it has no handler for — GitHub records each as a failed delivery/,
  },
  { provider: 'slack', flaw: 'no-challenge', fails: ['url-verification'], says: /Slack will not enable the endpoint/ },
  { provider: 'slack', flaw: 'parse-form-first', fails: ['form-encoded'], says: /verify the raw form bytes before parsing them/ },
  { provider: 'slack', flaw: 'ignore-retries', fails: ['first-seen-retry'], says: /answers 2xx to a retry it has never seen and drops it/ },
  {
    provider: 'stripe',
    flaw: 'duplicate-500',
    fails: ['duplicate', 'retry', 'concurrent-duplicates'],
    says: /your receiver refuses a copy of a delivery it already holds/,
  },
  { provider: 'stripe', flaw: 'accepts-stale', fails: ['stale-timestamp'], says: /accepts a signature 6 minutes old/ },
  { provider: 'standard', flaw: 'accepts-stale', fails: ['stale-timestamp', 'future-timestamp'], says: /refuses it \("too new"\)/ },
];

for (const row of rows) {
  test(`a ${row.provider} receiver in Python with the flaw ${row.flaw} fails ${row.fails.join(' and ')}, named as a developer fixes it`, async () => {
    const r = await checkReceiver(row.provider, python(row.provider, row.flaw));
    assert.deepEqual(named(r, 'fail'), row.fails, explain(r));
    assert.equal(r.ok, false);
    const diagnoses = r.cases.filter((c) => c.status === 'fail').map((c) => c.diagnosis ?? '');
    assert.ok(
      diagnoses.some((d) => row.says.test(d)),
      diagnoses.join('\n'),
    );
  });
}

test('rotation: with two secrets given, every signature is shortened in wrong-length-signature (a right receiver knows only the first)', async () => {
  // The user passes the endpoint's two live secrets; the receiver holds the new one only.
  const r = await checkReceiver('stripe', official('stripe'), {
    secrets: [SECRET.stripe as string, 'whsec_the_old_one'],
    only: 'valid,wrong-length-signature,rotation',
  });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
});
