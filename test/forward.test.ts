import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { providers } from '../src/providers/index.js';
import { Worker } from '../src/worker/index.js';
import { forwardHandler } from '../src/worker/forward.js';
import { serveKeys } from '../src/delivery/key-server.js';
import { verifyWithOfficialCode } from './helpers/official.js';
import { startServer } from './helpers/server.js';
import { tempDir } from './helpers/tmp.js';
import { SECRET as SECRET_OF, startPython, storedIds } from './helpers/verdicts.js';

const SECRET = 'whsec_forward_test';

/** An app that verifies every request with the provider's official code, as the docs say it must. */
async function app(handler?: (req: IncomingMessage, res: ServerResponse, raw: Buffer) => void) {
  const seen: { status: number; headers: IncomingMessage['headers'] }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks);
      if (handler) return handler(req, res, raw);
      verifyWithOfficialCode('stripe', raw, req.headers, SECRET).then(
        () => {
          seen.push({ status: 200, headers: req.headers });
          res.end('ok');
        },
        (err: Error) => {
          seen.push({ status: 400, headers: req.headers });
          res.writeHead(400).end(err.message);
        },
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`),
    seen,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(r);
      }),
  };
}

/** A Stripe delivery as it was received ten minutes ago: its signature is now past the 5-minute tolerance. */
async function oldDelivery(inbox: ReturnType<typeof openSqliteInbox>) {
  const body = Buffer.from('{"id":"evt_old","object":"event","type":"invoice.paid"}');
  const receivedAt = Date.now() - 600_000;
  const signed = providers.stripe.sign(body, [SECRET], { nowMs: receivedAt, deliveryId: 'evt_old', eventType: 'invoice.paid' });
  const headers = Object.fromEntries(
    Object.entries({ ...signed, 'x-request-origin': 'kept as received' }).map(([k, v]) => [k.toLowerCase(), v]),
  );
  await inbox.put({ source: 'stripe', deliveryId: 'evt_old', eventType: 'invoice.paid', body, headers, receivedAt });
  return headers;
}

test("a forward ten minutes after receipt is signed anew and passes the app's official verifier", async () => {
  const inbox = openSqliteInbox(join(tempDir(), 'inbox.db'));
  const target = await app();
  const original = await oldDelivery(inbox);
  try {
    const worker = new Worker({
      inbox,
      maxAttempts: 1,
      handler: forwardHandler(target.url, { timeoutMs: 2_000, signer: { provider: providers.stripe, secrets: [SECRET] } }),
    });
    await worker.drain();
    assert.equal((await inbox.get({ source: 'stripe', deliveryId: 'evt_old' }))?.status, 'done');
    const [request] = target.seen;
    assert.equal(request?.status, 200);
    assert.notEqual(request?.headers['stripe-signature'], original['stripe-signature'], 'a fresh signature');
    assert.equal(request?.headers['x-request-origin'], 'kept as received', 'the other headers as the sender sent them');
    assert.equal(request?.headers['x-hookdrill-delivery-id'], 'evt_old');
  } finally {
    await target.close();
    await inbox.close();
  }
});

test('--forward-original-headers keeps the received signature, which the app then refuses as stale', async () => {
  const inbox = openSqliteInbox(join(tempDir(), 'inbox.db'));
  const target = await app();
  const original = await oldDelivery(inbox);
  try {
    const worker = new Worker({ inbox, maxAttempts: 1, handler: forwardHandler(target.url, { timeoutMs: 2_000 }) });
    await worker.drain();
    assert.equal(target.seen[0]?.headers['stripe-signature'], original['stripe-signature']);
    const row = await inbox.get({ source: 'stripe', deliveryId: 'evt_old' });
    assert.equal(row?.status, 'dead');
    assert.match(row?.lastError ?? '', /forward target answered 400: .*[Tt]imestamp/);
  } finally {
    await target.close();
    await inbox.close();
  }
});

test('a forward that times out is recorded in words that requeue --error timeout selects', async () => {
  const inbox = openSqliteInbox(join(tempDir(), 'inbox.db'));
  const hang = await app(() => undefined); // never answers
  await oldDelivery(inbox);
  try {
    const worker = new Worker({ inbox, maxAttempts: 1, handler: forwardHandler(hang.url, { timeoutMs: 200 }) });
    await worker.drain();
    const row = await inbox.get({ source: 'stripe', deliveryId: 'evt_old' });
    assert.equal(row?.lastError, `forward timeout: ${hang.url.origin} gave no complete answer within 200ms`);
    assert.equal(await inbox.count({ error: 'timeout', statuses: ['dead'] }), 1);
  } finally {
    await hang.close();
    await inbox.close();
  }
});

/** A delivery of each URL-bound provider, as its docs show one. */
const BODIES = {
  twilio: 'AccountSid=AC0123&Body=hello&From=%2B15550001111&MessageSid=SM0123&To=%2B15550002222',
  pubsub:
    '{"message":{"attributes":{"k":"v"},"data":"e30=","messageId":"2070443601311540","publishTime":"2021-02-26T19:13:55.749Z"},"subscription":"projects/p/subscriptions/s"}\n',
} as const;

test('a URL-bound provider (Twilio, Pub/Sub) is signed anew for the URL it is forwarded to: the Python receiver there verifies it', async () => {
  // Twilio signs the URL it posts to; the app behind listen is at another URL, and verifies its own.
  for (const name of ['twilio', 'pubsub'] as const) {
    const inbox = openSqliteInbox(join(tempDir(), 'inbox.db'));
    const target = await startPython(name);
    const provider = providers[name];
    // The app verifies Pub/Sub's token against the keys hookdrill serves in test mode, as listen serves them.
    await serveKeys(provider, [SECRET_OF[name] as string]);
    const body = Buffer.from(BODIES[name]);
    const secret = SECRET_OF[name] as string;
    const signed = provider.sign(body, [secret], {
      nowMs: Date.now(),
      deliveryId: 'd-forwarded',
      eventType: 'message',
      url: 'https://hooks.example.com/in',
    });
    const headers = Object.fromEntries(Object.entries(signed).map(([k, v]) => [k.toLowerCase(), v]));
    const deliveryId = provider.deliveryId(headers, body) ?? 'd-forwarded';
    await inbox.put({ source: name, deliveryId, eventType: 'message', body, headers, receivedAt: Date.now() });
    try {
      const worker = new Worker({
        inbox,
        maxAttempts: 1,
        handler: forwardHandler(new URL(target.url), { timeoutMs: 5_000, signer: { provider, secrets: [secret] } }),
      });
      await worker.drain();
      const row = await inbox.get({ source: name, deliveryId });
      assert.equal(row?.status, 'done', `${name}: ${row?.lastError}`);
      assert.equal(storedIds(target.store).length, 1, `${name}: the app stored the forwarded delivery`);
    } finally {
      target.stop();
      await inbox.close();
    }
  }
});

test("SNS's forward is the message as SNS signed it: its signature stays in the body, and no Signature header is added", async () => {
  const inbox = openSqliteInbox(join(tempDir(), 'inbox.db'));
  const app = await startServer((_req, res) => void res.end('ok'));
  const provider = providers.sns;
  const secret = SECRET_OF.sns as string;
  const message = {
    Type: 'Notification',
    MessageId: '22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324',
    TopicArn: 'arn:aws:sns:us-west-2:123456789012:MyTopic',
    Message: 'hello',
    Timestamp: '2012-05-02T00:54:06.655Z',
    SignatureVersion: '1',
    Signature: '',
    SigningCertURL: 'https://127.0.0.1:9443/SimpleNotificationService-hookdrill.pem',
  };
  const signed = provider.sign(Buffer.from(JSON.stringify(message)), [secret], {
    nowMs: Date.now(),
    deliveryId: message.MessageId,
    eventType: 'Notification',
  });
  const placed = provider.placeSignature?.(Buffer.from(JSON.stringify(message)), signed);
  assert.ok(placed, 'SNS places its signature in the body');
  const headers = Object.fromEntries(Object.entries(placed.headers).map(([k, v]) => [k.toLowerCase(), v]));
  await inbox.put({
    source: 'sns',
    deliveryId: message.MessageId,
    eventType: 'Notification',
    body: placed.body,
    headers,
    receivedAt: Date.now(),
  });
  try {
    const worker = new Worker({
      inbox,
      maxAttempts: 1,
      handler: forwardHandler(new URL(app.url), { timeoutMs: 5_000, signer: { provider, secrets: [secret] } }),
    });
    await worker.drain();
    const [request] = app.requests;
    assert.ok(request, 'forwarded');
    assert.equal(request.headers.signature, undefined, 'no Signature header: SNS sends none');
    assert.deepEqual(request.rawBody, placed.body, 'the body as SNS signed it');
  } finally {
    await app.close();
    await inbox.close();
  }
});
