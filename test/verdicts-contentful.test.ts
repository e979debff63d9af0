import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { run as send } from '../src/delivery/send.js';
import { checkReceiver, explain, named, official, python, SECRET } from './helpers/verdicts.js';
import { verifyWithOfficialCode } from './helpers/official.js';

/**
 * Contentful (issue 55), a built-in provider on the canonical scheme's request form: the hex
 * HMAC-SHA256 of the method, the path posted to, the headers X-Contentful-Signed-Headers lists and
 * the body, a timestamp refused once 30 s old (@contentful/node-apps-toolkit's verifyRequest, the
 * judge). Python receivers (webhook_receiver.py --provider contentful, on contentful_scheme.py):
 * the right one passes; one that signs the body alone fails valid; one that takes no time fails
 * stale-timestamp; one behind a proxy that verifies over the path it was given fails valid; one that
 * dedupes on the entity (sys.id + sys.version) or on nothing fails the dedupe cases.
 */

const status = (r: Awaited<ReturnType<typeof checkReceiver>>, name: string) => r.cases.find((c) => c.name === name);
const CASES =
  'valid,duplicate,wrong-secret,missing-signature,malformed-signature,flipped-byte,stale-timestamp,future-timestamp,related,other-types';

test("Contentful: a Python receiver right by the toolkit's verifyRequest passes check, keyed on X-Contentful-Idempotency-Key", async () => {
  const r = await checkReceiver('contentful', python('contentful'), { only: CASES });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  for (const name of CASES.split(',')) assert.equal(status(r, name)?.status, 'pass', `${name}: ${explain(r)}`);
});

test("Contentful: a receiver on @contentful/node-apps-toolkit's verifyRequest passes check", async () => {
  const r = await checkReceiver('contentful', official('contentful'), { only: CASES });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  assert.equal(status(r, 'valid')?.status, 'pass', explain(r));
});

test('Contentful: a receiver that takes the HMAC of the body alone (signed headers ignored) fails valid', async () => {
  const r = await checkReceiver('contentful', python('contentful', 'signed-headers-ignored'), { only: 'valid,wrong-secret' });
  assert.equal(status(r, 'valid')?.status, 'fail', explain(r));
});

test("Contentful: a receiver that holds no window fails stale-timestamp alone (the toolkit's 30 s)", async () => {
  const r = await checkReceiver('contentful', python('contentful', 'accepts-stale'), { only: 'valid,wrong-secret,stale-timestamp' });
  assert.deepEqual(named(r, 'fail'), ['stale-timestamp'], explain(r));
});

test('Contentful behind a proxy: told the public URL it passes valid; verifying over the path it was given fails valid', async () => {
  const publicUrl = 'https://cms.example.com/webhooks/contentful';
  const right = await checkReceiver('contentful', python('contentful', '', `--public-url ${publicUrl}`), { only: 'valid', publicUrl });
  assert.deepEqual(named(right, 'fail'), [], explain(right));
  const lib = await checkReceiver('contentful', official('contentful', { PUBLIC_URL: publicUrl }), { only: 'valid', publicUrl });
  assert.deepEqual(named(lib, 'fail'), [], explain(lib));
  const wrong = await checkReceiver('contentful', python('contentful', 'url-from-host'), { only: 'valid', publicUrl });
  assert.deepEqual(named(wrong, 'fail'), ['valid'], explain(wrong));
});

test("Contentful: keyed on the entity's sys.id + sys.version, a second event about one entry is lost (related); keyed on nothing, a duplicate is stored twice", async () => {
  const byEntity = await checkReceiver('contentful', python('contentful', 'contentful-version-key'), { only: 'valid,duplicate,related' });
  assert.equal(status(byEntity, 'related')?.status, 'fail', explain(byEntity));
  const none = await checkReceiver('contentful', python('contentful', 'no-dedupe'), { only: 'valid,duplicate' });
  assert.equal(status(none, 'duplicate')?.status, 'fail', explain(none));
});

test("Contentful: send's requests verify with the toolkit, and a retry keeps X-Contentful-Idempotency-Key and counts X-Contentful-Webhook-Request-Attempt", async () => {
  const seen: { headers: IncomingHttpHeaders; raw: string[]; body: Buffer; url: string }[] = [];
  let refuse = 1;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({
        headers: req.headers,
        raw: req.rawHeaders.filter((_, i) => i % 2 === 0),
        body: Buffer.concat(chunks),
        url: req.url ?? '/',
      });
      res.statusCode = refuse-- > 0 ? 503 : 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    const secret = SECRET.contentful as string;
    const url = `http://127.0.0.1:${port}/hooks/contentful?space=yadj1kx9rmg0`;
    await send({
      url,
      provider: 'contentful',
      secrets: [secret],
      fixtures: ['contentful/ContentManagement.Entry.publish'],
      timeScale: 0.001,
    });
    assert.equal(seen.length, 2);
    const [first, retry] = seen as [(typeof seen)[0], (typeof seen)[0]];
    for (const s of seen) await verifyWithOfficialCode('contentful', s.body, s.headers, secret, url);
    assert.deepEqual(
      first.raw.filter((h) => /^(content-type|x-contentful-)/i.test(h)),
      [
        'X-Contentful-Topic',
        'X-Contentful-Webhook-Name',
        'X-Contentful-Webhook-Request-Attempt',
        'X-Contentful-Event-Datetime',
        'Content-Type',
        'X-Contentful-CRN',
        'X-Contentful-Idempotency-Key',
        'X-Contentful-Signature',
        'X-Contentful-Signed-Headers',
        'X-Contentful-Timestamp',
      ],
    );
    assert.match(String(first.headers['x-contentful-idempotency-key']), /^[0-9a-f]{64}$/);
    assert.equal(retry.headers['x-contentful-idempotency-key'], first.headers['x-contentful-idempotency-key']);
    assert.deepEqual(
      [first, retry].map((s) => s.headers['x-contentful-webhook-request-attempt']),
      ['1', '2'],
    );
    assert.equal(first.headers['x-contentful-topic'], 'ContentManagement.Entry.publish');
    assert.equal(
      first.headers['x-contentful-crn'],
      'crn:contentful:::content:spaces/yadj1kx9rmg0/environments/master/entries/5KsDBWseXY6QegucYAoacS',
    );
  } finally {
    server.close();
  }
});
