import { test } from 'node:test';
import assert from 'node:assert/strict';
import { run as send } from '../src/delivery/send.js';
import { reply, startServer } from './helpers/server.js';
import { SECRET, checkReceiver, explain, named, python, startPython } from './helpers/verdicts.js';

/**
 * Mailgun (issue 55): a sender whose signature is in the body — `signature: {timestamp, token,
 * signature}`, the hex HMAC-SHA256 of timestamp + token — judged by `check` on the declaration
 * engine's body scheme. A Python receiver right by Mailgun's documented check passes the whole
 * battery; what the signature does not cover (the rest of the body) and what its docs leave
 * optional (a window on the timestamp) is skipped and said. Receivers wrong in the ways the scheme
 * invites fail with the reason: a Stripe-like 5-minute window refuses Mailgun's own retries (they
 * carry the first attempt's signature), and an HMAC over the whole body verifies nothing.
 */

const status = (r: Awaited<ReturnType<typeof checkReceiver>>, name: string) => r.cases.find((c) => c.name === name);

test("Mailgun: a receiver checking the body's signature as Mailgun's docs do, keyed on event-data.id, passes check; what the signature does not cover is skipped and said", async () => {
  const r = await checkReceiver('mailgun', python('mailgun'));
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  assert.deepEqual(named(r, 'warn'), [], explain(r));
  for (const name of [
    'valid',
    'duplicate',
    'wrong-secret',
    'missing-signature',
    'malformed-signature',
    'wrong-length-signature',
    'late-retry',
    'related',
  ])
    assert.equal(status(r, name)?.status, 'pass', `${name}: ${explain(r)}`);
  for (const name of ['flipped-byte', 'reserialized']) {
    assert.equal(status(r, name)?.status, 'skipped', name);
    assert.match(
      status(r, name)?.observed ?? '',
      /signature covers signature\.timestamp and signature\.token, not the rest of the body.*rightly accepts a body changed in transit/,
      name,
    );
  }
  for (const name of ['stale-timestamp', 'future-timestamp']) {
    assert.equal(status(r, name)?.status, 'skipped', name);
    assert.match(status(r, name)?.observed ?? '', /retries carry their first attempt's signature, timestamp and all/, name);
  }
});

test("Mailgun: a receiver that refuses a signature.timestamp over 5 minutes old fails late-retry: Mailgun's retries carry the first attempt's signature", async () => {
  const r = await checkReceiver('mailgun', python('mailgun', 'mailgun-window-5m'), { only: 'valid,wrong-secret,late-retry' });
  assert.equal(status(r, 'valid')?.status, 'pass', explain(r));
  const late = status(r, 'late-retry');
  assert.equal(late?.status, 'fail', explain(r));
  assert.match(late?.observed ?? '', /^406 .*to a retry whose event is 7h30m old/);
  assert.match(
    late?.diagnosis ?? '',
    /refuses a retry whose signature is 7h30m old.*carries the first attempt's signature, timestamp and token unchanged/,
  );
});

test('Mailgun: a receiver that computes the HMAC over the whole body (as most providers sign) refuses every delivery', async () => {
  const r = await checkReceiver('mailgun', python('mailgun', 'mailgun-hmac-body'), { only: 'valid' });
  const valid = status(r, 'valid');
  assert.equal(valid?.status, 'fail', explain(r));
  assert.match(valid?.observed ?? '', /^406/);
  assert.match(
    valid?.diagnosis ?? '',
    /signature is in the body \(signature\.signature\), an HMAC of signature\.timestamp and signature\.token.*never over the body/,
  );
});

test('Mailgun takes 200 alone: a receiver that stores and answers 204 is warned that every delivery comes again, and send retries a 204 as Mailgun does', async () => {
  const r = await checkReceiver('mailgun', python('mailgun', 'answer-204'), { only: 'valid' });
  const valid = status(r, 'valid');
  assert.equal(valid?.status, 'warn', explain(r));
  assert.match(
    valid?.diagnosis ?? '',
    /answers 204; Mailgun takes 200 alone as success and retries any other answer.*comes again, for 7h30m — answer 200/,
  );

  // The first answer a 204, the retry's a 200.
  const server = await startServer((_req, res, n) => reply(res, n === 1 ? 204 : 200));
  try {
    const sent = await send({
      url: server.url,
      provider: 'mailgun',
      secrets: [SECRET.mailgun as string],
      fixtures: ['mailgun/opened'],
      retryDelays: [0],
    });
    assert.equal(sent.ok, true, JSON.stringify(sent.deliveries));
    const bodies = server.requests.map((r) => r.rawBody);
    assert.equal(bodies.length, 2, 'the 204 was retried');
    assert.ok(bodies[1]?.equals(bodies[0] as Buffer), 'the retry carries the first body, signature and all');
  } finally {
    await server.close();
  }
});

test('Mailgun never re-sends a delivered notification: send gives up on one after its first failure, and retries an opened one', async () => {
  // "Mailgun will retry … other than for delivery notification" (its webhook-retries page): a
  // receiver whose store is down loses a delivered event for good, and send shows it as Mailgun would.
  const receiver = await startPython('mailgun', { flaw: 'store-down' });
  try {
    const sent = await send({
      url: receiver.url,
      provider: 'mailgun',
      secrets: [SECRET.mailgun as string],
      fixtures: ['mailgun/delivered', 'mailgun/opened'],
      retryDelays: [0, 0],
    });
    const attempts = Object.fromEntries(sent.deliveries.map((d) => [d.eventType, d.attempts.map((a) => a.status)]));
    assert.deepEqual(attempts.delivered, [503], 'a delivered notification is sent once');
    assert.deepEqual(attempts.opened, [503, 503, 503], 'an opened one is retried on the schedule');
  } finally {
    receiver.stop();
  }
});
