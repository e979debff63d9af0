import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from '../src/util/errors.js';
import { loadFixtureFile, parseOverride, prepareEvent, resolveFixtures } from '../src/fixtures/index.js';
import { providers } from '../src/providers/index.js';

test('each prepared event is a new one: fresh id and timestamp, fixture left untouched', () => {
  const [fixture] = resolveFixtures(['invoice.paid'], 'stripe');
  assert.ok(fixture);
  const before = JSON.stringify(fixture.body);
  const now = Date.parse('2026-11-30T12:00:00Z');
  const ids = new Set<string>();
  for (let i = 0; i < 1000; i++) {
    const e = prepareEvent(providers.stripe, fixture, [], now);
    ids.add(e.deliveryId);
    const body = JSON.parse(e.rawBody.toString());
    assert.equal(body.id, e.deliveryId);
    assert.equal(body.created, now / 1000);
  }
  assert.equal(ids.size, 1000);
  assert.equal(JSON.stringify(fixture.body), before);
});

test('slack: fresh event_id, event_time and event_ts; url_verification gets a fresh challenge', () => {
  const [message, challenge] = resolveFixtures(['message', 'url_verification'], 'slack');
  const now = Date.parse('2026-11-30T12:00:00.123Z');
  const a = JSON.parse(prepareEvent(providers.slack, message!, [], now).rawBody.toString());
  const b = JSON.parse(prepareEvent(providers.slack, message!, [], now).rawBody.toString());
  assert.notEqual(a.event_id, b.event_id);
  assert.equal(a.event_time, Math.floor(now / 1000));
  assert.match(a.event.event_ts, new RegExp(`^${Math.floor(now / 1000)}\\.\\d{6}$`));
  const c1 = JSON.parse(prepareEvent(providers.slack, challenge!, [], now).rawBody.toString()).challenge;
  const c2 = JSON.parse(prepareEvent(providers.slack, challenge!, [], now).rawBody.toString()).challenge;
  assert.notEqual(c1, c2);
});

test('--set reaches into arrays, parses JSON values, and pins an id when asked', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookdrill-set-'));
  const file = join(dir, 'invoice.paid.json');
  writeFileSync(
    file,
    JSON.stringify({
      id: 'evt_1',
      object: 'event',
      type: 'invoice.paid',
      created: 1,
      livemode: false,
      data: { object: { object: 'invoice', number: null, attempted: true, lines: { data: [{ amount: 1 }] } } },
    }),
  );
  const fixture = loadFixtureFile(file, 'stripe');
  const sets = ['data.object.lines.data.0.amount=999', 'data.object.attempted=false', 'id=evt_pinned', 'data.object.number="0042"'].map(
    parseOverride,
  );
  const e = prepareEvent(providers.stripe, fixture, sets, Date.now());
  const body = JSON.parse(e.rawBody.toString());
  assert.equal(body.data.object.lines.data[0].amount, 999);
  assert.equal(body.data.object.attempted, false);
  assert.equal(body.data.object.number, '0042');
  assert.equal(e.deliveryId, 'evt_pinned', 'a pinned id makes deliberate duplicates');
  assert.throws(
    () => prepareEvent(providers.stripe, fixture, [parseOverride('data.object.lines.data.5.amount=1')], Date.now()),
    UsageError,
  );
  assert.throws(() => parseOverride('noequals'), UsageError);
});

test('a directory of fixtures, and a user file named for its event', () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookdrill-fixtures-'));
  writeFileSync(join(dir, 'b.json'), '{"type":"b.happened","id":"evt_b"}');
  writeFileSync(join(dir, 'a.json'), '{"type":"a.happened","id":"evt_a"}');
  writeFileSync(join(dir, 'notes.txt'), 'ignored');
  const fixtures = resolveFixtures([dir], 'stripe');
  assert.deepEqual(
    fixtures.map((f) => f.name),
    ['a', 'b'],
  );

  const release = join(dir, 'release.published.json');
  writeFileSync(release, '{"action":"published","release":{"id":1}}');
  const [f] = resolveFixtures([release], 'github');
  const e = prepareEvent(providers.github, f!, [], Date.now());
  assert.equal(e.eventType, 'release.published');
  assert.equal(prepareEvent(providers.github, f!, [], Date.now(), 'deployment').eventType, 'deployment.published');

  writeFileSync(join(dir, 'array.json'), '[1,2]');
  assert.throws(() => resolveFixtures([join(dir, 'array.json')], 'stripe'), /must hold one JSON object/);
});

test('every send is a new event: GitHub numeric and node ids and timestamps, Shopify ids and gids in the shop offset', () => {
  const [issue] = resolveFixtures(['github/issues.opened'], undefined);
  const now = Date.UTC(2026, 11, 3, 6, 30, 0);
  const a = JSON.parse(prepareEvent(providers.github, issue!, [], now).rawBody.toString());
  const b = JSON.parse(prepareEvent(providers.github, issue!, [], now).rawBody.toString());
  assert.notEqual(a.issue.id, b.issue.id);
  assert.notEqual(a.issue.node_id, b.issue.node_id);
  assert.equal(a.issue.node_id.length, (issue!.body.issue as { node_id: string }).node_id.length);
  assert.equal(a.issue.created_at, '2026-12-03T06:30:00Z');
  // Where the hook is and who acted stay: the hook headers name the same repository each time.
  assert.equal(a.repository.id, b.repository.id);
  assert.equal(a.sender.id, b.sender.id);

  const [order] = resolveFixtures(['shopify/orders/create'], undefined);
  const o = JSON.parse(prepareEvent(providers.shopify, order!, [], now).rawBody.toString());
  const p = JSON.parse(prepareEvent(providers.shopify, order!, [], now).rawBody.toString());
  assert.notEqual(o.id, p.id);
  assert.ok(Number.isSafeInteger(o.id), 'an id every JSON parser reads exactly');
  assert.equal(o.admin_graphql_api_id, `gid://shopify/Order/${o.id}`);
  assert.equal(o.created_at, '2026-12-03T01:30:00-05:00', "in the shop's offset, as Shopify writes it");
});

test('fixtures show and fixtures list need no signing key and write none: every Discord and SendGrid event is shown', async () => {
  const { readdirSync } = await import('node:fs');
  const { hookdrill } = await import('./helpers/cli.js');
  const { run, show } = await import('../src/fixtures/list.js');
  const keys = mkdtempSync(join(tmpdir(), 'hookdrill-keys-'));
  const home = mkdtempSync(join(tmpdir(), 'hookdrill-home-'));
  const before = process.env.HOOKDRILL_KEYS_DIR;
  process.env.HOOKDRILL_KEYS_DIR = keys;
  try {
    for (const provider of ['discord', 'sendgrid']) {
      const listed = await run({ provider });
      assert.ok(listed.fixtures.length > 0, provider);
      for (const f of listed.fixtures) {
        const shown = show({ name: f.name });
        const signature = Object.entries(shown.headers).find(([k]) => /signature/i.test(k))?.[1];
        assert.equal(signature, '<signed on each attempt with your secret>', f.name);
      }
    }
  } finally {
    if (before === undefined) delete process.env.HOOKDRILL_KEYS_DIR;
    else process.env.HOOKDRILL_KEYS_DIR = before;
  }
  const env = { HOOKDRILL_KEYS_DIR: keys, HOME: home, XDG_CONFIG_HOME: join(home, '.config') };
  const shown = await hookdrill(['fixtures', 'show', 'discord/ping'], env);
  assert.equal(shown.code, 0, shown.stderr);
  assert.match(shown.stdout, /X-Signature-Ed25519/);
  assert.ok(shown.stdout.endsWith('\n'));
  const listed = await hookdrill(['fixtures', 'discord'], env);
  assert.equal(listed.code, 0, listed.stderr);
  assert.deepEqual(readdirSync(keys), [], 'no key made by showing or listing');
  assert.deepEqual(readdirSync(home), [], 'nothing written into the home directory');
});
