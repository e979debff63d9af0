import { test } from 'node:test';
import assert from 'node:assert/strict';
import twilioLib from 'twilio';
import { run as send } from '../src/delivery/send.js';
import { reply, startServer } from './helpers/server.js';
import { checkReceiver, explain, named, official, python, SECRET } from './helpers/verdicts.js';
import { hookdrill } from './helpers/cli.js';

/**
 * Twilio (issue 55): a sender that signs a canonical string — the URL it posts to, then every
 * POST parameter sorted by name as name + value — with HMAC-SHA1 and the auth token, and that
 * wants TwiML back from an incoming message or call. Judged by `check` on the declaration
 * engine's canonical scheme. A Python receiver right by twilio-python's RequestValidator passes;
 * one wrong in the ways the scheme invites fails with the reason: the URL rebuilt behind a proxy,
 * the parameters signed in the order they came, an answer that is not TwiML.
 */

const status = (r: Awaited<ReturnType<typeof checkReceiver>>, name: string) => r.cases.find((c) => c.name === name);
const PUBLIC = 'https://sms.example.com/twilio/incoming';

test('Twilio: a right Python receiver (sorted parameters, the public URL, keyed on I-Twilio-Idempotency-Token, TwiML answered) passes check', async () => {
  const r = await checkReceiver('twilio', python('twilio'));
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  assert.deepEqual(named(r, 'warn'), [], explain(r));
  for (const name of ['valid', 'duplicate', 'wrong-secret', 'flipped-byte', 'answer'])
    assert.equal(status(r, name)?.status, 'pass', `${name}: ${explain(r)}`);
  assert.match(status(r, 'answer')?.observed ?? '', /<Response>/);
});

test("Twilio: a receiver on twilio's own validateRequest passes check, behind a proxy too (--public-url)", async () => {
  const direct = await checkReceiver('twilio', official('twilio'));
  assert.deepEqual(named(direct, 'fail'), [], explain(direct));
  const proxied = await checkReceiver('twilio', official('twilio', { PUBLIC_URL: PUBLIC }), { publicUrl: PUBLIC });
  assert.deepEqual(named(proxied, 'fail'), [], explain(proxied));
  const rebuilt = await checkReceiver('twilio', python('twilio'), { publicUrl: 'https://sms.example.com/' });
  assert.deepEqual(named(rebuilt, 'fail'), [], explain(rebuilt));
});

test('Twilio: a receiver behind a proxy that rebuilds its URL from Host fails valid, told which URL it verified over', async () => {
  const r = await checkReceiver('twilio', python('twilio', 'url-from-host'), { publicUrl: PUBLIC });
  assert.deepEqual(named(r, 'fail'), ['valid'], explain(r));
  const valid = status(r, 'valid');
  assert.match(
    valid?.diagnosis ?? '',
    /signed over http:\/\/127\.0\.0\.1:\d+\/, not over https:\/\/sms\.example\.com\/twilio\/incoming where Twilio posts/,
    explain(r),
  );
  assert.match(valid?.diagnosis ?? '', /X-Forwarded-Proto/);
});

test('Twilio: a receiver that signs the parameters in the order they came, not sorted, fails valid: told to sort them', async () => {
  const r = await checkReceiver('twilio', python('twilio', 'twilio-unsorted'));
  assert.deepEqual(named(r, 'fail'), ['valid'], explain(r));
  assert.match(
    status(r, 'valid')?.diagnosis ?? '',
    /accepts a valid delivery only when the form's parameters arrive sorted by name — it signs them in the order they came.*sort the names/,
    explain(r),
  );
});

test('Twilio: a receiver that answers an incoming message {"ok": true} as JSON fails answer with Twilio\'s error 12300', async () => {
  const r = await checkReceiver('twilio', python('twilio', 'answer-json-ok'), { only: 'valid,answer' });
  assert.equal(status(r, 'valid')?.status, 'pass', explain(r));
  const answer = status(r, 'answer');
  assert.equal(answer?.status, 'fail', explain(r));
  assert.match(answer?.diagnosis ?? '', /12300 Invalid Content-Type.*Fallback URL.*<Response\/> as text\/xml/, explain(r));
});

test("Twilio: send's requests verify with twilio's validateRequest, over the URL posted to or --public-url, and carry what Twilio sends", async () => {
  const server = await startServer((_req, res) => reply(res, 200));
  const seen = server.requests;
  try {
    const { port } = server;
    const url = `http://127.0.0.1:${port}/sms?tenant=a%20b`;
    const fixtures = ['twilio/message.received', 'twilio/message.delivered', 'twilio/call.ringing', 'twilio/call.completed'];
    await send({ url, provider: 'twilio', secrets: [SECRET.twilio as string], fixtures, noRetry: true });
    await send({ url, provider: 'twilio', secrets: [SECRET.twilio as string], fixtures, noRetry: true, publicUrl: PUBLIC });
    assert.equal(seen.length, 8);
    for (const [i, s] of seen.entries()) {
      const params = Object.fromEntries(new URLSearchParams(s.rawBody.toString('utf8')));
      const signedOver = i < 4 ? url : PUBLIC;
      const signature = String(s.headers['x-twilio-signature']);
      assert.equal(twilioLib.validateRequest(SECRET.twilio as string, signature, signedOver, params), true, `request ${i}`);
      // The body is what Twilio signs: a changed parameter no longer verifies.
      assert.equal(twilioLib.validateRequest(SECRET.twilio as string, signature, signedOver, { ...params, To: '+15005550006' }), false);
      assert.equal(s.headers['content-type'], 'application/x-www-form-urlencoded');
      assert.equal(s.headers['user-agent'], 'TwilioProxy/1.1');
      assert.equal(s.headers['x-home-region'], 'us1');
      assert.match(
        String(s.headers['i-twilio-idempotency-token']),
        /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
      );
      assert.match(params.MessageSid ?? params.CallSid ?? '', /^(SM|CA)[0-9a-f]{32}$/);
    }
    // Each send a new message: its SIDs made new, the three of a message alike.
    const first = Object.fromEntries(new URLSearchParams((seen[0] as { rawBody: Buffer }).rawBody.toString('utf8')));
    const again = Object.fromEntries(new URLSearchParams((seen[4] as { rawBody: Buffer }).rawBody.toString('utf8')));
    assert.notEqual(first.MessageSid, again.MessageSid);
    assert.equal(first.MessageSid, first.SmsSid);
    assert.equal(first.MessageSid, first.SmsMessageSid);
  } finally {
    await server.close();
  }
});

test('Twilio: profiles lists twilio; a blank auth token is one line, exit 2', async () => {
  const listed = await hookdrill(['profiles']);
  assert.match(listed.stdout, /^twilio \(default for twilio\)$/m);
  const blank = await hookdrill(['send', '--provider', 'twilio', '--url', 'http://127.0.0.1:9/', '--secret', ' ']);
  assert.equal(blank.code, 2, blank.stderr);
  assert.equal(blank.stderr.trim().split('\n').length, 1, blank.stderr);
});
