import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { run as send } from '../src/delivery/send.js';
import { checkReceiver, explain, named, official, python, SECRET, startPython, storedIds } from './helpers/verdicts.js';
import { verifyWithOfficialCode } from './helpers/official.js';
import { join } from 'node:path';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { startListenFor, stopAll } from './helpers/listen.js';
import { tempDir } from './helpers/tmp.js';

/**
 * Microsoft Graph change notifications (issue 55), a built-in provider on the field scheme: nothing
 * is signed, each notification of `value` carries the subscription's clientState, and one that does
 * not match is "not valid" — dropped, the POST still answered 2xx within 3 s; before any, a POST
 * with ?validationToken= is answered with the decoded token alone as text/plain within 10 s
 * (learn.microsoft.com/graph/change-notifications-delivery-webhooks). No SDK checks clientState:
 * the judge is that documented rule (test/helpers/official.ts; official_library.mjs). Python
 * receivers (webhook_receiver.py --provider graph, on graph_scheme.py, keyed on each notification's
 * id): the right one passes; one that echoes the token as JSON, or still encoded, fails
 * url-verification; the right token as application/json only warns (Graph compares the body);
 * one that never compares clientState fails wrong-secret; one that compares the first
 * notification's and keeps the whole batch fails forged-item; one that does 4 s of work before its
 * 202 fails valid; one keyed on resourceData.id fails valid.
 */

const status = (r: Awaited<ReturnType<typeof checkReceiver>>, name: string) => r.cases.find((c) => c.name === name);
const CASES = 'valid,duplicate,batch,related,wrong-secret,missing-signature,forged-item,other-types,url-verification';

test('Graph: a Python receiver that compares every clientState, discards a forged one with its 202 and echoes the validationToken passes check, keyed on each notification id', async () => {
  const r = await checkReceiver('graph', python('graph'), { only: CASES });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  assert.deepEqual(named(r, 'warn'), [], explain(r));
  for (const name of CASES.split(',')) assert.equal(status(r, name)?.status, 'pass', `${name}: ${explain(r)}`);
  assert.match(status(r, 'wrong-secret')?.observed ?? '', /^202, nothing stored: discarded, as Microsoft Graph asks/);
  assert.match(
    status(r, 'forged-item')?.observed ?? '',
    /^202 to 3 events in one body, the last with another clientState; 2 of the other 2 stored, the forged one not$/,
  );
  assert.match(status(r, 'batch')?.observed ?? '', /^202 to 3 events in one body; 3 of them stored$/);
  assert.match(status(r, 'url-verification')?.observed ?? '', /^200, the validationToken echoed decoded as the raw body$/);
});

test("Graph: a receiver on Graph's documented rule in plain Node passes check", async () => {
  const r = await checkReceiver('graph', official('graph'), { only: CASES });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  assert.equal(status(r, 'forged-item')?.status, 'pass', explain(r));
});

test('Graph: the validationToken echoed wrapped in JSON, or still URL-encoded, fails url-verification — Graph compares the body', async () => {
  for (const [flaw, why] of [
    [
      'json-token',
      /echoes notificationUrl validation's validationToken wrapped in JSON — Microsoft Graph needs the decoded token alone as the body/,
    ],
    ['encoded-token', /echoes notificationUrl validation's validationToken still URL-encoded/],
  ] as const) {
    const r = await checkReceiver('graph', python('graph', flaw), { only: 'valid,url-verification' });
    assert.deepEqual(named(r, 'fail'), ['url-verification'], `${flaw}: ${explain(r)}`);
    assert.match(status(r, 'url-verification')?.diagnosis ?? '', why, flaw);
  }
});

test('Graph: the right token as application/json is a warning, not a failure: Graph compares the body, and Microsoft\'s own samples answer "plain/text"', async () => {
  const r = await checkReceiver('graph', python('graph', 'json-type'), { only: 'valid,url-verification' });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  assert.deepEqual(named(r, 'warn'), ['url-verification'], explain(r));
  assert.match(status(r, 'url-verification')?.diagnosis ?? '', /as application\/json — Microsoft Graph's docs ask for text\/plain/);
});

test('Graph: a receiver that never compares clientState keeps a forgery and fails wrong-secret (forged-item, one finding later, is not judged)', async () => {
  const r = await checkReceiver('graph', python('graph', 'unchecked'), { only: 'valid,wrong-secret,forged-item' });
  assert.deepEqual(named(r, 'fail'), ['wrong-secret'], explain(r));
  assert.match(
    status(r, 'wrong-secret')?.diagnosis ?? '',
    /keeps a forged delivery: a 2xx is right .* compare value\.\*\.clientState with your secret/,
  );
  assert.notEqual(status(r, 'forged-item')?.status, 'pass', explain(r));
});

test("Graph: a receiver that compares the first notification's clientState and keeps the whole batch fails forged-item alone", async () => {
  const r = await checkReceiver('graph', python('graph', 'first-only'), { only: CASES });
  assert.deepEqual(named(r, 'fail'), ['forged-item'], explain(r));
  const c = status(r, 'forged-item');
  assert.match(c?.observed ?? '', /the forged one STORED$/);
  assert.match(
    c?.diagnosis ?? '',
    /keeps an event whose clientState is not your secret \(value\[2\]\.clientState\) because others in the same body hold it/,
  );
  assert.match(c?.diagnosis ?? '', /compare every event's clientState and drop the one that does not match/);
});

test('Graph: a receiver that works 4 s before its 202 fails valid: Graph waits 3 s, then retries and throttles', async () => {
  const r = await checkReceiver('graph', python('graph', 'slow'), { only: 'valid' });
  assert.deepEqual(named(r, 'fail'), ['valid'], explain(r));
  assert.match(status(r, 'valid')?.diagnosis ?? '', /does not answer a valid delivery within Microsoft Graph's 3 s timeout/);
});

test("Graph: a receiver keyed on resourceData.id (the message's id, not the notification's) fails valid, told why", async () => {
  const r = await checkReceiver('graph', python('graph', 'resource-key'), { only: 'valid' });
  assert.deepEqual(named(r, 'fail'), ['valid'], explain(r));
  assert.match(
    status(r, 'valid')?.diagnosis ?? '',
    /stores deliveries under value\.0\.resourceData\.id .* key the store on the delivery id/,
  );
});

test("Graph: send's notifications, several to a POST as Graph batches them, hold the subscription's clientState in each one (the documented rule), go as application/json; charset=utf-8, and a right receiver stores every one under its id", async () => {
  const receiver = await startPython('graph');
  const seen: { headers: IncomingHttpHeaders; body: Buffer }[] = [];
  // A relay in front of the receiver: what send sent, then the receiver's own answer.
  const relay = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const body = Buffer.concat(chunks);
      seen.push({ headers: req.headers, body });
      const answer = await fetch(receiver.url, { method: 'POST', headers: { 'content-type': String(req.headers['content-type']) }, body });
      res.statusCode = answer.status;
      res.end();
    });
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = relay.address() as AddressInfo;
    const secret = SECRET.graph as string;
    const fixtures = [
      'graph/message.created',
      'graph/event.updated',
      'graph/chatMessage.deleted',
      'graph/lifecycle.reauthorizationRequired',
    ];
    const r = await send({ url: `http://127.0.0.1:${port}/notifications`, provider: 'graph', secrets: [secret], fixtures, noRetry: true });
    assert.equal(r.ok, true, JSON.stringify(r.deliveries));
    // Three notifications to a body (the contract's typical batch), then the fourth alone.
    assert.deepEqual(r.batched, { events: fixtures.length, size: 3 });
    assert.equal(seen.length, 2);
    const ids: string[] = [];
    for (const s of seen) {
      await verifyWithOfficialCode('graph', s.body, s.headers, secret);
      assert.equal(s.headers['content-type'], 'application/json; charset=utf-8');
      const { value } = JSON.parse(s.body.toString('utf8')) as { value: { id: string; clientState: string }[] };
      ids.push(...value.map((n) => n.id));
    }
    // Another secret's notifications are not Graph's, by the same rule.
    await assert.rejects(
      verifyWithOfficialCode('graph', seen[0]?.body as Buffer, {}, 'another-client-state'),
      /clientState is not the subscription's/,
    );
    assert.deepEqual(storedIds(receiver.store).sort(), [...new Set(ids)].sort());
    assert.equal(new Set(ids).size, fixtures.length, 'each notification its own id, made fresh');
  } finally {
    relay.close();
    receiver.stop();
  }
});

test('Graph: a notification not answered 2xx is sent again with its id unchanged (Graph resends it for up to 4 hours)', async () => {
  const seen: Buffer[] = [];
  let refuse = 1;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push(Buffer.concat(chunks));
      res.statusCode = refuse-- > 0 ? 503 : 202;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = server.address() as AddressInfo;
    await send({
      url: `http://127.0.0.1:${port}/`,
      provider: 'graph',
      secrets: [SECRET.graph as string],
      fixtures: ['graph/message.created'],
      timeScale: 0.001,
    });
    assert.equal(seen.length, 2);
    const [first, retry] = seen.map((b) => JSON.parse(b.toString('utf8')) as { value: { id: string }[] });
    assert.equal(retry?.value[0]?.id, first?.value[0]?.id);
  } finally {
    server.close();
  }
});

test('Graph through listen: the validationToken echoed as text/plain, a batch stored one row per notification under its id (a lifecycle one among them), a batch holding one forged clientState refused whole', async () => {
  const secret = SECRET.graph as string;
  const path = join(tempDir(), 'graph.db');
  const { p, url } = await startListenFor('graph', path, secret, '--no-worker');
  let ids: string[] = [];
  try {
    const token = 'Validation: Testing client application reachability for subscription Request-Id: 0b6c0ea8-0b3e-4b2b-9a6e-3a7c4c0de001';
    const validation = await fetch(`${url}?validationToken=${encodeURIComponent(token)}`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain; charset=utf-8' },
      body: '',
    });
    assert.equal(validation.status, 200);
    assert.match(validation.headers.get('content-type') ?? '', /^text\/plain/);
    assert.equal(await validation.text(), token);
    const seen: Buffer[] = [];
    const fixtures = ['graph/message.created', 'graph/event.updated', 'graph/lifecycle.missed'];
    const relay = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const body = Buffer.concat(chunks);
        seen.push(body);
        const answer = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json; charset=utf-8' }, body });
        res.statusCode = answer.status;
        res.end();
      });
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = relay.address() as AddressInfo;
      const r = await send({ url: `http://127.0.0.1:${port}/`, provider: 'graph', secrets: [secret], fixtures, noRetry: true });
      assert.equal(r.ok, true, JSON.stringify(r.deliveries));
    } finally {
      relay.close();
    }
    assert.equal(seen.length, 1, 'three notifications in one POST');
    const batch = JSON.parse(seen[0]?.toString('utf8') ?? '{}') as { value: Record<string, unknown>[] };
    ids = batch.value.map((n) => String(n.id));
    // The same batch again, its last notification's clientState another: nothing of it is taken.
    const forged = structuredClone(batch);
    const fresh = forged.value.map((n) => ({ ...n, id: `${String(n.id)}x` }));
    (fresh[2] as Record<string, unknown>).clientState = 'not-the-client-state';
    const refused = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=utf-8' },
      body: JSON.stringify({ value: fresh }),
    });
    assert.equal(refused.status, 401);
  } finally {
    await stopAll(p);
  }
  const inbox = openSqliteInbox(path);
  try {
    const rows = await inbox.list();
    assert.deepEqual(rows.map((r) => r.deliveryId).sort(), [...ids].sort());
    // Each row typed as Graph types it: a lifecycle notification, which has no changeType, by its lifecycleEvent.
    assert.deepEqual(rows.map((r) => r.eventType).sort(), ['created', 'missed', 'updated']);
    // And kept without the clientState: the inbox is printed by inspect and the inspector.
    for (const r of rows) assert.ok(!r.body?.toString('utf8').includes(secret), `row ${r.deliveryId} keeps the secret`);
  } finally {
    await inbox.close();
  }
});
