import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { run as send } from '../src/delivery/send.js';
import { verifyWithOfficialCode } from './helpers/official.js';
import { checkReceiver, explain, named, official, python, SECRET } from './helpers/verdicts.js';
import { hookdrill } from './helpers/cli.js';
import { reply, startServer } from './helpers/server.js';

/**
 * Postmark (issue 55): a sender that signs nothing — a webhook is protected by the HTTP Basic
 * credentials its URL holds (https://user:password@host/…), sent as `Authorization: Basic …` —
 * judged by `check` on the declaration engine's `basic` scheme. Postmark has no verifier: RFC 7617
 * Basic, as its webhooks overview documents, is the judge. A Python receiver right by that rule
 * (the credentials compared in constant time, each record kept once by its body's hash, as Postmark
 * sends no delivery id) passes; the two wrongnesses Postmark's scheme invites fail, each with its
 * reason: a receiver that checks no credentials ("the web server handles basic auth"), and one that
 * dedupes on MessageID, which a message's Delivery, Opens and Clicks all share.
 */

const status = (r: Awaited<ReturnType<typeof checkReceiver>>, name: string) => r.cases.find((c) => c.name === name);

test('Postmark: a receiver comparing the Basic credentials in constant time and keyed on the record passes; what credentials cannot cover is skipped and said', async () => {
  const r = await checkReceiver('postmark', python('postmark'));
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  for (const name of ['valid', 'duplicate', 'wrong-secret', 'missing-signature', 'related', 'other-types'])
    assert.equal(status(r, name)?.status, 'pass', `${name}: ${explain(r)}`);
  const flipped = status(r, 'flipped-byte');
  assert.equal(flipped?.status, 'skipped');
  assert.match(flipped?.observed ?? '', /does not sign the body/);
  for (const name of ['reserialized', 'stale-timestamp', 'rotation']) assert.equal(status(r, name)?.status, 'skipped', name);
});

test('Postmark: a receiver on the documented rule alone (official_library.mjs) passes check', async () => {
  const r = await checkReceiver('postmark', official('postmark'));
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  assert.equal(status(r, 'valid')?.status, 'pass', explain(r));
});

test('Postmark: a receiver that checks no credentials ("the web server does basic auth") fails wrong-secret, told it never compares Authorization', async () => {
  const r = await checkReceiver('postmark', python('postmark', 'postmark-no-auth'), { only: 'valid,wrong-secret,missing-signature' });
  assert.equal(status(r, 'valid')?.status, 'pass', explain(r));
  const wrong = status(r, 'wrong-secret');
  assert.equal(wrong?.status, 'fail', explain(r));
  assert.match(wrong?.observed ?? '', /^200, but STORED [0-9a-f]{64} \(expected 4xx, nothing stored\)/);
  assert.match(wrong?.diagnosis ?? '', /does not compare Authorization at all/);
  // One root cause, one finding: a request with no Authorization is the same defect.
  assert.equal(status(r, 'missing-signature')?.notJudged, 'wrong-secret');
});

test('Postmark: a receiver that dedupes on MessageID keeps the Delivery and drops the Open of the same message: related fails, told why', async () => {
  const r = await checkReceiver('postmark', python('postmark', 'dedupe-by-entity'), { only: 'valid,related' });
  assert.equal(status(r, 'valid')?.status, 'pass', explain(r));
  const related = status(r, 'related');
  assert.equal(related?.status, 'fail', explain(r));
  assert.match(related?.observed ?? '', /a message delivered, then opened \(MessageID .+\); stored once and none/);
  assert.match(related?.diagnosis ?? '', /keeps one delivery per MessageID, not per delivery.*never on MessageID/);
});

test("Postmark: send's requests carry what Postmark sends and hold by the documented rule; a retry re-posts the same record, so its id stays", async () => {
  const seen: { headers: IncomingHttpHeaders; raw: string[]; body: Buffer }[] = [];
  let answer = 500;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ headers: req.headers, raw: req.rawHeaders.filter((_, i) => i % 2 === 0), body: Buffer.concat(chunks) });
      res.statusCode = answer;
      answer = 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const secret = SECRET.postmark as string;
    const r = await send({
      url: `http://127.0.0.1:${port}/`,
      provider: 'postmark',
      secrets: [secret],
      fixtures: [
        'postmark/Delivery',
        'postmark/Bounce',
        'postmark/Open',
        'postmark/Click',
        'postmark/SpamComplaint',
        'postmark/SubscriptionChange',
        'postmark/Inbound',
      ],
      timeScale: 0.0001,
    });
    assert.equal(r.ok, true, JSON.stringify(r.deliveries));
    // The first request was answered 500 and re-posted: eight requests for seven records, the
    // retry byte for byte the first (Postmark re-posts the record), so its id is the same.
    assert.equal(seen.length, 8);
    const texts = seen.map((s) => s.body.toString('utf8'));
    assert.equal(new Set(texts).size, 7, 'a retry re-posts the record unchanged');
    assert.equal(texts.filter((t) => t === texts[0]).length, 2);
    const types = [...new Set(texts)].map((t) => (JSON.parse(t) as { RecordType?: string }).RecordType ?? 'Inbound');
    assert.deepEqual(types.sort(), ['Bounce', 'Click', 'Delivery', 'Inbound', 'Open', 'SpamComplaint', 'SubscriptionChange']);
    const ids = r.deliveries.map((d) => d.deliveryId);
    for (const s of seen) {
      await verifyWithOfficialCode('postmark', s.body, s.headers, secret);
      assert.equal(s.headers.authorization, `Basic ${Buffer.from(secret).toString('base64')}`);
      assert.equal(s.headers['user-agent'], 'Postmark');
      assert.equal(s.headers.accept, 'application/json');
      assert.equal(s.headers['content-type'], 'application/json');
      assert.deepEqual(
        s.raw.filter((h) => !/^(host|connection|content-length)$/i.test(h)),
        ['Accept', 'User-Agent', 'Content-Type', 'Authorization'],
      );
      // The delivery id is the record's own bytes, hashed: no header carries one.
      assert.ok(ids.includes(createHash('sha256').update(s.body).digest('hex')), 'its id is its body hashed');
    }
    assert.equal(new Set(ids).size, 7, 'seven records, seven ids');
  } finally {
    server.close();
  }
});

test('Postmark: a wrong password is refused by the documented rule; credentials without a colon are refused in one line, exit 2; profiles lists postmark', async () => {
  const body = Buffer.from('{"RecordType":"Delivery"}');
  await assert.rejects(
    verifyWithOfficialCode(
      'postmark',
      body,
      { authorization: `Basic ${Buffer.from('hookdrill-postmark:other').toString('base64')}` },
      SECRET.postmark as string,
    ),
    /Basic credentials/,
  );
  const bare = await hookdrill(['send', '--provider', 'postmark', '--url', 'http://127.0.0.1:9/', '--secret', 'no-colon-here']);
  assert.equal(bare.code, 2, bare.stderr);
  assert.equal(bare.stderr.trim().split('\n').length, 1, bare.stderr);
  assert.doesNotMatch(bare.stderr, /no-colon-here/);
  const listed = await hookdrill(['profiles']);
  assert.match(listed.stdout, /^postmark \(default for postmark\)/m);
});

test('Postmark takes 200 alone: a receiver that stores and answers 204 is warned that every record comes again, and send retries a 204 as Postmark does', async () => {
  // "If Postmark doesn't receive a 200 OK response from your server, we'll automatically retry" —
  // a 204 is no 200: the record comes again on the whole schedule (~10.5 h).
  const r = await checkReceiver('postmark', python('postmark', 'answer-204'), { only: 'valid' });
  const valid = r.cases.find((c) => c.name === 'valid');
  assert.equal(valid?.status, 'warn', explain(r));
  assert.match(valid?.diagnosis ?? '', /answers 204; Postmark takes 200 alone as success and retries any other answer.*— answer 200/);

  // The first answer a 204, the retry's a 200.
  const server = await startServer((_req, res, n) => reply(res, n === 1 ? 204 : 200));
  try {
    const sent = await send({
      url: server.url,
      provider: 'postmark',
      secrets: [SECRET.postmark as string],
      fixtures: ['postmark/Delivery'],
      retryDelays: [0],
    });
    assert.equal(sent.ok, true, JSON.stringify(sent.deliveries));
    const bodies = server.requests.map((r) => r.rawBody);
    assert.equal(bodies.length, 2, 'the 204 was retried');
  } finally {
    await server.close();
  }
});
