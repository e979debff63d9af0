import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hookdrill } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { PYTHON } from './helpers/python.js';
import { tempDir } from './helpers/tmp.js';
import { PY, SECRET, startPython } from './helpers/verdicts.js';
import { ACME_DECLARATION } from './helpers/acme.js';

// Issue 52, item 4: a fixture file of the user's goes out byte for byte as written — its `\u00e9`
// and `\/` escapes, its 2-space layout, its key order and its final newline — but for the values
// the tool makes fresh per event (ids, timestamps) and those --set replaces. Before, the body was
// parsed and written again (JSON.stringify, or the provider's own writer), and a receiver right for
// the platform's real bytes was judged on other bytes.
//
// The receiver is the Python one (test/receivers/webhook_receiver.py): it verifies each request's
// signature over the bytes it received, answers 2xx only when they verify, and --dump writes each
// request as it arrived.

/** The body of the one request the receiver wrote, as it arrived; the dump is emptied for the next. */
function receivedBody(dump: string): string {
  const files = readdirSync(dump);
  assert.equal(files.length, 1, `the receiver wrote ${files.length} requests`);
  const raw = readFileSync(join(dump, files[0] as string));
  rmSync(join(dump, files[0] as string));
  const at = raw.indexOf('\r\n\r\n');
  return raw.subarray(at + 4).toString('utf8');
}

/** `text` with each of its `from` values written where they were, as `to` is written (JSON). */
function withValues(text: string, values: readonly [from: string, to: unknown][]): string {
  let out = text;
  for (const [from, to] of values) {
    assert.equal(out.split(from).length, 2, `${from} appears once in the fixture`);
    out = out.replace(from, JSON.stringify(to));
  }
  return out;
}

// A user's file: keys not sorted, non-ASCII written as \u escapes and slashes as \/ (as PHP's
// json_encode and Python's json.dumps write them), indented by two, a final newline.
const STRIPE_FILE = `{
  "type": "invoice.paid",
  "id": "evt_FILE0000000000000000001",
  "object": "event",
  "api_version": "2024-06-20",
  "created": 1700000000,
  "livemode": false,
  "pending_webhooks": 1,
  "request": null,
  "data": {
    "object": {
      "object": "invoice",
      "id": "in_1",
      "description": "Caf\\u00e9 cr\\u00e8me, https:\\/\\/example.test\\/invoices\\/in_1",
      "amount_paid": 4200,
      "currency": "eur",
      "status": "paid"
    }
  }
}
`;

test('a Stripe fixture file goes out as written: escapes, layout, key order and final newline kept, only the fresh id and time and the --set value new', async () => {
  const dir = tempDir();
  const file = join(dir, 'my-event.json');
  writeFileSync(file, STRIPE_FILE);
  const r = await startPython('stripe', { secret: SECRET.stripe as string, dir, dump: true });
  try {
    const sent = await hookdrill([
      'send',
      file,
      '--provider',
      'stripe',
      '--secret',
      SECRET.stripe as string,
      '--url',
      r.url,
      '--no-retry',
      '--set',
      'data.object.amount_paid=5000',
    ]);
    assert.equal(sent.code, 0, sent.stdout + sent.stderr);
    const body = receivedBody(r.dump as string);
    const event = JSON.parse(body) as { id: string; created: number };
    assert.notEqual(event.id, 'evt_FILE0000000000000000001', 'the id is made fresh');
    assert.match(event.id, /^evt_[A-Za-z0-9]{24}$/);
    assert.ok(Math.abs(event.created - Date.now() / 1000) < 120, 'the time is now');
    assert.equal(
      body,
      withValues(STRIPE_FILE, [
        ['"evt_FILE0000000000000000001"', event.id],
        ['1700000000', event.created],
        ['4200', 5000],
      ]),
    );
  } finally {
    r.stop();
  }
});

// A captured HubSpot batch (the body is the list of events): every event's id and time fresh, the rest as captured.
const HUBSPOT_FILE = `[
  {
    "subscriptionType": "contact.creation",
    "eventId": 100000001,
    "objectId": 123,
    "portalId": 62515,
    "occurredAt": 1700000000000,
    "appId": 54321,
    "attemptNumber": 0,
    "changeSource": "CRM_UI",
    "note": "Ren\\u00e9e \\/ Zo\\u00eb"
  },
  {
    "subscriptionType": "contact.creation",
    "eventId": 100000002,
    "objectId": 124,
    "portalId": 62515,
    "occurredAt": 1700000000001,
    "appId": 54321,
    "attemptNumber": 0,
    "changeSource": "CRM_UI",
    "note": "caf\\u00e9"
  }
]
`;

test('a captured HubSpot batch goes out as captured but for each event its fresh id and time', async () => {
  const dir = tempDir();
  const file = join(dir, 'batch.json');
  writeFileSync(file, HUBSPOT_FILE);
  const r = await startPython('hubspot', { secret: SECRET.hubspot as string, dir, dump: true });
  try {
    const sent = await hookdrill([
      'send',
      file,
      '--provider',
      'hubspot',
      '--secret',
      SECRET.hubspot as string,
      '--url',
      r.url,
      '--no-retry',
    ]);
    assert.equal(sent.code, 0, sent.stdout + sent.stderr);
    const body = receivedBody(r.dump as string);
    const events = JSON.parse(body) as { eventId: number; occurredAt: number }[];
    assert.equal(events.length, 2);
    assert.ok(events.every((e) => e.eventId !== 100000001 && e.eventId !== 100000002 && Math.abs(e.occurredAt - Date.now()) < 120_000));
    assert.equal(
      body,
      withValues(HUBSPOT_FILE, [
        ['100000001', events[0]?.eventId],
        ['1700000000000', events[0]?.occurredAt],
        ['100000002', events[1]?.eventId],
        ['1700000000001', events[1]?.occurredAt],
      ]),
    );
  } finally {
    r.stop();
  }
});

// A team's own platform, declared in the project file (as test/declared-cli.test.ts declares it),
// its id in the body: its fixtures folder holds deliveries as the platform writes them.
const ACME = { ...ACME_DECLARATION, id: { body: 'id' }, fixtures: 'webhooks', fixture: 'payment.succeeded' };
const ACME_FILE = `{
  "type": "payment.succeeded",
  "id": "pay_FILE00000000000000000001",
  "data": {
    "customer": "Zo\\u00eb \\u00d8rsted",
    "receipt": "https:\\/\\/acme.test\\/r\\/1",
    "amount": 4200,
    "currency": "eur"
  }
}
`;

test("a declared provider's fixture goes out as its file is written, but for the fresh id", async () => {
  const dir = tempDir();
  writeFileSync(
    join(dir, 'hookdrill.config.json'),
    JSON.stringify({ provider: 'acme', secretEnv: 'ACME_SECRET', providers: { acme: ACME } }),
  );
  mkdirSync(join(dir, 'webhooks'));
  writeFileSync(join(dir, 'webhooks', 'payment.succeeded.json'), ACME_FILE);
  const secret = 'acme-signing-secret';
  const r = await startPython('acme', { secret, dir, dump: true });
  try {
    // The default fixture (from the declared folder), then the same file named as a path.
    for (const args of [[], ['webhooks/payment.succeeded.json']]) {
      const sent = await hookdrill(['send', ...args, '--url', r.url, '--no-retry'], { ACME_SECRET: secret }, [], dir);
      assert.equal(sent.code, 0, sent.stdout + sent.stderr);
      const body = receivedBody(r.dump as string);
      const { id } = JSON.parse(body) as { id: string };
      assert.match(id, /^pay_[A-Za-z0-9]{24}$/);
      assert.notEqual(id, 'pay_FILE00000000000000000001');
      assert.equal(body, withValues(ACME_FILE, [['"pay_FILE00000000000000000001"', id]]));
    }
  } finally {
    r.stop();
  }
});

// The verdict: a receiver that changes the body's line ends before it verifies (a text-mode stream
// on Windows: the Python receiver's crlf-lines flaw) refuses every delivery of a platform that
// writes its JSON pretty-printed, as Acme's fixtures show it does. Judged on the file re-serialised
// (compact, no line ends to change) it passed every case: a false pass.
test("check judges a declared platform's receiver on the fixture's own bytes: one that rewrites line ends fails valid, and is told why", async () => {
  const dir = tempDir();
  const acme = { ...ACME, id: { header: 'Acme-Delivery', prefix: 'dlv_' } };
  writeFileSync(join(dir, 'hookdrill.config.json'), JSON.stringify({ provider: 'acme', secretEnv: 'ACME_SECRET', providers: { acme } }));
  mkdirSync(join(dir, 'webhooks'));
  writeFileSync(join(dir, 'webhooks', 'payment.succeeded.json'), ACME_FILE.replace(/\s*"id": "pay_FILE0+1",/, ''));
  const secret = 'acme-signing-secret';
  const store = join(dir, 'stored.txt');
  const r = await hookdrill(
    [
      'check',
      '--url',
      `http://127.0.0.1:${await freePort()}/`,
      '--receiver',
      `${PYTHON} ${PY} serve --provider acme --secret ${secret} --port "$PORT" --store ${store} --flaw crlf-lines`,
      '--stored',
      `${PYTHON} ${PY} ids --store ${store}`,
    ],
    { ACME_SECRET: secret },
    [],
    dir,
  );
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.match(r.stdout, /✗ valid: your receiver accepts a valid delivery only when the body has no line breaks/);
});
