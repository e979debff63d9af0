import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { hookdrill } from './helpers/cli.js';
import { startListen, stopAll } from './helpers/listen.js';
import { startStripeApi } from './helpers/stripe-api.js';
import type { StripeEvent } from './helpers/stripe-api.js';
import { tempDir } from './helpers/tmp.js';

const KEY = 'sk_test_51Reconcile0000000000000000abcd';
const now = Math.floor(Date.now() / 1000);
const events: StripeEvent[] = Array.from({ length: 1_000 }, (_, i) => ({
  id: `evt_rec_${String(i).padStart(4, '0')}`,
  type: i % 2 ? 'invoice.paid' : 'customer.created',
  created: now - 3_600 + i * 3,
  delivered: i % 97 !== 0,
}));
const MISSING = new Set(['evt_rec_0003', 'evt_rec_0250', 'evt_rec_0251', 'evt_rec_0777', 'evt_rec_0999']);
const DEAD = new Set(['evt_rec_0100', 'evt_rec_0500']);

async function inboxWithout(missing: Set<string>): Promise<string> {
  const path = join(tempDir(), 'inbox.db');
  const inbox = openSqliteInbox(path);
  for (const e of events) {
    if (missing.has(e.id)) continue;
    await inbox.put({
      source: 'stripe',
      deliveryId: e.id,
      eventType: e.type,
      body: Buffer.from('{}'),
      headers: {},
      receivedAt: e.created * 1000,
    });
  }
  const rows = await inbox.claim({ limit: 2_000, leaseMs: 60_000 });
  await inbox.settle(
    rows.map((r) =>
      DEAD.has(r.deliveryId) ? { key: r, fence: r.fence, outcome: 'dead', error: 'crm down' } : { key: r, fence: r.fence, outcome: 'done' },
    ),
  );
  await inbox.close();
  return path;
}

test('reconcile: 1,000 Stripe events over ten pages (one page rate-limited) against an inbox — exactly the missing ones, and the dead ones, exit 1', async () => {
  const api = await startStripeApi({ key: KEY, events, rateLimitOn: [3] });
  try {
    const inbox = await inboxWithout(MISSING);
    const r = await hookdrill(['reconcile', '--provider', 'stripe', '--since', '2h', '--api-base', api.url, '--inbox', inbox, '--json'], {
      STRIPE_API_KEY: KEY,
    });
    assert.equal(r.code, 1, r.stderr);
    const result = JSON.parse(r.stdout) as { sent: number; held: number; missing: { id: string }[]; dead: { id: string }[] };
    assert.equal(result.sent, 1_000);
    assert.deepEqual(new Set(result.missing.map((e) => e.id)), MISSING);
    assert.deepEqual(new Set(result.dead.map((e) => e.id)), DEAD);
    assert.equal(result.held, 995);
    assert.deepEqual(api.rateLimited, [3], 'the 429 was met, and waited out');
    assert.ok(api.requests() >= 11, 'every page was fetched');
    assert.doesNotMatch(r.stdout + r.stderr, /sk_test_51Reconcile/);
  } finally {
    await api.close();
  }
});

test('reconcile: nothing missing is exit 0; --stored reads a command; --only-failed asks for what Stripe saw fail', async () => {
  const api = await startStripeApi({ key: KEY, events });
  try {
    const inbox = await inboxWithout(new Set());
    const all = await hookdrill(['reconcile', '--provider', 'stripe', '--since', '2h', '--api-base', api.url, '--inbox', inbox], {
      STRIPE_API_KEY: KEY,
    });
    assert.equal(all.code, 0, all.stderr);
    assert.match(all.stdout, /OK stripe sent 1000 events .* 1000 held · 0 missing · 2 held but dead/);
    const file = join(tempDir(), 'ids.txt');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(
      file,
      `${events
        .filter((e) => !e.delivered)
        .slice(1)
        .map((e) => e.id)
        .join('\n')}\n`,
    );
    const failed = await hookdrill(
      ['reconcile', '--provider', 'stripe', '--since', '2h', '--api-base', api.url, '--stored', `cat ${file}`, '--only-failed', '--json'],
      { STRIPE_API_KEY: KEY },
    );
    assert.equal(failed.code, 1, failed.stderr);
    const result = JSON.parse(failed.stdout) as { sent: number; missing: { id: string }[] };
    assert.equal(result.sent, events.filter((e) => !e.delivered).length);
    assert.deepEqual(
      result.missing.map((e) => e.id),
      [events.find((e) => !e.delivered)?.id],
    );
  } finally {
    await api.close();
  }
});

test('reconcile: a wrong key, a missing key variable, bad input — one line, exit 2, the key never shown', async () => {
  const api = await startStripeApi({ key: KEY, events });
  try {
    const inbox = await inboxWithout(new Set());
    const base = ['reconcile', '--provider', 'stripe', '--since', '2h', '--api-base', api.url, '--inbox', inbox];
    const wrong = await hookdrill(base, { STRIPE_API_KEY: 'sk_test_51WrongKey00000000000000wxyz' });
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /the Stripe API answered 401: Invalid API Key provided/);
    assert.doesNotMatch(wrong.stderr, /sk_test_51WrongKey00000000000000wxyz/);
    const unset = await hookdrill(base, {});
    assert.equal(unset.code, 2);
    assert.match(unset.stderr, /STRIPE_API_KEY is not set/);
    for (const [args, message] of [
      [['reconcile', '--provider', 'slack', '--since', '2h', '--inbox', inbox], /only stripe and github have an API/],
      [['reconcile', '--provider', 'stripe', '--inbox', inbox], /--since is required/],
      [['reconcile', '--provider', 'stripe', '--since', '2h'], /--inbox FILE\|URL or --stored/],
    ] as const) {
      const bad = await hookdrill([...args], { STRIPE_API_KEY: KEY });
      assert.equal(bad.code, 2, bad.stderr);
      assert.equal(bad.stderr.trim().split('\n').length, 1);
      assert.match(bad.stderr, message);
    }
  } finally {
    await api.close();
  }
});

test('reconcile --fix: the missing events go into the inbox, listen forwards each once, a second reconcile finds nothing; --dry-run changes nothing', async () => {
  const { startServer, reply } = await import('./helpers/server.js');
  const api = await startStripeApi({ key: KEY, events });
  const app = await startServer((_req, res) => reply(res, 200, 'ok'));
  const inbox = await inboxWithout(MISSING);
  const base = ['reconcile', '--provider', 'stripe', '--since', '2h', '--api-base', api.url, '--inbox', inbox, '--json'];
  const { p: listen } = await startListen(inbox, 'whsec_fix', '--forward-to', app.url);
  try {
    const dry = await hookdrill([...base, '--fix', '--dry-run'], { STRIPE_API_KEY: KEY });
    assert.equal(dry.code, 1, dry.stderr);
    assert.equal((JSON.parse(dry.stdout) as { fixed: number }).fixed, 0);
    assert.equal(app.requests.length, 0, 'a dry run puts nothing');
    const fixed = await hookdrill([...base, '--fix'], { STRIPE_API_KEY: KEY });
    assert.equal(fixed.code, 1, 'they were missing when it looked');
    assert.equal((JSON.parse(fixed.stdout) as { fixed: number }).fixed, MISSING.size);
    for (let i = 0; app.requests.length < MISSING.size; i++) {
      if (i > 200) assert.fail(`forwarded ${app.requests.length} of ${MISSING.size}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    await new Promise((r) => setTimeout(r, 300));
    const forwarded = app.requests.map((r) => String(r.headers['x-hookdrill-delivery-id']));
    assert.deepEqual(new Set(forwarded), MISSING);
    assert.equal(forwarded.length, MISSING.size, 'each processed once');
    const again = await hookdrill(base, { STRIPE_API_KEY: KEY });
    assert.equal(again.code, 0, again.stdout);
    assert.equal((JSON.parse(again.stdout) as { missing: unknown[] }).missing.length, 0);
  } finally {
    await stopAll(listen);
    await app.close();
    await api.close();
  }
});

test('reconcile stripe --redeliver-to: the missing events signed with the endpoint secret, verified and stored by listen under their own ids', async () => {
  const api = await startStripeApi({ key: KEY, events });
  const held = await inboxWithout(MISSING);
  const target = join(tempDir(), 'target.db');
  const { p: listen, url } = await startListen(target, 'whsec_redeliver');
  try {
    const r = await hookdrill(
      ['reconcile', '--provider', 'stripe', '--since', '2h', '--api-base', api.url, '--inbox', held, '--redeliver-to', url, '--json'],
      { STRIPE_API_KEY: KEY, HOOKDRILL_SECRET: 'whsec_redeliver' },
    );
    assert.equal(r.code, 1, r.stderr);
    const result = JSON.parse(r.stdout) as { redelivered: { summary: { events: number }; failed: unknown[] } };
    assert.equal(result.redelivered.summary.events, MISSING.size);
    assert.deepEqual(result.redelivered.failed, []);
    assert.doesNotMatch(r.stdout + r.stderr, /whsec_redeliver/);
  } finally {
    await stopAll(listen);
    await api.close();
  }
  const inbox = openSqliteInbox(target);
  const rows = await inbox.select({}, { limit: 100 });
  await inbox.close();
  assert.deepEqual(new Set(rows.map((row) => row.deliveryId)), MISSING);
});

test('reconcile stripe --type asks Stripe for those types only (types[], wildcards too); more than 20 is refused', async () => {
  const api = await startStripeApi({ key: KEY, events });
  try {
    const inbox = await inboxWithout(MISSING);
    const base = ['reconcile', '--provider', 'stripe', '--since', '2h', '--api-base', api.url, '--inbox', inbox, '--json'];
    const r = await hookdrill([...base, '--type', 'invoice.*'], { STRIPE_API_KEY: KEY });
    const result = JSON.parse(r.stdout) as { sent: number; missing: { id: string; type: string }[] };
    assert.equal(result.sent, 500);
    assert.ok(result.missing.length > 0 && result.missing.every((e) => e.type === 'invoice.paid'));
    const many = await hookdrill([...base, ...Array.from({ length: 21 }, (_, i) => ['--type', `t${i}`]).flat()], { STRIPE_API_KEY: KEY });
    assert.equal(many.code, 2);
    assert.match(many.stderr, /at most 20/);
  } finally {
    await api.close();
  }
});

test('reconcile --redeliver-to interrupted (SIGINT) mid-way: says so, counts what was never sent as not redelivered, exit 1', async () => {
  const { spawnHookdrill } = await import('./helpers/spawned.js');
  const { startServer, reply } = await import('./helpers/server.js');
  const api = await startStripeApi({ key: KEY, events });
  // A receiver that takes its time: the run is still delivering when it is interrupted.
  const slow = await startServer(async (_req, res) => {
    await new Promise((r) => setTimeout(r, 1_500));
    reply(res, 200, 'ok');
  });
  try {
    const inbox = await inboxWithout(MISSING);
    const p = spawnHookdrill(
      [
        'reconcile',
        '--provider',
        'stripe',
        '--since',
        '2h',
        '--api-base',
        api.url,
        '--inbox',
        inbox,
        '--redeliver-to',
        slow.url,
        '--secret',
        'whsec_int',
        '--concurrency',
        '1',
        '--json',
      ],
      { STRIPE_API_KEY: KEY },
    );
    for (let i = 0; slow.requests.length === 0; i++) {
      if (i > 400) assert.fail('nothing was redelivered');
      await new Promise((r) => setTimeout(r, 25));
    }
    p.child.kill('SIGINT');
    assert.equal(await p.exit, 1, p.stderr());
    const out = p.lines.map((l) => (typeof l.text === 'string' ? l.text : JSON.stringify(l))).join('\n');
    const result = JSON.parse(out) as { ok: boolean; redelivered: { interrupted: boolean; failed: { status: string }[] } };
    assert.equal(result.redelivered.interrupted, true);
    assert.ok(result.redelivered.failed.filter((f) => f.status === 'not sent (interrupted)').length >= MISSING.size - 2);
    assert.ok(slow.requests.length < MISSING.size);
  } finally {
    await slow.close();
    await api.close();
  }
});

test('reconcile: an API that never answers and a pagination loop each end in one line, exit 2, within the stated limits (the client pull shares)', async () => {
  const inbox = await inboxWithout(new Set());
  for (const [fault, message] of [
    ['hang', /^hookdrill: the Stripe API at http:\/\/127\.0\.0\.1:\d+ did not answer within 1 s \(3 tries\)$/],
    ['loop', /^hookdrill: the Stripe API pointed back to a page it had already given \(cursor evt_rec_\d+\): stopped rather than loop$/],
  ] as const) {
    const api = await startStripeApi({ key: KEY, events, fault: () => fault });
    // It ends by itself: a hang is killed at 2 minutes and fails the exit code (no wall-clock bound, which load fails).
    const r = await hookdrill(
      ['reconcile', '--provider', 'stripe', '--since', '2h', '--api-base', api.url, '--inbox', inbox, '--api-timeout', '1s'],
      { STRIPE_API_KEY: KEY },
      [],
      undefined,
      120_000,
    );
    await api.close();
    assert.equal(r.code, 2, `${fault}: ${r.stderr}`);
    assert.match(r.stderr.trim(), message);
    if (fault === 'loop') assert.ok(api.requests() < 5, `the loop was seen at once (${api.requests()} requests)`);
  }
});

test('reconcile --fix: a payload over the 32 MiB listen stores, or nested too deep to write, is named and left out — the others go in (it was exit 70, or a 524 MB row)', async () => {
  const t0 = Math.floor(Date.now() / 1000) - 600;
  const list: StripeEvent[] = [
    { id: 'evt_fine', type: 'invoice.paid', created: t0, delivered: false },
    {
      id: 'evt_huge',
      type: 'invoice.paid',
      created: t0 + 1,
      delivered: false,
      objectJson: JSON.stringify({ pad: 'x'.repeat(33 * 1024 * 1024) }),
    },
    { id: 'evt_deep', type: 'invoice.paid', created: t0 + 2, delivered: false, objectJson: `${'['.repeat(100_000)}${']'.repeat(100_000)}` },
  ];
  const api = await startStripeApi({ key: KEY, events: list });
  const inbox = await inboxWithout(new Set(events.map((e) => e.id)));
  try {
    const r = await hookdrill(
      ['reconcile', '--provider', 'stripe', '--since', '2h', '--api-base', api.url, '--inbox', inbox, '--fix', '--json'],
      { STRIPE_API_KEY: KEY },
    );
    assert.equal(r.code, 1, r.stderr);
    const out = JSON.parse(r.stdout) as { fixed: number; unfetched: { id: string; error: string }[] };
    assert.equal(out.fixed, 1);
    const why = Object.fromEntries(out.unfetched.map((u) => [u.id, u.error]));
    assert.match(why.evt_huge ?? '', /its payload is [\d,]+ bytes, over the 32 MiB listen stores/);
    assert.match(why.evt_deep ?? '', /Stripe event evt_deep: nested too deep to be written as JSON/);
    const db = openSqliteInbox(inbox);
    assert.equal((await db.stats()).counts.pending, 1);
    await db.close();
  } finally {
    await api.close();
  }
});
