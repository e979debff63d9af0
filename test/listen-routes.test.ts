import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { hookdrill } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { spawnHookdrill } from './helpers/spawned.js';
import { tempDir } from './helpers/tmp.js';
import { until } from './helpers/until.js';
import { ROUTED_EVENTS, ROUTE_SECRETS, nodeTarget, pythonTarget, writeRoutesConfig } from './helpers/routes.js';
import { reply, startServer } from './helpers/server.js';
import { typeMatches, routeFor } from '../src/routes/match.js';
import { parseRouteFlag } from '../src/routes/parse.js';

const SECRET_OF = {
  stripe: ROUTE_SECRETS.STRIPE_WEBHOOK_SECRET,
  github: ROUTE_SECRETS.GITHUB_WEBHOOK_SECRET,
  slack: ROUTE_SECRETS.SLACK_SIGNING_SECRET,
} as const;

test('patterns: * takes all, invoice.* what is under invoice., a name itself and its actions, nothing else', () => {
  assert.equal(typeMatches('*', undefined), true);
  assert.equal(typeMatches('invoice.*', 'invoice.paid'), true);
  assert.equal(typeMatches('invoice.*', 'invoice.payment.failed'), true);
  assert.equal(typeMatches('invoice.*', 'invoiceitem.created'), false);
  assert.equal(typeMatches('invoice.*', undefined), false);
  assert.equal(typeMatches('issues', 'issues.opened'), true);
  assert.equal(typeMatches('issues', 'issue_comment.created'), false);
  assert.equal(typeMatches('invoice.paid', 'invoice.paid_out'), false);
  const routes = [
    parseRouteFlag('a=stripe:invoice.*=drop'),
    parseRouteFlag('stripe:*=hold'),
    parseRouteFlag('b=*:invoice.paid=http://127.0.0.1:9/b'),
  ];
  // First match wins: the catch-all of the second rule comes before the third.
  assert.equal(routeFor(routes, 'stripe', 'invoice.paid')?.name, 'a');
  assert.equal(routeFor(routes, 'stripe', 'charge.failed')?.name, 'stripe:*');
  assert.equal(routeFor(routes, 'github', 'invoice.paid')?.name, 'b');
  assert.equal(routeFor(routes, 'github', 'push'), undefined);
});

test("listen --route and the project file's routes: bad input is one line and exit 2", async () => {
  const dir = tempDir();
  const base = ['listen', '--port', '0', '--provider', 'stripe', '--secret', 'whsec_x', '--inbox', join(dir, 'i.db')];
  const cases: [string[], RegExp][] = [
    [['--route', 'stripe:invoice.*'], /--route stripe:invoice\.\*: expected/],
    [['--route', 'stripe:in*voice=drop'], /\* stands alone/],
    [['--route', 'strype:invoice.*=drop'], /no provider "strype"/],
    [['--route', 'stripe:invoice.*=ftp://x'], /must be http/],
    [['--route', 'github:issues=drop'], /listen receives stripe, not github/],
    [['--route', 'default=stripe:*=drop'], /"default" is the name/],
    [['--route', 'a=stripe:x=drop', '--route', 'a=stripe:y=drop'], /two routes are named "a"/],
    [['--events', ' , '], /--events is empty/],
  ];
  for (const [flags, message] of cases) {
    const r = await hookdrill([...base, ...flags], {}, [], dir, 20_000);
    assert.equal(r.code, 2, `${flags.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
  for (const [routes, message] of [
    [{ to: 'somewhere' }, /routes\[0\]: target "somewhere" is not a URL/],
    [[{ provider: 'stripe', events: [], to: 'drop' }], /"events" must be a pattern/],
    [[{ to: 'drop', via: 'x' }], /unknown key "via"/],
    [[{ to: 'http://u:p4ss@127.0.0.1:9/' }], /password in the URL/],
  ] as const) {
    writeFileSync(join(dir, 'hookdrill.config.json'), JSON.stringify({ routes: Array.isArray(routes) ? routes : [routes] }));
    const r = await hookdrill(base, {}, [], dir, 20_000);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.doesNotMatch(r.stderr, /p4ss/);
  }
});

test('one listen for Stripe, GitHub and Slack on one port, five routes: each event at the service its route names, none at another', async () => {
  const dir = tempDir();
  const billing = await nodeTarget();
  const ci = await pythonTarget(await freePort(), dir);
  const support = await nodeTarget();
  writeRoutesConfig(dir, { billing: billing.url.replace(/\/$/, ''), ci: ci.url, support: support.url.replace(/\/$/, '') });
  const listen = spawnHookdrill(['listen', '--json', '--port', '0', '--inbox', join(dir, 'inbox.db')], ROUTE_SECRETS, [], dir);
  try {
    const ready = await listen.waitFor((l) => l.event === 'ready', 20_000);
    const mounts = ready.providers as { provider: string; path: string; url: string }[];
    assert.deepEqual(
      mounts.map((m) => [m.provider, m.path]),
      [
        ['stripe', '/stripe'],
        ['github', '/github'],
        ['slack', '/slack/events'],
      ],
    );
    assert.deepEqual(
      (ready.routes as { name: string }[]).map((r) => r.name),
      ['billing', 'ci', 'support', 'parked', 'rest', 'default'],
    );
    for (const m of mounts) {
      const p = m.provider as keyof typeof ROUTED_EVENTS;
      const fixtures = Object.keys(ROUTED_EVENTS[p]).map((type) => `${p}/${type}`);
      const r = await hookdrill(
        ['send', ...fixtures, '--provider', p, '--secret', SECRET_OF[p], '--url', m.url, '--no-retry'],
        {},
        [],
        dir,
        60_000,
      );
      assert.equal(r.code, 0, `${p}: ${r.stdout}${r.stderr}`);
    }
    // A provider posting to another's path is refused by that one's verification: not stored.
    const wrong = await hookdrill(
      ['send', 'github/push', '--provider', 'github', '--secret', SECRET_OF.github, '--url', mounts[0]?.url ?? '', '--no-retry'],
      {},
      [],
      dir,
      60_000,
    );
    assert.notEqual(wrong.code, 0);
    const stored = listen.lines.filter((l) => l.event === 'request' && l.result === 'stored');
    assert.equal(stored.length, 11, JSON.stringify(listen.lines));
    const routeOf = (l: Record<string, unknown>) =>
      (ROUTED_EVENTS[l.source as keyof typeof ROUTED_EVENTS] as Record<string, string>)[String(l.eventType)];
    await until(
      () =>
        stored.every((s) =>
          listen.lines.some(
            (l) => l.event === 'processed' && l.deliveryId === s.deliveryId && (l.outcome === 'done' || l.outcome === 'dead'),
          ),
        ),
      'every stored delivery processed',
    );
    const expect = (route: string) =>
      stored
        .filter((s) => routeOf(s) === route)
        .map((s) => `${s.source} ${s.deliveryId}`)
        .sort();
    const got = (t: { got(): { source: string; deliveryId: string }[] }) =>
      t
        .got()
        .map((g) => `${g.source} ${g.deliveryId}`)
        .sort();
    assert.deepEqual(got(billing), expect('billing'));
    assert.equal(expect('billing').length, 3);
    assert.deepEqual(got(ci), expect('ci'));
    assert.equal(expect('ci').length, 2);
    assert.deepEqual(got(support), expect('support'));
    assert.equal(expect('support').length, 1);
    // Held: not forwarded, buried with the reason; dropped: done, forwarded to no one.
    for (const s of stored) {
      const outcome = listen.lines.find((l) => l.event === 'processed' && l.deliveryId === s.deliveryId && l.outcome !== 'retry');
      assert.equal(outcome?.route, routeOf(s), JSON.stringify(outcome));
      if (routeOf(s) === 'parked') {
        assert.equal(outcome?.outcome, 'dead');
        assert.match(String(outcome?.error), /held by route parked/);
      } else assert.equal(outcome?.outcome, 'done');
    }
    // A path no provider posts to: 404, said in the log.
    const nowhere = await fetch(`${String(ready.url)}nowhere`, { method: 'POST', body: '{}' });
    assert.equal(nowhere.status, 404);
    await nowhere.text();
  } finally {
    listen.child.kill('SIGTERM');
    await listen.exit;
    await Promise.all([billing.close(), ci.close(), support.close()]);
  }
});

test('listen --events keeps the types named, as stripe listen --events: the others are answered 200 and not stored', async () => {
  const dir = tempDir();
  const app = await startServer((_req, res) => reply(res, 200, 'ok'));
  const secret = 'whsec_events_filter';
  const listen = spawnHookdrill(
    [
      'listen',
      '--json',
      '--port',
      '0',
      '--provider',
      'stripe',
      '--secret',
      secret,
      '--inbox',
      join(dir, 'inbox.db'),
      '--forward-to',
      app.url,
      '--events',
      'invoice.paid,customer.subscription.*',
    ],
    {},
    [],
    dir,
  );
  try {
    const ready = await listen.waitFor((l) => l.event === 'ready', 20_000);
    const r = await hookdrill(
      [
        'send',
        'stripe/invoice.paid',
        'stripe/customer.created',
        'stripe/customer.subscription.updated',
        '--provider',
        'stripe',
        '--secret',
        secret,
        '--url',
        String(ready.url),
        '--no-retry',
      ],
      {},
      [],
      dir,
      60_000,
    );
    // The sender sees every one acknowledged: it must not retry what the filter leaves out.
    assert.equal(r.code, 0, r.stdout + r.stderr);
    await until(() => app.requests.length === 2, 'two forwards');
    const requests = listen.lines.filter((l) => l.event === 'request');
    assert.deepEqual(
      requests.map((l) => [l.eventType, l.result, l.status]).sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
      [
        ['customer.created', 'filtered', 200],
        ['customer.subscription.updated', 'stored', 200],
        ['invoice.paid', 'stored', 200],
      ],
    );
  } finally {
    listen.child.kill('SIGTERM');
    await listen.exit;
    await app.close();
  }
  const summary = listen.lines.find((l) => l.event === 'stopped') as { inbox: { total: number } } | undefined;
  assert.equal(summary?.inbox.total, 2);
});
