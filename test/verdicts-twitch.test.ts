import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { run as send } from '../src/delivery/send.js';
import { checkReceiver, explain, named, python, SECRET } from './helpers/verdicts.js';
import { verifyWithOfficialCode } from './helpers/official.js';
import { hookdrill } from './helpers/cli.js';
import { startListenFor, stopAll } from './helpers/listen.js';
import { tempDir } from './helpers/tmp.js';
import { join } from 'node:path';
import { providers } from '../src/providers/index.js';

/**
 * Twitch EventSub (issue 55): a challenge handshake judged by its answer. Before any event Twitch
 * posts a signed webhook_callback_verification and enables the subscription only when the answer is
 * the raw challenge (text/plain); replays are bounded by a 10-minute window and the Message-Id. A
 * Python receiver right by Twitch's docs passes; one that echoes the challenge as JSON, one that
 * answers 200 without it, and one that echoes it before verifying the request each fail the case
 * that names their defect; one that holds no window fails stale-timestamp, and the right one is not
 * failed by a signature 6 minutes old, inside Twitch's 10.
 */

const status = (r: Awaited<ReturnType<typeof checkReceiver>>, name: string) => r.cases.find((c) => c.name === name);

test("Twitch: a receiver right by Twitch's docs passes — the raw challenge echoed as text/plain, a 10-minute window, keyed on Message-Id", async () => {
  const r = await checkReceiver('twitch', python('twitch'), {
    only: 'valid,duplicate,wrong-secret,missing-signature,flipped-byte,stale-timestamp,future-timestamp,url-verification,forged-check,related,other-types',
  });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  assert.deepEqual(named(r, 'warn'), [], explain(r));
  for (const name of [
    'valid',
    'duplicate',
    'wrong-secret',
    'stale-timestamp',
    'future-timestamp',
    'url-verification',
    'forged-check',
    'related',
  ])
    assert.equal(status(r, name)?.status, 'pass', `${name}: ${explain(r)}`);
  assert.match(status(r, 'url-verification')?.observed ?? '', /the challenge echoed as the raw body/);
});

test('Twitch: a receiver that echoes the challenge as JSON fails url-verification: Twitch needs the raw value', async () => {
  const r = await checkReceiver('twitch', python('twitch', 'json-challenge'), { only: 'valid,url-verification' });
  assert.equal(status(r, 'valid')?.status, 'pass', explain(r));
  const c = status(r, 'url-verification');
  assert.equal(c?.status, 'fail', explain(r));
  assert.match(c?.observed ?? '', /application\/json/);
  assert.match(c?.diagnosis ?? '', /echoes webhook_callback_verification's challenge wrapped in JSON — Twitch needs the raw value alone/);
});

test("Twitch: a receiver that echoes the raw challenge chunked, with no Content-Length, is warned: Twitch's docs ask for one", async () => {
  const r = await checkReceiver('twitch', python('twitch', 'chunked-challenge'), { only: 'valid,url-verification' });
  const c = status(r, 'url-verification');
  assert.equal(c?.status, 'warn', explain(r));
  assert.match(c?.diagnosis ?? '', /with no Content-Length \(a chunked answer\) — Twitch's docs say to set Content-Length/);
});

test('Twitch: a receiver that answers the challenge request 200 without the challenge fails url-verification', async () => {
  const r = await checkReceiver('twitch', python('twitch', 'no-challenge'), { only: 'valid,url-verification' });
  const c = status(r, 'url-verification');
  assert.equal(c?.status, 'fail', explain(r));
  assert.match(c?.diagnosis ?? '', /answers webhook_callback_verification without its challenge/);
});

test('Twitch: a receiver that echoes the challenge before verifying the request fails forged-check, not a warning', async () => {
  const r = await checkReceiver('twitch', python('twitch', 'challenge-unverified'), { only: 'valid,url-verification,forged-check' });
  assert.equal(status(r, 'url-verification')?.status, 'pass', explain(r));
  const c = status(r, 'forged-check');
  assert.equal(c?.status, 'fail', explain(r));
  assert.match(c?.diagnosis ?? '', /without verifying it — anyone with a Twitch app can point a subscription at your URL/);
});

test("Twitch: a receiver that holds no window fails stale-timestamp, signed 11 minutes ago (a minute past Twitch's 10)", async () => {
  const r = await checkReceiver('twitch', python('twitch', 'accepts-stale'), { only: 'valid,wrong-secret,stale-timestamp' });
  const c = status(r, 'stale-timestamp');
  assert.equal(c?.status, 'fail', explain(r));
  assert.match(c?.diagnosis ?? '', /accepts a signature 11 minutes old.*older than 10 minutes/);
});

test("Twitch: send's requests carry Twitch's headers, verify by the docs' algorithm, and a retry keeps the Message-Id and counts Message-Retry", async () => {
  const seen: { headers: IncomingHttpHeaders; raw: string[]; body: Buffer }[] = [];
  let refuse = 1;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ headers: req.headers, raw: req.rawHeaders.filter((_, i) => i % 2 === 0), body: Buffer.concat(chunks) });
      res.statusCode = refuse-- > 0 ? 503 : 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const secret = SECRET.twitch as string;
    await send({
      url: `http://127.0.0.1:${port}/`,
      provider: 'twitch',
      secrets: [secret],
      fixtures: ['twitch/channel.follow'],
      timeScale: 0.001,
    });
    await send({
      url: `http://127.0.0.1:${port}/`,
      provider: 'twitch',
      secrets: [secret],
      fixtures: ['twitch/webhook_callback_verification', 'twitch/revocation'],
      noRetry: true,
    });
    assert.equal(seen.length, 4);
    const [first, retry, challenge, revocation] = seen as [(typeof seen)[0], (typeof seen)[0], (typeof seen)[0], (typeof seen)[0]];
    for (const s of seen) {
      await verifyWithOfficialCode('twitch', s.body, s.headers, secret);
      assert.deepEqual(
        s.raw.filter((h) => /^(content-type|user-agent|twitch-)/i.test(h)),
        [
          'User-Agent',
          'Content-Type',
          'Twitch-Eventsub-Message-Id',
          'Twitch-Eventsub-Message-Retry',
          'Twitch-Eventsub-Message-Signature',
          'Twitch-Eventsub-Message-Timestamp',
          'Twitch-Eventsub-Message-Type',
          'Twitch-Eventsub-Subscription-Type',
          'Twitch-Eventsub-Subscription-Version',
        ],
      );
      assert.match(String(s.headers['twitch-eventsub-message-timestamp']), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d+Z$/);
    }
    assert.equal(first.headers['twitch-eventsub-message-type'], 'notification');
    assert.equal(first.headers['twitch-eventsub-subscription-type'], 'channel.follow');
    assert.equal(first.headers['twitch-eventsub-subscription-version'], '2');
    assert.equal(first.headers['twitch-eventsub-message-retry'], '0');
    assert.equal(retry.headers['twitch-eventsub-message-id'], first.headers['twitch-eventsub-message-id']);
    assert.equal(retry.headers['twitch-eventsub-message-retry'], '1');
    assert.equal(challenge.headers['twitch-eventsub-message-type'], 'webhook_callback_verification');
    assert.equal(revocation.headers['twitch-eventsub-message-type'], 'revocation');
  } finally {
    server.close();
  }
});

test('Twitch: a secret Twitch would not take is refused in one line, exit 2, and profiles lists twitch', async () => {
  const short = await hookdrill(['send', '--provider', 'twitch', '--url', 'http://127.0.0.1:9/', '--secret', 'short']);
  assert.equal(short.code, 2, short.stderr);
  assert.equal(short.stderr.trim().split('\n').length, 1, short.stderr);
  assert.match(short.stderr, /ASCII string of 10 to 100 characters/);
  assert.doesNotMatch(short.stderr, /short/);
  const listed = await hookdrill(['profiles']);
  assert.match(listed.stdout, /^twitch \(default for twitch\) \(partly chosen by hookdrill/m);
});

test('Twitch: listen answers a verified webhook_callback_verification with the raw challenge as text/plain, stores nothing, and refuses a forged one', async () => {
  const secret = SECRET.twitch as string;
  const { p, url } = await startListenFor('twitch', join(tempDir(), 'inbox.db'), secret);
  try {
    const body = Buffer.from(JSON.stringify({ challenge: 'c-4f1e9a', subscription: { type: 'channel.follow', version: '2' } }));
    const post = (secrets: string[]) =>
      fetch(url, {
        method: 'POST',
        body,
        headers: providers.twitch.sign(body, secrets, { nowMs: Date.now(), deliveryId: crypto.randomUUID(), eventType: 'channel.follow' }),
      });
    const ok = await post([secret]);
    assert.equal(ok.status, 200);
    assert.match(ok.headers.get('content-type') ?? '', /^text\/plain/);
    assert.equal(await ok.text(), 'c-4f1e9a');
    const forged = await post(['another-secret-entirely']);
    assert.equal(forged.status, 401);
    assert.doesNotMatch(await forged.text(), /c-4f1e9a/);
  } finally {
    await stopAll(p);
  }
});
