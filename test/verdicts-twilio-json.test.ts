import { test } from 'node:test';
import assert from 'node:assert/strict';
import twilioLib from 'twilio';
import { run as send } from '../src/delivery/send.js';
import { reply, startServer } from './helpers/server.js';
import { checkReceiver, explain, named, official, python, SECRET } from './helpers/verdicts.js';
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { hookdrill } from './helpers/cli.js';
import { startListenFor, stopAll } from './helpers/listen.js';
import { freePort } from './helpers/ports.js';
import { tempDir } from './helpers/tmp.js';
import { until } from './helpers/until.js';

/**
 * Twilio's JSON webhooks (issue 55's "JSON bodies verified without bodySHA256"): Event Streams posts
 * a JSON array of CloudEvents, signed as twilio's validateRequestWithBody checks it — X-Twilio-Signature
 * over the URL with bodySHA256=<hex SHA-256 of the body> in its query and no parameters. The signature
 * binds the URL, and only the hash binds the body: a receiver that checks the signature and never
 * hashes the body takes any body sent under a captured URL and signature. check's json-body-hash
 * sends one valid delivery, then one whose body was changed after signing, and judges both.
 */

const status = (r: Awaited<ReturnType<typeof checkReceiver>>, name: string) => r.cases.find((c) => c.name === name);
const PUBLIC = 'https://events.example.com/twilio/sink';
// The cases a JSON delivery meets (verdicts-right runs each receiver's whole battery already).
const JSON_CASES = 'valid,duplicate,wrong-secret,missing-signature,malformed-signature,flipped-byte,reserialized,json-body-hash';

test('Twilio JSON: a right Python receiver (bodySHA256 compared with the body) passes json-body-hash and the cases a JSON delivery meets', async () => {
  const r = await checkReceiver('twilio', python('twilio'), { only: JSON_CASES });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  assert.deepEqual(named(r, 'warn'), [], explain(r));
  const c = status(r, 'json-body-hash');
  assert.equal(c?.status, 'pass', explain(r));
  assert.match(c?.observed ?? '', /valid: 2\d\d.*changed after signing.*: 4\d\d/, explain(r));
});

test("Twilio JSON: a receiver on twilio's own validateRequestWithBody passes, behind a proxy too (--public-url)", async () => {
  const direct = await checkReceiver('twilio', official('twilio'), { only: JSON_CASES });
  assert.deepEqual(named(direct, 'fail'), [], explain(direct));
  assert.equal(status(direct, 'json-body-hash')?.status, 'pass', explain(direct));
  const proxied = await checkReceiver('twilio', official('twilio', { PUBLIC_URL: PUBLIC }), { publicUrl: PUBLIC, only: JSON_CASES });
  assert.deepEqual(named(proxied, 'fail'), [], explain(proxied));
  assert.equal(status(proxied, 'json-body-hash')?.status, 'pass', explain(proxied));
  // The Python receiver rebuilds its URL from X-Forwarded-Proto and -Host and the path it was posted at, query included.
  const pythonProxied = await checkReceiver('twilio', python('twilio'), {
    publicUrl: 'https://events.example.com/',
    only: 'valid,json-body-hash',
  });
  assert.equal(status(pythonProxied, 'json-body-hash')?.status, 'pass', explain(pythonProxied));
});

test('Twilio JSON: a receiver that checks the signature over the URL but never hashes the body fails json-body-hash, told of bodySHA256 and validateRequestWithBody', async () => {
  const r = await checkReceiver('twilio', python('twilio', 'json-no-bodysha'), { only: JSON_CASES });
  assert.deepEqual(named(r, 'fail'), ['json-body-hash'], explain(r));
  const c = status(r, 'json-body-hash');
  assert.match(c?.observed ?? '', /valid: 2\d\d.*changed after signing.*: 2\d\d/, explain(r));
  assert.match(
    c?.diagnosis ?? '',
    /accepts a JSON delivery whose body is not the one signed — its SHA-256 is not the URL's bodySHA256.*never hashes the body.*twilio's validateRequestWithBody/,
    explain(r),
  );
});

test("Twilio JSON: send's Event Streams deliveries verify with twilio's validateRequestWithBody over the URL posted to (bodySHA256 added) or --public-url", async () => {
  const server = await startServer((_req, res) => reply(res, 200));
  const seen = server.requests;
  try {
    const { port } = server;
    const url = `http://127.0.0.1:${port}/sink?tenant=a%20b`;
    const fixtures = [
      'twilio/stream.message.sent',
      'twilio/stream.message.delivered',
      'twilio/stream.message.failed',
      'twilio/stream.test-event',
    ];
    await send({ url, provider: 'twilio', secrets: [SECRET.twilio as string], fixtures, noRetry: true });
    await send({ url, provider: 'twilio', secrets: [SECRET.twilio as string], fixtures, noRetry: true, publicUrl: PUBLIC });
    assert.equal(seen.length, 8);
    const ids = new Set<string>();
    for (const [i, s] of seen.entries()) {
      const body = s.rawBody.toString('utf8');
      const hash = twilioLib.getExpectedBodyHash(body);
      // The receiver's URL as given, bodySHA256 added to its query.
      assert.equal(s.path, `/sink?tenant=a%20b&bodySHA256=${hash}`, `request ${i}`);
      // Signed over the URL the sink was given: the one posted to, or --public-url (its own query), bodySHA256 added.
      const signedOver = i < 4 ? `http://127.0.0.1:${port}/sink?tenant=a%20b&bodySHA256=${hash}` : `${PUBLIC}?bodySHA256=${hash}`;
      const signature = String(s.headers['x-twilio-signature']);
      assert.equal(twilioLib.validateRequestWithBody(SECRET.twilio as string, signature, signedOver, body), true, `request ${i}`);
      // The body is bound only through the hash: the same URL and signature with another body is refused.
      const changed = body.replace('"specversion":"1.0"', '"specversion":"1.1"');
      assert.equal(twilioLib.validateRequestWithBody(SECRET.twilio as string, signature, signedOver, changed), false);
      assert.equal(s.headers['content-type'], 'application/json');
      assert.equal(s.headers['x-hookdrill-signed-query'], undefined, 'the carrier never leaves');
      const events = JSON.parse(body) as { specversion: string; type: string; id: string; data: Record<string, unknown> }[];
      assert.equal(events.length, 1);
      const [event] = events as [(typeof events)[0]];
      assert.equal(event.specversion, '1.0');
      assert.match(event.type, /^com\.twilio\.(messaging\.message\.(sent|delivered|failed)|eventstreams\.test-event)$/);
      assert.match(event.id, /^(EZ|AC)[0-9a-f]{32}$/);
      ids.add(event.id);
    }
    // Each send a new event: its id (Event Streams' dedupe key) made new.
    assert.equal(ids.size, 8);
  } finally {
    await server.close();
  }
});

test("Twilio JSON: fixtures show writes the bodySHA256 send adds as the query, and no header of hookdrill's own", async () => {
  const shown = await hookdrill(['fixtures', 'show', 'twilio/stream.message.delivered']);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /^POST <your URL>\?bodySHA256=[0-9a-f]{64} {2}\(added to its query, signed with it\)$/m);
  assert.match(shown.stdout, /^Content-Type: application\/json$/m);
  assert.doesNotMatch(shown.stdout, /X-Hookdrill/i);
  const form = await hookdrill(['fixtures', 'show', 'twilio/message.delivered']);
  assert.doesNotMatch(form.stdout, /bodySHA256/);
});

test("Twilio JSON through listen: behind --public-url an Event Streams delivery is taken (Twilio adds bodySHA256 to the URL it was given), and its forward carries the target's own bodySHA256, so a Python app verifying as twilio does stores it", async () => {
  const secret = SECRET.twilio as string;
  const appPort = await freePort();
  const app = python('twilio');
  const child = spawn('sh', ['-c', app.command], { env: { ...process.env, PORT: String(appPort) }, stdio: 'ignore' });
  const stored = () => execFileSync('sh', ['-c', app.stored], { encoding: 'utf8' }).split('\n').filter(Boolean);
  const { p, url } = await startListenFor(
    'twilio',
    join(tempDir(), 'inbox.db'),
    secret,
    '--public-url',
    PUBLIC,
    '--forward-to',
    `http://127.0.0.1:${appPort}/app`,
  );
  try {
    const sent = await send({
      url,
      publicUrl: PUBLIC,
      provider: 'twilio',
      secrets: [secret],
      fixtures: ['twilio/stream.message.delivered'],
      noRetry: true,
    });
    // Refused (401) before: listen verified over --public-url without the bodySHA256 Twilio added.
    assert.equal(sent.ok, true, JSON.stringify(sent.deliveries));
    const id = sent.deliveries[0]?.deliveryId;
    // Forwarded to /app without a bodySHA256 before: the app refused every attempt.
    await until(() => stored().length === 1, 'the forward stored at the app', 30_000);
    assert.deepEqual(stored(), [id]);
  } finally {
    await stopAll(p);
    child.kill('SIGKILL');
  }
});
