import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomUUID } from 'node:crypto';
import { existsSync, readFileSync, readdirSync, readlinkSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fixtureFromDelivery, writeFileAtomically } from '../src/fixtures/capture.js';
import { UsageError } from '../src/util/errors.js';
import { openInbox } from '../src/inbox/index.js';
import { providers } from '../src/providers/index.js';
import type { JsonValue, ProviderName } from '../src/providers/index.js';
import { hookdrill } from './helpers/cli.js';
import type { CliRun } from './helpers/cli.js';
import { SECRETS, verifyWithOfficialCode } from './helpers/official.js';
import { reply, startServer } from './helpers/server.js';
import { spawnHookdrill } from './helpers/spawned.js';
import type { Spawned } from './helpers/spawned.js';
import { stopAll } from './helpers/listen.js';
import { tempDir } from './helpers/tmp.js';
import { assertSameShape } from './helpers/json-shape.js';

/*
 * `fixtures capture`, end to end: real signed deliveries received by a real `hookdrill listen` into
 * a SQLite inbox, captured by the CLI, and sent again with `hookdrill send` to a receiver that checks
 * each request with the provider's own verifier, and to a second `listen` that stores it.
 */

/** `hookdrill listen --json` for any provider on a free port, once it says it is ready. */
async function listen(provider: ProviderName, inbox: string, secret: string): Promise<{ p: Spawned; url: string }> {
  const p = spawnHookdrill([
    'listen',
    '--json',
    '--port',
    '0',
    '--provider',
    provider,
    '--secret',
    secret,
    '--inbox',
    inbox,
    '--no-worker',
  ]);
  const ready = await p.waitFor((l) => l.event === 'ready', 15_000);
  return { p, url: String(ready.url) };
}

/** POST a body signed as the provider does; listen must answer 200 (stored and committed). */
async function post(provider: ProviderName, url: string, secret: string, body: Buffer, deliveryId: string, eventType: string) {
  const headers = providers[provider].sign(body, [secret], { nowMs: Date.now(), deliveryId, eventType });
  const res = await fetch(url, { method: 'POST', body, headers });
  assert.equal(res.status, 200, await res.text());
  return headers;
}

function assertUsageError(r: CliRun, pattern: RegExp): void {
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, pattern);
  assert.equal(r.stderr.trim().split('\n').length, 1, `expected one line, got:\n${r.stderr}`);
  assert.doesNotMatch(r.stderr, /\n\s+at |internal error/);
  assert.equal(r.stdout, '');
}

/** Personal data a real delivery might carry, in each shape redaction must catch. */
const PERSONAL = {
  email: 'ada.lovelace@analytical-engines.co.uk',
  name: 'Ada Lovelace',
  line1: '12 St James Square',
  city: 'Marylebone',
  postal: 'SW1Y 4JH',
  phone: '+44 20 7946 0958',
  card: '4000 0566 5566 5556',
};
const ORIGINALS = [...Object.values(PERSONAL), 'Lovelace', 'ada.lovelace', '7946 0958', '4000056655665556', '0566 5566', 'St James'];

function stripeEvent(id: string): Buffer {
  const event = {
    id,
    object: 'event',
    api_version: '2025-09-30.clover',
    created: 1764460800,
    type: 'charge.succeeded',
    livemode: false,
    pending_webhooks: 1,
    request: { id: 'req_Qz8rT2xYbLm1Pk', idempotency_key: '5a1c7f0e-9b8d-4c2a-8e3f-0a1b2c3d4e5f' },
    data: {
      object: {
        id: 'ch_3QhZ9rLkdIwHu7ix0a1b2c3d',
        object: 'charge',
        amount: 2000,
        currency: 'gbp',
        status: 'succeeded',
        customer: 'cus_QhZ9rLkdIwHu7i',
        receipt_email: PERSONAL.email,
        description: `Charge for ${PERSONAL.name} (${PERSONAL.email})`,
        billing_details: {
          name: PERSONAL.name,
          email: PERSONAL.email,
          phone: PERSONAL.phone,
          address: { line1: PERSONAL.line1, line2: null, city: PERSONAL.city, postal_code: PERSONAL.postal, state: null, country: 'GB' },
        },
        payment_method_details: { type: 'card', card: { brand: 'visa', last4: '5556', exp_month: 12, exp_year: 2030, country: 'GB' } },
        metadata: { card_on_file: PERSONAL.card, order_id: '5623819026618' },
      },
    },
  };
  // Stripe sends its events pretty-printed.
  return Buffer.from(JSON.stringify(event, null, 2));
}

function githubIssue(): Buffer {
  const login = 'adalovelace1815';
  return Buffer.from(
    JSON.stringify({
      action: 'opened',
      issue: {
        url: 'https://api.github.com/repos/acme/widgets/issues/1347',
        html_url: 'https://github.com/acme/widgets/issues/1347',
        id: 1913745291,
        number: 1347,
        title: 'Charged twice',
        user: {
          login,
          id: 583231,
          type: 'User',
          html_url: `https://github.com/${login}`,
          name: PERSONAL.name,
          email: PERSONAL.email,
          location: `${PERSONAL.line1}, ${PERSONAL.city} ${PERSONAL.postal}`,
        },
        state: 'open',
        created_at: '2026-11-30T00:00:00Z',
        body: `My card ${PERSONAL.card} was charged twice. Call ${PERSONAL.phone} or mail ${PERSONAL.email}. /cc @${login}`,
      },
      repository: {
        id: 186853002,
        name: 'widgets',
        full_name: 'acme/widgets',
        owner: { login: 'acme', id: 21031067, type: 'Organization' },
      },
      organization: { login: 'acme', id: 21031067 },
      sender: { login, id: 583231, type: 'User' },
    }),
  );
}

for (const provider of ['stripe', 'github'] as const) {
  test(`${provider}: a received delivery → capture --redact → send: verified by the official code, stored, fresh ids, nothing personal`, async () => {
    const dir = tempDir('hookdrill-capture-');
    const secret = SECRETS[provider] as string;
    const first = await listen(provider, join(dir, 'first.db'), secret);
    const second = await listen(provider, join(dir, 'second.db'), secret);
    const official = await startServer(async (req, res) => {
      try {
        await verifyWithOfficialCode(provider, req.rawBody, req.headers, secret);
        reply(res, 200, 'ok');
      } catch (err) {
        reply(res, 401, String(err));
      }
    });
    try {
      const id = provider === 'stripe' ? 'evt_1QhZ9rLkdIwHu7ixCaptured' : randomUUID();
      const event = provider === 'stripe' ? 'charge.succeeded' : 'issues.opened';
      const body = provider === 'stripe' ? stripeEvent(id) : githubIssue();
      const sent = await post(provider, first.url, secret, body, id, event);

      const out = join(dir, 'fixtures');
      const r = await hookdrill(['fixtures', 'capture', '--inbox', join(dir, 'first.db'), '--id', id, '--out', out, '--redact']);
      assert.equal(r.code, 0, r.stderr);
      const file = join(out, `${event}.json`);
      assert.match(r.stdout, new RegExp(`^wrote ${file.replaceAll('.', '\\.')} `, 'm'));
      assert.ok(r.stdout.includes(`send it with: hookdrill send --provider ${provider} ${file} --url URL --secret S`), r.stdout);
      assert.match(r.stdout, /^redacted: .*email.*name/m);

      const text = readFileSync(file, 'utf8');
      for (const original of [...ORIGINALS, ...(provider === 'github' ? ['adalovelace1815'] : [])]) {
        assert.ok(!text.includes(original), `${original} is in the fixture:\n${text}`);
      }
      // The body only: no header, no signature, no secret.
      const everything = text + r.stdout + r.stderr;
      for (const value of Object.values(sent))
        if (/sha256=|v1=/.test(value)) assert.ok(!everything.includes(value), 'a signature was written');
      assert.ok(!everything.includes(secret), 'the secret was written');
      const fixture = JSON.parse(text) as JsonValue;
      assertSameShape(JSON.parse(body.toString()) as JsonValue, fixture);
      assert.deepEqual(readdirSync(out), [`${event}.json`], 'no temporary file left beside it');

      // Sent twice to a receiver running the provider's own verifier: both verify, two distinct events.
      const s = await hookdrill([
        'send',
        '--provider',
        provider,
        file,
        '--url',
        official.url,
        '--secret',
        secret,
        '--count',
        '2',
        '--json',
      ]);
      assert.equal(s.code, 0, s.stdout + s.stderr);
      assert.equal(official.requests.length, 2);
      const ids =
        provider === 'stripe'
          ? official.requests.map((q) => (JSON.parse(q.rawBody.toString()) as { id: string }).id)
          : official.requests.map((q) => String(q.headers['x-github-delivery']));
      assert.equal(new Set(ids).size, 2, `two sends, two event ids: ${ids}`);
      assert.ok(!ids.includes(id), 'not the captured id');
      if (provider === 'github') {
        assert.deepEqual(
          official.requests.map((q) => q.headers['x-github-event']),
          ['issues', 'issues'],
        );
      } else {
        const bodies = official.requests.map((q) => JSON.parse(q.rawBody.toString()) as { created: number; request: { id: string } });
        assert.ok(
          bodies.every((b) => b.created >= Math.floor(Date.now() / 1000) - 60),
          'created is now',
        );
        assert.notEqual(bodies[0]?.request.id, 'req_Qz8rT2xYbLm1Pk');
      }

      // And to a second listen, which verifies with its own code and stores both.
      const s2 = await hookdrill(['send', '--provider', provider, file, '--url', second.url, '--secret', secret, '--count', '2']);
      assert.equal(s2.code, 0, s2.stdout + s2.stderr);
      const inspect = await hookdrill(['inspect', '--inbox', join(dir, 'second.db'), '--type', event, '--json']);
      assert.equal(inspect.code, 0, inspect.stderr);
      assert.equal((JSON.parse(inspect.stdout) as { total: number }).total, 2);
    } finally {
      await official.close();
      await stopAll(first.p, second.p);
    }
  });
}

test('without --redact the fixture is the stored body parsed, pretty-printed; --json says where it went', async () => {
  const dir = tempDir('hookdrill-capture-');
  const secret = SECRETS.stripe as string;
  const inbox = join(dir, 'inbox.db');
  const { p, url } = await listen('stripe', inbox, secret);
  try {
    const id = 'evt_1QhZ9rLkdIwHu7ixVerbatim';
    // Compact, as some senders write it: the fixture is the same JSON, pretty-printed.
    const body = Buffer.from(JSON.stringify(JSON.parse(stripeEvent(id).toString())));
    await post('stripe', url, secret, body, id, 'charge.succeeded');
    const out = join(dir, 'out');
    const r = await hookdrill(['fixtures', 'capture', '--inbox', inbox, '--id', id, '--source', 'stripe', '--out', out, '--json']);
    assert.equal(r.code, 0, r.stderr);
    const result = JSON.parse(r.stdout) as {
      command: string;
      path: string;
      provider: string;
      eventType: string;
      redacted: boolean;
      send: string;
    };
    assert.equal(result.command, 'fixtures capture');
    assert.equal(result.path, join(out, 'charge.succeeded.json'));
    assert.deepEqual([result.provider, result.eventType, result.redacted], ['stripe', 'charge.succeeded', false]);
    const text = readFileSync(result.path, 'utf8');
    assert.equal(text, `${JSON.stringify(JSON.parse(body.toString()), null, 2)}\n`);
    assert.deepEqual(JSON.parse(text), JSON.parse(body.toString()));

    // Again: refused without --force (the file is left as it was), replaced with it.
    writeFileSync(result.path, '{"edited": true}\n');
    assertUsageError(
      await hookdrill(['fixtures', 'capture', '--inbox', inbox, '--id', id, '--out', out]),
      /charge\.succeeded\.json already exists: give --force/,
    );
    assert.equal(readFileSync(result.path, 'utf8'), '{"edited": true}\n');
    assert.deepEqual(readdirSync(out), ['charge.succeeded.json'], 'no temporary file left');
    const forced = await hookdrill(['fixtures', 'capture', '--inbox', inbox, '--id', id, '--out', out, '--force']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.equal(readFileSync(result.path, 'utf8'), text);
    assert.deepEqual(readdirSync(out), ['charge.succeeded.json']);
  } finally {
    await stopAll(p);
  }
});

test('errors: unknown id, missing flags, a body that is not JSON, an ambiguous id: one line, exit 2, no file', async () => {
  const dir = tempDir('hookdrill-capture-');
  const secret = SECRETS.slack as string;
  const inbox = join(dir, 'slack.db');
  const out = join(dir, 'out');
  const { p, url } = await listen('slack', inbox, secret);
  let formId: string;
  try {
    // A slash command: form-encoded, signed like every Slack request, stored by listen under a hash.
    const form = Buffer.from('token=gIkuvaNzQIHg97ATvDxqgjtO&team_id=T0001&command=%2Fweather&text=94070&user_name=ada');
    formId = `sha256:${createHash('sha256').update(form).digest('hex')}`;
    const headers = providers.slack.sign(form, [secret], { nowMs: Date.now(), deliveryId: formId, eventType: 'command' });
    const res = await fetch(url, {
      method: 'POST',
      body: form,
      headers: { ...headers, 'Content-Type': 'application/x-www-form-urlencoded' },
    });
    assert.equal(res.status, 200, await res.text());
  } finally {
    await stopAll(p);
  }

  assertUsageError(await hookdrill(['fixtures', 'capture', '--inbox', inbox, '--id', 'Ev_nope', '--out', out]), /no delivery Ev_nope in /);
  assertUsageError(
    await hookdrill(['fixtures', 'capture', '--inbox', inbox, '--id', 'Ev_nope', '--source', 'github', '--out', out]),
    /no github delivery Ev_nope in /,
  );
  assertUsageError(await hookdrill(['fixtures', 'capture', '--inbox', inbox, '--id', formId]), /required option '--out <dir>'/);
  assertUsageError(await hookdrill(['fixtures', 'capture', '--id', formId, '--out', out]), /required option '--inbox/);
  assertUsageError(
    await hookdrill(['fixtures', 'capture', '--inbox', join(dir, 'missing.db'), '--id', formId, '--out', out]),
    /missing\.db/,
  );
  assertUsageError(
    await hookdrill(['fixtures', 'capture', '--inbox', inbox, '--id', formId, '--out', out]),
    /is form-encoded \(application\/x-www-form-urlencoded\).*cannot be captured/,
  );
  assertUsageError(
    await hookdrill(['fixtures', 'capture', '--inbox', inbox, '--id', formId, '--out', out, '--name', '../escape']),
    /form-encoded/,
  );
  assert.ok(!existsSync(out), 'nothing was written, not even the directory');

  // The same id from two providers (the inbox keys on both): --source picks one.
  const shared = join(dir, 'shared.db');
  const box = await openInbox(shared);
  const row = { deliveryId: 'dup_1', headers: { 'content-type': 'application/json' }, receivedAt: Date.now() };
  await box.put({ ...row, source: 'stripe', eventType: 'invoice.paid', body: Buffer.from('{"id":"dup_1","type":"invoice.paid"}') });
  await box.put({
    ...row,
    source: 'github',
    eventType: 'issues.opened',
    headers: { ...row.headers, 'x-github-event': 'issues' },
    body: Buffer.from('{"action":"opened"}'),
  });
  await box.put({
    ...row,
    deliveryId: 'evil',
    source: 'stripe',
    eventType: '../../etc/passwd',
    body: Buffer.from('{"type":"../../etc/passwd"}'),
  });
  await box.close();
  assertUsageError(
    await hookdrill(['fixtures', 'capture', '--inbox', shared, '--id', 'dup_1', '--out', out]),
    /dup_1 is held for several sources .*\(github, stripe\): give --source/,
  );
  assertUsageError(
    await hookdrill(['fixtures', 'capture', '--inbox', shared, '--id', 'evil', '--out', out]),
    /event type of delivery evil \("\.\.\/\.\.\/etc\/passwd"\) cannot be a file name: give --name/,
  );
  assertUsageError(
    await hookdrill(['fixtures', 'capture', '--inbox', shared, '--id', 'evil', '--out', out, '--name', '../x']),
    /--name \.\.\/x: give a file name/,
  );
  assert.ok(!existsSync(out));
  const gh = await hookdrill([
    'fixtures',
    'capture',
    '--inbox',
    shared,
    '--id',
    'dup_1',
    '--source',
    'github',
    '--out',
    out,
    '--name',
    'first-issue',
  ]);
  assert.equal(gh.code, 0, gh.stderr);
  // A file not named after the event: the command says which event to send it as.
  assert.match(gh.stdout, /send it with: hookdrill send --provider github .*first-issue\.json --event issues\.opened --url URL --secret S/);
  assert.deepEqual(readdirSync(out), ['first-issue.json']);
});

test('slack: the verification token in a body is never written, redaction or not', async () => {
  const dir = tempDir('hookdrill-capture-');
  const secret = SECRETS.slack as string;
  const inbox = join(dir, 'slack.db');
  const { p, url } = await listen('slack', inbox, secret);
  try {
    const token = 'gIkuvaNzQIHg97ATvDxqgjtO';
    const shipped = JSON.parse(readFileSync(new URL('../../fixtures/slack/message.json', import.meta.url), 'utf8')) as Record<
      string,
      unknown
    >;
    const body = Buffer.from(JSON.stringify({ ...shipped, token, event_id: 'Ev0CAPTURED1' }));
    await post('slack', url, secret, body, 'Ev0CAPTURED1', 'message');
    const out = join(dir, 'out');
    const r = await hookdrill(['fixtures', 'capture', '--inbox', inbox, '--id', 'Ev0CAPTURED1', '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /verification token/);
    const text = readFileSync(join(out, 'message.json'), 'utf8');
    assert.ok(!text.includes(token) && !r.stdout.includes(token));
    const { token: fake, ...rest } = JSON.parse(text) as Record<string, unknown>;
    const { token: _t, ...restOriginal } = JSON.parse(body.toString()) as Record<string, unknown>;
    assert.equal(typeof fake, 'string');
    assert.equal((fake as string).length, token.length);
    assert.deepEqual(rest, restOriginal, 'the rest is the body as received');
  } finally {
    await stopAll(p);
  }
});

test('a file that appears between the check and the write is not replaced, and no temporary file is left', () => {
  const dir = tempDir('hookdrill-capture-');
  // A dangling symlink: existsSync says no (it follows the link), but the name is taken.
  const path = join(dir, 'invoice.paid.json');
  symlinkSync(join(dir, 'nowhere'), path);
  assert.throws(
    () => writeFileAtomically(path, '{}\n', false),
    (err: unknown) => err instanceof UsageError && /already exists/.test(err.message),
  );
  assert.deepEqual(readdirSync(dir), ['invoice.paid.json']);
  assert.equal(readlinkSync(path), join(dir, 'nowhere'));
});

test('each provider: the file is named so that send derives the same event', () => {
  const at = (source: string, eventType: string | undefined, body: unknown, headers: Record<string, string> = {}) =>
    fixtureFromDelivery({ source, deliveryId: 'd1', eventType, body: Buffer.from(JSON.stringify(body)), headers });
  const cases = [
    at('shopify', 'orders/create', { id: 1 }, { 'x-shopify-topic': 'orders/create' }),
    at('github', 'push', { ref: 'refs/heads/main' }, { 'x-github-event': 'push' }),
    at('github', undefined, { action: 'closed' }, { 'x-github-event': 'issues' }),
    at('standard', 'invoice.paid', { type: 'invoice.paid', timestamp: '2026-11-30T00:00:00Z' }),
    at('slack', 'app_mention', { type: 'event_callback', event: { type: 'app_mention' } }),
  ];
  assert.deepEqual(
    cases.map((c) => [c.fileName, c.eventType, c.sendEvent]),
    [
      ['orders.create.json', 'orders/create', undefined],
      ['push.json', 'push', undefined],
      ['issues.closed.json', 'issues.closed', undefined],
      ['invoice.paid.json', 'invoice.paid', undefined],
      ['app_mention.json', 'app_mention', undefined],
    ],
  );
  for (const c of cases) assert.equal(providers[c.provider].describe(c.body, c.fileName.slice(0, -5)).eventType, c.eventType);
  assert.throws(() => at('stripe', undefined, [1, 2]), /is JSON but not an object \(an array\)/);
  assert.throws(() => at('braintree', 'x', {}), /came from "braintree", which hookdrill cannot send as/);
});
