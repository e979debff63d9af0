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
import { verifyWithOfficialCode } from './helpers/official.js';
import { tempDir } from './helpers/tmp.js';

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
