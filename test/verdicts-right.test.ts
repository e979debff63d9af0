import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkReceiver, explain, named, official, python } from './helpers/verdicts.js';
import { pythonLibMissing } from './helpers/python.js';
import { providerNames } from '../src/providers/index.js';

// Right receivers must pass: a false fail is as bad a verdict as a false pass.

for (const provider of providerNames) {
  test(`a ${provider} receiver on the provider's official library passes check`, async () => {
    const r = await checkReceiver(provider, official(provider));
    assert.deepEqual(named(r, 'fail'), [], explain(r));
    assert.equal(r.ok, true);
    // Slack's bolt accepts a timestamp from the future; Slack's docs refuse it: a warning, never a fail.
    assert.deepEqual(named(r, 'warn'), provider === 'slack' ? ['future-timestamp'] : [], explain(r));
  });
}

// The svix one reads only Svix's default names (svix-id, -timestamp, -signature), as receivers
// of Resend and Clerk do: it refused every delivery while hookdrill sent the webhook-* names alone.
for (const provider of providerNames) {
  test(`a right ${provider} receiver in Python passes check`, { skip: pythonLibMissing(provider) }, async () => {
    const r = await checkReceiver(provider, python(provider));
    assert.deepEqual(named(r, 'fail'), [], explain(r));
    // No warning either: its 413 on Content-Length, then a close, is heard before the reset.
    assert.deepEqual(named(r, 'warn'), [], explain(r));
    assert.equal(r.ok, true);
  });
}

// Behind a proxy: Square signs the URL it posts to (https://…), the receiver is reached at another
// (http://127.0.0.1:…). One that verifies over its configured public URL passes; so does one that
// rebuilds it from the proxy's X-Forwarded-Proto and -Host (where the proxy keeps the path).
for (const provider of ['square', 'hubspot']) {
  test(`a ${provider} receiver behind a proxy passes check --public-url, whether it is told the public URL or rebuilds it from X-Forwarded-*`, async () => {
    const configured = 'https://shop.example.com/square/hooks';
    for (const [r, publicUrl] of [
      [python(provider, '', `--public-url ${configured}`), configured],
      [official(provider, { PUBLIC_URL: configured }), configured],
      [python(provider), 'https://shop.example.com/'],
    ] as const) {
      const result = await checkReceiver(provider, r, { publicUrl });
      assert.deepEqual(named(result, 'fail'), [], explain(result));
    }
  });
}

test('oversized-body is the same verdict on every run: a receiver that answers 413 from Content-Length and closes passes 4 of 4', async () => {
  for (let i = 0; i < 4; i++) {
    const r = await checkReceiver('github', python('github'), { only: 'valid,oversized-body' });
    const c = r.cases.find((x) => x.name === 'oversized-body');
    assert.equal(c?.status, 'pass', `run ${i + 1}: ${explain(r)}`);
    assert.match(c?.observed ?? '', /^413 to \d+ bytes, then 200 to a valid delivery$/);
  }
});

test("a Stripe receiver whose tolerance is one-sided, as stripe-node's and stripe-python's are, passes future-timestamp with a note", async () => {
  const r = await checkReceiver('stripe', python('stripe'));
  const future = r.cases.find((c) => c.name === 'future-timestamp');
  assert.equal(future?.status, 'pass');
  assert.match(future?.observed ?? '', /^200: accepted, as stripe's webhooks\.constructEvent does \(its tolerance is one-sided\)/);
});

test('a Shopify receiver keyed on X-Shopify-Event-Id, as Shopify says to dedupe, passes as one keyed on X-Shopify-Webhook-Id does', async () => {
  // The two ids differ, as Shopify's do: check counts a delivery held under either as held.
  const receiver = python('shopify');
  const r = await checkReceiver('shopify', { ...receiver, command: `SHOPIFY_KEY=event ${receiver.command}` });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
});

test('check --content-type form: a GitHub receiver behind a form hook (payload=<the JSON>) that verifies the raw bytes passes; one that parses JSON first fails every valid delivery', async () => {
  const r = await checkReceiver('github', python('github'), { contentType: 'form' });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  assert.equal(r.cases.find((c) => c.name === 'multibyte-body')?.status, 'skipped');
  // A receiver that takes the body for JSON refuses what a form hook sends.
  const wrong = await checkReceiver('github', python('github', 'json-only'), { contentType: 'form', only: 'valid' });
  assert.deepEqual(named(wrong, 'fail'), ['valid']);
});

test('a Slack receiver that compresses its answers, as Slack asks (Accept-Encoding: gzip,deflate), passes url-verification: the challenge is read decoded', async () => {
  const receiver = python('slack');
  const r = await checkReceiver('slack', { ...receiver, command: `GZIP_ANSWERS=1 ${receiver.command}` });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  assert.match(r.cases.find((c) => c.name === 'url-verification')?.observed ?? '', /the challenge echoed/);
});

test("check holds a slow receiver to the provider's timeout, not a stricter one: a Stripe receiver answering in 5.5 s (Stripe waits 20 s) passes valid", async () => {
  // check cut every attempt at 5 s: a false FAIL for a receiver Stripe accepts.
  const r = await checkReceiver('stripe', python('stripe', '', '--answer-after 5.5'), { only: 'valid' });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  assert.equal(r.cases.find((c) => c.name === 'valid')?.status, 'pass');
});
