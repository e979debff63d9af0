import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { BACKENDS } from './helpers/backends.js';
import { hookdrill } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { spawnHookdrill } from './helpers/spawned.js';
import type { Spawned } from './helpers/spawned.js';
import { startStripeApi } from './helpers/stripe-api.js';
import { tempDir } from './helpers/tmp.js';
import { until } from './helpers/until.js';
import { ROUTE_SECRETS, pythonTarget, writeRoutesConfig } from './helpers/routes.js';
import { openInbox } from '../src/inbox/open.js';

/**
 * Issue 56, item 4: replay and pull deliver to a listen with routes — they post to a provider's
 * path on it, and each event reaches the service its route names, none at another. And item 3:
 * `replay --route R` sends the rows of that route only (SQLite and Postgres; BullMQ's replay reads
 * the same selector). The target services are Python (test/receivers/route_target.py).
 * (`send` to such a listen is held by listen-routes.test.ts: it sends each provider's fixtures to
 * its path.)
 */

type Py = Awaited<ReturnType<typeof pythonTarget>>;

/** A listen with the routes tests' project file (billing, ci, support, parked, rest), its three services in Python. */
async function routedListen(t: { after(fn: () => Promise<unknown>): void }) {
  const dir = tempDir();
  const billing = await pythonTarget(await freePort(), dir);
  const ci = await pythonTarget(await freePort(), dir);
  const support = await pythonTarget(await freePort(), dir);
  writeRoutesConfig(dir, { billing: billing.url, ci: ci.url, support: support.url });
  const listen = spawnHookdrill(['listen', '--json', '--port', '0', '--inbox', join(dir, 'listen.db')], ROUTE_SECRETS, [], dir);
  t.after(async () => {
    listen.child.kill('SIGTERM');
    await listen.exit;
    await Promise.all([billing.close(), ci.close(), support.close()]);
  });
  const ready = await listen.waitFor((l) => l.event === 'ready', 30_000);
  const mount = (p: string) => (ready.providers as { provider: string; url: string }[]).find((m) => m.provider === p)?.url as string;
  return { dir, listen, billing, ci, support, mount };
}

const ids = (x: Py) =>
  x
    .got()
    .map((g) => `${g.source} ${g.deliveryId}`)
    .sort();

/** listen's stored deliveries, each processed (forwarded, dropped or held) before the test looks at the services. */
async function settled(listen: Spawned, n: number): Promise<Record<string, unknown>[]> {
  await until(() => listen.lines.filter((l) => l.event === 'request' && l.result === 'stored').length >= n, `${n} stored`, 30_000);
  const stored = listen.lines.filter((l) => l.event === 'request' && l.result === 'stored');
  await until(
    () =>
      stored.every((s) =>
        listen.lines.some((l) => l.event === 'processed' && l.deliveryId === s.deliveryId && ['done', 'dead'].includes(String(l.outcome))),
      ),
    'every stored delivery processed',
    30_000,
  );
  return stored;
}

for (const backend of BACKENDS.filter((b) => b.name !== 'BullMQ')) {
  test(`${backend.name}: replay --route ci replays that route's rows only, to a listen with routes, whose CI service gets them and no other service anything`, {
    timeout: 120_000,
  }, async (t) => {
    const missing = await backend.missing();
    if (missing) return t.skip(missing);
    const source = backend.target();
    t.after(() => source.drop());
    // The inbox of an earlier listen with routes: two rows routed to ci, and rows of other routes —
    // one of them a workflow_run too, given another route when it came (the routes have changed
    // since): only the route each row records selects it.
    const rows = [
      { source: 'github', deliveryId: 'gh-ci-1', eventType: 'workflow_run.completed', route: 'ci' },
      { source: 'github', deliveryId: 'gh-ci-2', eventType: 'check_suite.completed', route: 'ci' },
      { source: 'github', deliveryId: 'gh-old-1', eventType: 'workflow_run.completed', route: 'ci-before' },
      { source: 'github', deliveryId: 'gh-rest-1', eventType: 'issues.opened', route: 'rest' },
      { source: 'stripe', deliveryId: 'evt_billing_1', eventType: 'invoice.paid', route: 'billing' },
    ];
    const inbox = await openInbox(source.url);
    try {
      for (const r of rows)
        await inbox.put({
          ...r,
          body: Buffer.from(
            r.source === 'github'
              ? JSON.stringify({ action: r.eventType.split('.')[1], repository: { full_name: 'acme/app' } })
              : JSON.stringify({ id: r.deliveryId, object: 'event', type: r.eventType, data: { object: {} } }),
          ),
          headers: {},
          receivedAt: Date.now(),
        });
    } finally {
      await inbox.close();
    }
    const { listen, billing, ci, support, mount } = await routedListen(t);
    // No --provider: the route's rows are GitHub's alone, so they say how to sign.
    const r = await hookdrill(
      [
        'replay',
        '--inbox',
        source.url,
        '--route',
        'ci',
        '--to',
        mount('github'),
        '--secret',
        ROUTE_SECRETS.GITHUB_WEBHOOK_SECRET,
        '--json',
      ],
      {},
      [],
      undefined,
      60_000,
    );
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const result = JSON.parse(r.stdout) as { matched: number; provider: string; summary: { delivered: number } };
    assert.deepEqual([result.matched, result.provider, result.summary.delivered], [2, 'github', 2]);
    const stored = await settled(listen, 2);
    assert.deepEqual(stored.map((s) => String(s.deliveryId)).sort(), ['gh-ci-1', 'gh-ci-2']);
    assert.deepEqual(ids(ci), ['github gh-ci-1', 'github gh-ci-2']);
    assert.deepEqual([ids(billing), ids(support)], [[], []]);
  });
}

test("pull (Stripe's API) to a listen with routes: each event at the service its route names — billing's at billing, charge.* held, the rest dropped", {
  timeout: 120_000,
}, async (t) => {
  const KEY = 'sk_test_51Routes00000000000000000000wxyz';
  const now = Math.floor(Date.now() / 1000);
  const events = ['invoice.paid', 'customer.subscription.created', 'charge.succeeded', 'customer.created'].map((type, i) => ({
    id: `evt_1Routes${i}AbCdEfGhIjKl`,
    type,
    created: now - 60 + i,
    delivered: true,
  }));
  const api = await startStripeApi({ key: KEY, events });
  t.after(() => api.close());
  const { dir, listen, billing, ci, support, mount } = await routedListen(t);
  const r = await hookdrill(
    [
      'pull',
      '--provider',
      'stripe',
      '--api-base',
      api.url,
      '--to',
      mount('stripe'),
      '--secret',
      ROUTE_SECRETS.STRIPE_WEBHOOK_SECRET,
      '--state',
      join(dir, 'state.json'),
      '--since',
      '5m',
      '--no-retry',
      '--json',
    ],
    { STRIPE_API_KEY: KEY },
    [],
    undefined,
    60_000,
  );
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const stored = await settled(listen, 4);
  assert.equal(stored.length, 4);
  assert.deepEqual(ids(billing), ['stripe evt_1Routes0AbCdEfGhIjKl', 'stripe evt_1Routes1AbCdEfGhIjKl']);
  assert.deepEqual([ids(ci), ids(support)], [[], []]);
  const outcome = (id: string) =>
    listen.lines.find((l) => l.event === 'processed' && l.deliveryId === id && ['done', 'dead'].includes(String(l.outcome)));
  assert.deepEqual(
    events.map((e) => [outcome(e.id)?.route, outcome(e.id)?.outcome]),
    [
      ['billing', 'done'],
      ['billing', 'done'],
      ['parked', 'dead'],
      ['rest', 'done'],
    ],
  );
});
