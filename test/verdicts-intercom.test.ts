import { test } from 'node:test';
import assert from 'node:assert/strict';
import { run as send } from '../src/delivery/send.js';
import { reply, startServer } from './helpers/server.js';
import { verifyWithOfficialCode } from './helpers/official.js';
import { checkReceiver, explain, named, official, python, SECRET } from './helpers/verdicts.js';

/**
 * Intercom (issue 55): `X-Hub-Signature: sha1=<hex HMAC-SHA1 of the raw body>` with the app's client
 * secret, on the declaration engine's HMAC scheme. Intercom publishes no verifier: its documented
 * rule is the judge. A Python receiver right by it (the HMAC over the raw bytes, compared in
 * constant time, keyed on the notification id) passes; the wrongnesses Intercom's delivery invites
 * fail with their reasons: verifying the JSON written again (Intercom writes it with Jackson's
 * pretty printer, `" : "` and all, so every real notification is refused), and keeping one
 * notification per company (data.item.id), which drops the company.updated after a company.created.
 */

const status = (r: Awaited<ReturnType<typeof checkReceiver>>, name: string) => r.cases.find((c) => c.name === name);

test('Intercom: a receiver verifying X-Hub-Signature over the raw body and keyed on the notification id passes check', async () => {
  const r = await checkReceiver('intercom', python('intercom'));
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  for (const name of [
    'valid',
    'duplicate',
    'retry',
    'wrong-secret',
    'missing-signature',
    'flipped-byte',
    'reserialized',
    'related',
    'other-types',
  ])
    assert.equal(status(r, name)?.status, 'pass', `${name}: ${explain(r)}`);
});

test('Intercom: a receiver on the documented rule alone (official_library.mjs) passes check', async () => {
  const r = await checkReceiver('intercom', official('intercom'));
  assert.deepEqual(named(r, 'fail'), [], explain(r));
});

test('Intercom: a receiver that verifies the parsed JSON written again refuses every notification Intercom writes, and is told so', async () => {
  const r = await checkReceiver('intercom', python('intercom', 'reserialize-json'), { only: 'valid' });
  const valid = status(r, 'valid');
  assert.equal(valid?.status, 'fail', explain(r));
  assert.match(valid?.observed ?? '', /^400/);
  // Its strings are plain, so only the layout tells: compact JSON (sorted or not) taken, Jackson's refused.
  assert.match(valid?.observed ?? '', /took compact JSON/);
  assert.match(
    valid?.diagnosis ?? '',
    /only when the body is compact JSON — it verifies a re-serialised body.*Intercom pretty-prints its JSON/,
  );
});

test('Intercom: a receiver keeping one notification per company drops the company.updated after a company.created: related fails, told why', async () => {
  const r = await checkReceiver('intercom', python('intercom', 'dedupe-by-entity'), { only: 'valid,related' });
  assert.equal(status(r, 'valid')?.status, 'pass', explain(r));
  const related = status(r, 'related');
  assert.equal(related?.status, 'fail', explain(r));
  assert.match(related?.diagnosis ?? '', /keeps one delivery per data\.item\.id, not per delivery.*Dedupe on the notification id/);
});

test("Intercom: send's requests carry the documented example's headers in order, Jackson's layout, and hold by the documented rule", async () => {
  const server = await startServer((_req, res) => reply(res, 200));
  const seen = server.requests;
  try {
    const { port } = server;
    const secret = SECRET.intercom as string;
    const r = await send({
      url: `http://127.0.0.1:${port}/`,
      provider: 'intercom',
      secrets: [secret],
      fixtures: ['intercom/company.created', 'intercom/company.updated', 'intercom/ping'],
      noRetry: true,
    });
    assert.equal(r.ok, true, JSON.stringify(r.deliveries));
    assert.equal(seen.length, 3);
    for (const s of seen) {
      await verifyWithOfficialCode('intercom', s.rawBody, s.headers, secret);
      assert.deepEqual(
        s.names.filter((h) => !/^(host|connection|content-length)$/i.test(h)),
        ['User-Agent', 'X-Hub-Signature', 'Accept', 'Content-Type'],
      );
      assert.equal(s.headers['user-agent'], 'intercom-parrot-service-client/1.0');
      const text = s.rawBody.toString('utf8');
      assert.match(text, /^\{\n {2}"type" : "notification_event",\n {2}"app_id" : /);
      assert.match(text, /\n {2}"links" : \{ \},\n/);
    }
    const ids = r.deliveries.map((d) => d.deliveryId);
    assert.match(ids[0] ?? '', /^notif_[0-9a-f-]{36}$/);
    // A ping's id is null: it is keyed on its body's hash.
    assert.match(ids[2] ?? '', /^[0-9a-f]{64}$/);
  } finally {
    await server.close();
  }
});
