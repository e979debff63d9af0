import { test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { createHmac } from 'node:crypto';
import { connect } from 'node:net';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import type { Inbox, NewDelivery } from '../src/inbox/index.js';
import { providers } from '../src/providers/index.js';
import type { Provider } from '../src/providers/index.js';
import { createReceiverServer, listen } from '../src/receiver/server.js';
import type { ReceiverEvent } from '../src/receiver/index.js';
import { tempDir } from './helpers/tmp.js';
import { SECRETS, publicKeyOf } from './helpers/official.js';

const SECRET = 'whsec_receiver_test';

async function withReceiver(
  options: { inbox?: Inbox; provider?: Provider; maxBytes?: number },
  fn: (ctx: { url: string; inbox: Inbox; path: string; events: ReceiverEvent[] }) => Promise<void>,
): Promise<void> {
  const path = join(tempDir(), 'inbox.db');
  const inbox = options.inbox ?? openSqliteInbox(path);
  const events: ReceiverEvent[] = [];
  const server = createReceiverServer({
    provider: options.provider ?? providers.stripe,
    secrets: [SECRET],
    inbox,
    ...(options.maxBytes ? { maxBytes: options.maxBytes } : {}),
    onRequest: (e) => events.push(e),
  });
  const { port } = await listen(server, 0, '127.0.0.1');
  try {
    await fn({ url: `http://127.0.0.1:${port}/webhooks`, inbox, path, events });
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await inbox.close();
  }
}

function signed(body: string | Buffer, opts: { provider?: Provider; secret?: string; nowMs?: number; deliveryId?: string } = {}) {
  const provider = opts.provider ?? providers.stripe;
  const raw = Buffer.isBuffer(body) ? body : Buffer.from(body);
  const headers = provider.sign(raw, [opts.secret ?? SECRET], {
    nowMs: opts.nowMs ?? Date.now(),
    deliveryId: opts.deliveryId ?? provider.newDeliveryId(),
    eventType: 'invoice.paid',
  });
  return { raw, headers };
}

async function post(url: string, body: Buffer, headers: Record<string, string>) {
  const res = await fetch(url, { method: 'POST', body, headers });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

test('a valid delivery is stored, raw bytes and all, before the 200', async () => {
  await withReceiver({}, async ({ url, inbox }) => {
    const body = '{"id":"evt_1","type":"invoice.paid",  "data":{"note":"spacing kept: \\u00e9"}}';
    const { raw, headers } = signed(body);
    const res = await post(url, raw, headers);
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { ok: true, deliveryId: 'evt_1', duplicate: false });
    const row = await inbox.get({ source: 'stripe', deliveryId: 'evt_1' });
    assert.ok(row?.body?.equals(raw));
    assert.equal(row?.eventType, 'invoice.paid');
    assert.ok(row?.headers['stripe-signature'], 'the signature header is kept for re-verification');
    // The stored request re-verifies as received.
    providers.stripe.verify(row!.body!, row!.headers, [SECRET]);
  });
});

test('with a 100 ms commit, the row is already in the database when the 200 arrives', async () => {
  const path = join(tempDir(), 'slow.db');
  const real = openSqliteInbox(path);
  const slow: Inbox = Object.assign(Object.create(real) as Inbox, {
    put: async (d: NewDelivery) => {
      await new Promise((r) => setTimeout(r, 100));
      return real.put(d);
    },
  });
  await withReceiver({ inbox: slow }, async ({ url }) => {
    const { raw, headers } = signed('{"id":"evt_slow","type":"invoice.paid"}');
    const res = await post(url, raw, headers);
    assert.equal(res.status, 200);
    // A separate connection, as another process would read it.
    const db = new Database(path, { readonly: true });
    const row = db.prepare('SELECT status FROM deliveries WHERE delivery_id = ?').get('evt_slow');
    db.close();
    assert.deepEqual(row, { status: 'pending' });
  });
});

test('a store that fails answers 503, so the sender retries', async () => {
  const real = openSqliteInbox(join(tempDir(), 'x.db'));
  const broken: Inbox = Object.assign(Object.create(real) as Inbox, {
    put: async () => {
      throw new Error('SQLITE_FULL: database or disk is full');
    },
  });
  await withReceiver({ inbox: broken }, async ({ url, events }) => {
    const { raw, headers } = signed('{"id":"evt_1","type":"invoice.paid"}');
    const res = await post(url, raw, headers);
    assert.equal(res.status, 503);
    assert.equal(events[0]?.result, 'store_failed');
  });
});

test('a duplicate gets 200 and is stored once; 10 concurrent copies too', async () => {
  await withReceiver({}, async ({ url, inbox }) => {
    const { raw, headers } = signed('{"id":"evt_dup","type":"invoice.paid"}');
    const results = await Promise.all(Array.from({ length: 10 }, () => post(url, raw, headers)));
    assert.deepEqual(
      results.map((r) => r.status),
      Array(10).fill(200),
    );
    assert.equal(results.filter((r) => r.json.duplicate === false).length, 1);
    assert.equal((await inbox.stats()).total, 1);
  });
});

test('bad, missing and stale signatures get 401 with the reason, and nothing is stored', async () => {
  await withReceiver({}, async ({ url, inbox }) => {
    const body = '{"id":"evt_bad","type":"invoice.paid"}';
    const wrong = signed(body, { secret: 'whsec_wrong' });
    const stale = signed(body, { nowMs: Date.now() - 360_000 });
    const tampered = signed(body);
    const cases: [Buffer, Record<string, string>, string][] = [
      [wrong.raw, wrong.headers, 'no_match'],
      [stale.raw, stale.headers, 'stale_timestamp'],
      [Buffer.from(body.replace('evt_bad', 'evt_bae')), tampered.headers, 'no_match'],
      [Buffer.from(body), { 'content-type': 'application/json' }, 'missing_header'],
      [Buffer.from(body), { 'stripe-signature': 'nonsense' }, 'malformed_header'],
    ];
    for (const [raw, headers, code] of cases) {
      const res = await post(url, raw, headers);
      assert.equal(res.status, 401, code);
      assert.equal(res.json.error, code);
    }
    assert.equal((await inbox.stats()).total, 0);
  });
});

/** POST with Node's http client, which writes the whole body before it reads the answer. */
function nodePost(
  url: string,
  headers: Record<string, string>,
  write: (req: ReturnType<typeof httpRequest>) => void,
): Promise<number | string> {
  return new Promise((resolve) => {
    const req = httpRequest(url, { method: 'POST', headers }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    write(req);
  });
}

/**
 * A sender that writes its whole request before it reads anything (as Python's http.client and
 * many senders do): the answer it gets, or the socket error that stopped it first.
 */
function writeAllThenRead(url: string, head: string, body: Buffer): Promise<number | string> {
  return new Promise((resolve) => {
    const { port, hostname } = new URL(url);
    const socket = connect({ port: Number(port), host: hostname });
    socket.pause(); // nothing is read until the whole request is written
    let text = '';
    socket.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    socket.write(head);
    socket.write(body, () => {
      socket.on('data', (c: Buffer) => {
        text += c.toString('latin1');
        const status = /^HTTP\/1\.1 (\d{3})/.exec(text);
        if (status) {
          resolve(Number(status[1]));
          socket.destroy();
        }
      });
      socket.resume();
    });
  });
}

test('a sender that writes its whole oversized body before reading still gets the 413, not a reset', async () => {
  await withReceiver({ maxBytes: 1024 }, async ({ url }) => {
    const body = Buffer.alloc(20 * 1024 * 1024, 0x61);
    // Signed, as a sender's delivery is: an unsigned one is refused on its headers (401) and cut
    // after a MiB, since no sender that could be heard would send it (test/admission.test.ts).
    const sig = Object.entries(signed(body).headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('');
    const head = `POST /webhooks HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n${sig}Content-Length: ${body.length}\r\n\r\n`;
    for (let i = 0; i < 3; i++) assert.equal(await writeAllThenRead(url, head, body), 413);
  });
});

test('a body over the limit gets a 413 that reaches the sender, never a reset; the receiver keeps answering', async () => {
  await withReceiver({ maxBytes: 1024 }, async ({ url, inbox, events }) => {
    const big = Buffer.alloc(2 * 1024 * 1024, 0x61);
    const { headers } = signed(big);
    // Declared length over the limit: refused from the headers alone, the rest read and dropped.
    const declared = await nodePost(url, { ...headers, 'content-length': String(big.length) }, (req) => req.end(big));
    assert.equal(declared, 413);
    // Chunked, no length declared: refused once the limit is crossed.
    const chunked = await nodePost(url, { ...headers, 'transfer-encoding': 'chunked' }, (req) => {
      for (let i = 0; i < 512; i++) req.write(Buffer.alloc(1024, 0x62));
      req.end();
    });
    assert.equal(chunked, 413);
    assert.equal((await inbox.stats()).total, 0);
    assert.deepEqual(
      events.map((e) => e.result),
      ['too_large', 'too_large'],
    );
    const ok = signed('{"id":"evt_after","type":"invoice.paid"}');
    assert.equal((await post(url, ok.raw, ok.headers)).status, 200);
  });
});

test('authentic but malformed JSON is stored and acknowledged, keyed by its hash', async () => {
  await withReceiver({}, async ({ url, inbox }) => {
    const { raw, headers } = signed('{"id": "evt_broken", "type": ');
    const first = await post(url, raw, headers);
    assert.equal(first.status, 200);
    assert.match(String(first.json.deliveryId), /^sha256:[0-9a-f]{64}$/);
    const retry = await post(url, raw, signed(raw).headers);
    assert.equal(retry.json.duplicate, true, 'a retry of the same bytes dedupes');
    assert.equal((await inbox.stats()).total, 1);
  });
});

test('slack url_verification gets its challenge back and stores nothing; health answers GET', async () => {
  await withReceiver({ provider: providers.slack }, async ({ url, inbox }) => {
    const { raw, headers } = signed('{"token":"t","challenge":"c-123","type":"url_verification"}', { provider: providers.slack });
    const res = await post(url, raw, headers);
    assert.deepEqual(res, { status: 200, json: { challenge: 'c-123' } });
    assert.equal((await inbox.stats()).total, 0);
    const health = await fetch(url.replace('/webhooks', '/healthz'));
    assert.equal(health.status, 200);
    assert.equal((await fetch(url)).status, 405);
  });
});

test("every provider: what send signs, the receiver verifies and stores under the provider's id", async () => {
  for (const provider of Object.values(providers)) {
    // A key pair's private key to send with, its public key for the receiver; else a secret of the provider's shape.
    const secret =
      provider.name === 'standard' || provider.name === 'svix'
        ? 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'
        : provider.keyPair || provider.tokenOnly === 'basic' || provider.name === 'contentful'
          ? // A private key, Basic credentials ("user:password", Postmark's) or Contentful's 64 characters: a secret of its shape.
            (SECRETS[provider.name] as string)
          : SECRET;
    const path = join(tempDir(), `${provider.name}.db`);
    const inbox = openSqliteInbox(path);
    // A URL-bound provider's receiver is told the URL it is posted to (send posts to it, no proxy between).
    const server = createReceiverServer({
      provider,
      secrets: [publicKeyOf(secret, provider.name)],
      inbox,
      ...(provider.urlBound ? { trustProxy: true } : {}),
    });
    const { port } = await listen(server, 0, '127.0.0.1');
    const { run } = await import('../src/delivery/send.js');
    // Closed whatever send does: a server left open keeps the test file from ever ending.
    const result = await run({
      url: `http://127.0.0.1:${port}/`,
      provider: provider.name,
      secrets: [secret],
      count: 3,
      noRetry: true,
    }).finally(async () => {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    });
    assert.equal(result.ok, true, provider.name);
    const rows = await inbox.list();
    // Keyed as the provider's docs say: Shopify's event id, which its deliveries carry beside the webhook id.
    // Each delivery held under its id, or one its deliveries carry beside it (Shopify's event id).
    const held = (id: string) => rows.some((r) => [id, ...(provider.otherIds?.(id) ?? [])].includes(r.deliveryId));
    for (const d of result.deliveries) assert.ok(held(d.deliveryId), `${provider.name}: ${d.deliveryId} not stored`);
    // A row an event: three events, three rows (in one body where the provider batches).
    assert.equal(rows.length, result.batched?.events ?? result.deliveries.length, provider.name);
    assert.equal(new Set(rows.map((r) => r.deliveryId)).size, rows.length, provider.name);
    assert.ok(
      rows.every((r) => r.eventType),
      `${provider.name}: event type stored`,
    );
    await inbox.close();
  }
});

test("a Shopify Events delivery (shopify-* headers, no X-Shopify-*) is verified and stored under its shopify-webhook-id, as @shopify/shopify-api's validate takes it", async () => {
  // The body shaped as Shopify's changelog of 2026-09-16 shows an Events payload; the headers as
  // @shopify/shopify-api names them (ShopifyEventsHeader). One merchant action, two subscriptions:
  // one event id, two webhook ids, two deliveries to keep.
  const body = Buffer.from(
    JSON.stringify({
      topic: 'Product',
      action: 'update',
      handle: 'product-updates',
      fields_changed: { added: [], updated: ["product[id: 'gid://shopify/Product/123'].title"], removed: [] },
      query_variables: { product_id: 'gid://shopify/Product/123' },
    }),
  );
  const hmac = (secret: string) => createHmac('sha256', secret).update(body).digest('base64');
  const events = (webhookId: string, secret = SECRET) => ({
    'content-type': 'application/json',
    'shopify-api-version': 'unstable',
    'shopify-event-id': 'b4f4f8a2-0d37-4c5e-9d2b-3c1f2f0f6a11',
    'shopify-hmac-sha256': hmac(secret),
    'shopify-shop-domain': 'hookdrill-test.myshopify.com',
    'shopify-topic': 'Product',
    'shopify-action': 'update',
    'shopify-handle': 'product-updates',
    'shopify-resource-id': 'gid://shopify/Product/123',
    'shopify-triggered-at': new Date().toISOString(),
    'shopify-webhook-id': webhookId,
  });
  await withReceiver({ provider: providers.shopify }, async ({ url, inbox }) => {
    assert.equal((await post(url, body, events('wh-1'))).status, 200);
    assert.equal((await post(url, body, events('wh-2'))).status, 200);
    assert.equal((await post(url, body, events('wh-1'))).status, 200, 'a copy of one it holds: 2xx');
    assert.equal((await post(url, body, events('wh-3', 'another secret'))).status, 401, 'still verified');
    const rows = await (inbox as ReturnType<typeof openSqliteInbox>).list();
    assert.deepEqual(rows.map((r) => r.deliveryId).sort(), ['wh-1', 'wh-2']);
    assert.ok(rows.every((r) => r.eventType === 'Product/update'));
  });
});
