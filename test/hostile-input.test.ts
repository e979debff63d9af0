import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { providers } from '../src/providers/index.js';
import { hookdrill } from './helpers/cli.js';
import { live } from './helpers/live.js';
import { freePort } from './helpers/ports.js';
import { reply, startServer } from './helpers/server.js';
import { tempDir } from './helpers/tmp.js';
import { deadRows } from './helpers/dead-rows.js';

/**
 * Strings a sender controls reach a person's terminal escaped (issue 26, item 5): an id, a type, a
 * header, an error, an answer body holding an OSC title change, a screen clear, a BEL, C1 CSI.
 */

const SECRET = `whsec_${Buffer.from('terminal-safety-secret-00').toString('base64')}`;
const EVIL = '\u001b]0;owned\u0007\u001b[2J\u009b31m';
// Raw, anything a terminal acts on: C0 but tab and newline, DEL, C1.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
const RAW_CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/;

function clean(what: string, text: string): void {
  const m = RAW_CONTROL.exec(text);
  assert.equal(
    m,
    null,
    `${what} wrote a raw control character 0x${m?.[0].charCodeAt(0).toString(16)}: ${JSON.stringify(text.slice(0, 400))}`,
  );
}

function evilInbox(): Promise<string> {
  const id = `evt_${EVIL}`;
  return deadRows(
    join(tempDir(), 'inbox.db'),
    [
      {
        deliveryId: id,
        eventType: `invoice.${EVIL}`,
        body: Buffer.from(JSON.stringify({ id, object: 'event', type: `invoice.${EVIL}`, data: { object: { name: EVIL } } })),
        headers: { 'x-note': EVIL, 'x-api-key': 'sk_should_never_show' },
        receivedAt: Date.now() - 1_000,
      },
    ],
    `crm said ${EVIL}`,
  );
}

test('inspect (overview, rows, one delivery), requeue, replay and fixtures capture escape what the sender controls', async () => {
  const inbox = await evilInbox();
  const id = `evt_${EVIL}`;
  for (const args of [
    ['inspect', '--inbox', inbox],
    ['inspect', '--inbox', inbox, '--status', 'dead'],
    ['inspect', '--inbox', inbox, '--id', id],
    ['inspect', '--inbox', inbox, '--id', id, '--json'],
    ['inspect', '--inbox', inbox, '--type', `invoice.${EVIL}`],
    ['requeue', '--inbox', inbox, '--status', 'dead', '--error', EVIL, '--dry-run'],
    ['requeue', '--inbox', inbox, '--id', `nope${EVIL}`, '--dry-run'],
    ['fixtures', 'capture', '--inbox', inbox, '--id', id, '--out', tempDir()],
  ]) {
    const r = await hookdrill(args);
    clean(args.slice(0, 4).join(' '), r.stdout + r.stderr);
    assert.doesNotMatch(r.stdout + r.stderr, /sk_should_never_show/, 'an API key header is a credential');
  }
  const shown = await hookdrill(['inspect', '--inbox', inbox, '--id', id]);
  assert.match(shown.stdout, /evt_\\x1b\]0;owned\\x07\\x1b\[2J\\x9b31m/, 'shown escaped, not dropped');

  const app = await startServer((_req, res) => reply(res, 500, `nope ${EVIL}`));
  try {
    const r = await hookdrill([
      'replay',
      '--inbox',
      inbox,
      '--status',
      'dead',
      '--to',
      app.url,
      '--provider',
      'stripe',
      '--secret',
      SECRET,
    ]);
    assert.equal(r.code, 1);
    clean('replay', r.stdout + r.stderr);
    assert.equal(app.requests[0]?.headers['x-api-key'], undefined, 'a stored API key is not replayed');
  } finally {
    await app.close();
  }
});

test("listen's log line for a 401 whose Stripe-Signature holds bytes 0x9B and 0x9D shows them escaped, not as C1 controls", async () => {
  const port = await freePort();
  const l = live(
    ['listen', '--provider', 'stripe', '--port', String(port), '--inbox', join(tempDir(), 'i.db'), '--log', 'requests'],
    SECRET,
  );
  try {
    await l.waitFor('out', /127\.0\.0\.1/);
    const body = Buffer.from('{"id":"evt_sig","object":"event","type":"invoice.paid"}');
    const headers = providers.stripe.sign(body, [SECRET], { nowMs: Date.now(), deliveryId: 'evt_sig', eventType: 'invoice.paid' });
    // Raw bytes in the header, as a hostile client sends them (fetch would refuse them).
    const { request } = await import('node:http');
    await new Promise<void>((resolve, reject) => {
      const req = request(
        { host: '127.0.0.1', port, method: 'POST', path: '/', headers: { 'content-type': 'application/json' } },
        (res) => {
          res.resume();
          res.on('end', () => resolve());
        },
      );
      req.on('error', reject);
      // An item without "=": the 401's reason quotes the header, bytes and all.
      req.setHeader('stripe-signature', `${headers['Stripe-Signature']},${Buffer.from([0x9b, 0x9d]).toString('latin1')}`);
      req.end(body);
    });
    // Not /401/ alone: the "listening on" line matches it whenever the port has 401 in it (34401).
    await l.waitFor('out', /401 rejected/);
    assert.match(l.out(), /401 rejected Stripe-Signature has an item without "=": .*\\x9b.*\\x9d/);
    clean('listen', l.out() + l.err());
  } finally {
    l.child.kill('SIGTERM');
    await l.exit;
  }
});

test('a delivery id with a control character is forwarded (percent-encoded in X-Hookdrill-Delivery-Id); a stored header no request can carry buries the row at once, named', async () => {
  const { Worker } = await import('../src/worker/index.js');
  const { forwardHandler } = await import('../src/worker/forward.js');
  const path = join(tempDir(), 'inbox.db');
  const db = openSqliteInbox(path);
  const put = (id: string, headers: Record<string, string>) =>
    db.put({ source: 'stripe', deliveryId: id, eventType: 'invoice.paid', body: Buffer.from('{}'), headers, receivedAt: Date.now() });
  await put('evt_\u001bid', { 'content-type': 'application/json' });
  await put('evt_badheader', { 'content-type': 'application/json', 'x-note': 'a\u001bb' });
  const app = await startServer((_req, res) => reply(res, 200));
  try {
    const dead: string[] = [];
    const worker = new Worker({
      inbox: db,
      concurrency: 2,
      maxAttempts: 5,
      handler: forwardHandler(new URL(app.url), { timeoutMs: 2_000 }),
      backoff: { baseMs: 10, maxMs: 10 },
      onOutcome: (o) => {
        if (o.outcome === 'dead') dead.push(`${o.key.deliveryId}: ${o.error}`);
      },
    });
    await worker.drain();
    assert.equal(app.requests.length, 1, 'the id was forwarded, the unforwardable header was never tried five times');
    assert.equal(app.requests[0]?.headers['x-hookdrill-delivery-id'], 'evt_%1Bid');
    assert.deepEqual(dead, ['evt_badheader: stored header x-note cannot be forwarded: its value holds a control character (0x1b)']);
  } finally {
    await app.close();
    await db.close();
  }
});

test('API-key headers (X-Api-Key, Api-Key, X-Auth-Token) are credentials: listen does not store them', async () => {
  const { startListen, stopAll } = await import('./helpers/listen.js');
  const path = join(tempDir(), 'i.db');
  const { p, url } = await startListen(path, SECRET, '--no-worker');
  try {
    const body = Buffer.from('{"id":"evt_key","object":"event","type":"invoice.paid"}');
    const signed = providers.stripe.sign(body, [SECRET], { nowMs: Date.now(), deliveryId: 'evt_key', eventType: 'invoice.paid' });
    const r = await fetch(url, {
      method: 'POST',
      body,
      headers: { ...signed, 'X-Api-Key': 'k1', 'Api-Key': 'k2', 'X-Auth-Token': 'k3', 'X-Env': 'kept' },
    });
    assert.equal(r.status, 200);
  } finally {
    await stopAll(p);
  }
  const db = openSqliteInbox(path);
  const row = await db.get({ source: 'stripe', deliveryId: 'evt_key' });
  await db.close();
  assert.equal(row?.headers['x-env'], 'kept');
  for (const h of ['x-api-key', 'api-key', 'x-auth-token']) assert.equal(row?.headers[h], undefined, h);
});
