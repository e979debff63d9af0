import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chromium } from 'playwright-core';
import { hookdrill } from './helpers/cli.js';
import { BACKENDS, CHROMIUM, chromiumMissing } from './helpers/backends.js';
import { freePort } from './helpers/ports.js';
import { spawnHookdrill } from './helpers/spawned.js';
import { tempDir } from './helpers/tmp.js';
import { until } from './helpers/until.js';
import { ROUTE_SECRETS, pythonTarget, writeRoutesConfig } from './helpers/routes.js';
import { startUi } from '../src/ui/server.js';

/**
 * Issue 56 in the inspector: one listen for Stripe, GitHub and Slack with its routes, the billing
 * and CI services (Python, test/receivers/route_target.py) down, so their rows die. The page shows
 * each row's provider and route, filters by either, and requeues one route's dead rows: they reach
 * that route's service once it is back, and the other dead route's rows stay dead.
 */

const SECRET_OF = {
  stripe: ROUTE_SECRETS.STRIPE_WEBHOOK_SECRET,
  github: ROUTE_SECRETS.GITHUB_WEBHOOK_SECRET,
  slack: ROUTE_SECRETS.SLACK_SIGNING_SECRET,
} as const;
const SENT = {
  stripe: ['invoice.paid', 'invoice.payment_failed'],
  github: ['workflow_run.completed', 'check_suite.completed', 'issues.opened'],
  slack: ['app_mention'],
} as const;

for (const backend of BACKENDS)
  test(`ui on ${backend.name}: the provider and route of each row, a filter by each, and one route's dead rows requeued from the page reach its service only`, {
    timeout: 180_000,
  }, async (t) => {
    const why = chromiumMissing() ?? (await backend.missing());
    if (why) return t.skip(why);
    const dir = tempDir();
    const target = backend.target();
    const inbox = target.url;
    const billing = await pythonTarget(await freePort(), dir);
    const ci = await pythonTarget(await freePort(), dir);
    const support = await pythonTarget(await freePort(), dir);
    writeRoutesConfig(dir, { billing: billing.url, ci: ci.url, support: support.url });
    // Billing and CI are down before anything arrives: their rows die at their one attempt.
    await billing.kill();
    await ci.kill();
    const listen = spawnHookdrill(['listen', '--json', '--port', '0', '--inbox', inbox, '--max-attempts', '1'], ROUTE_SECRETS, [], dir);
    t.after(async () => {
      listen.child.kill('SIGTERM');
      await listen.exit;
      await Promise.all([billing.close(), ci.close(), support.close()]);
    });
    const ready = await listen.waitFor((l) => l.event === 'ready', 30_000);
    for (const m of ready.providers as { provider: keyof typeof SENT; url: string }[]) {
      const fixtures = SENT[m.provider].map((type) => `${m.provider}/${type}`);
      const r = await hookdrill(
        ['send', ...fixtures, '--provider', m.provider, '--secret', SECRET_OF[m.provider], '--url', m.url, '--no-retry'],
        {},
        [],
        dir,
        60_000,
      );
      assert.equal(r.code, 0, `${m.provider}: ${r.stdout}${r.stderr}`);
    }
    const stored = listen.lines.filter((l) => l.event === 'request' && l.result === 'stored');
    assert.equal(stored.length, 6);
    const final = (id: unknown) =>
      listen.lines.find((l) => l.event === 'processed' && l.deliveryId === id && ['done', 'dead'].includes(String(l.outcome)));
    await until(() => stored.every((s) => final(s.deliveryId) !== undefined), 'every delivery done or dead', 30_000);
    const idOf = (type: string) => String(stored.find((s) => s.eventType === type)?.deliveryId);
    const ciIds = [idOf('workflow_run.completed'), idOf('check_suite.completed')];
    const billingIds = [idOf('invoice.paid'), idOf('invoice.payment_failed')];
    for (const id of [...ciIds, ...billingIds]) assert.equal(final(id)?.outcome, 'dead', id);

    const ui = await startUi({ inbox, port: 0 });
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    t.after(async () => {
      await browser.close();
      await ui.close();
      await target.drop();
    });
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(ui.pageUrl);
    await page.locator('#total', { hasText: /^6 of 6 rows, newest first$/ }).waitFor({ timeout: 20_000 });
    // Each row says its provider and its route: the columns show, a route as a badge.
    const cells = (id: string) =>
      page.$$eval(`#rows tr[data-id="${id}"] td`, (tds) =>
        Object.fromEntries(
          tds.filter((td) => td.className === 'provider' || td.className === 'route').map((td) => [td.className, td.textContent]),
        ),
      );
    assert.deepEqual(await cells(ciIds[0] as string), { provider: 'github', route: 'ci' });
    assert.deepEqual(await cells(idOf('app_mention')), { provider: 'slack', route: 'support' });
    assert.deepEqual(await cells(idOf('issues.opened')), { provider: 'github', route: 'rest' });
    assert.equal(await page.locator('#rows th.route').isVisible(), true);
    assert.equal(await page.locator('#rows th.provider').isVisible(), true);
    const listedIds = async () => (await page.$$eval('#rows tbody tr', (trs) => trs.map((tr) => tr.getAttribute('data-id') ?? ''))).sort();

    // By provider: GitHub's three rows.
    await page.fill('#filters input[name="source"]', 'github');
    await page.locator('#total', { hasText: /^3 of 3 rows/ }).waitFor({ timeout: 15_000 });
    assert.deepEqual(await listedIds(), [...ciIds, idOf('issues.opened')].sort());
    await page.fill('#filters input[name="source"]', '');

    // By route: CI's two, and its dead rows requeued in one action, previewed first.
    await page.fill('#filters input[name="route"]', 'ci');
    await page.locator('#total', { hasText: /^2 of 2 rows/ }).waitFor({ timeout: 15_000 });
    assert.deepEqual(await listedIds(), [...ciIds].sort());
    await ci.restart();
    await billing.restart();
    await page.locator('#route-requeue button', { hasText: "requeue route ci's dead rows…" }).click();
    const confirm = page.locator('#route-requeue button.confirm');
    await confirm.waitFor({ timeout: 10_000 });
    assert.equal(await confirm.textContent(), 'requeue 2 rows');
    await confirm.click();
    await page.locator('#route-requeue', { hasText: 'requeued 2 of 2' }).waitFor({ timeout: 15_000 });
    // The route's rows reach its service, now back; billing's dead rows stayed dead and reached no one.
    await until(() => ci.got().length === 2, 'the requeued CI rows forwarded', 30_000);
    assert.deepEqual(
      ci
        .got()
        .map((g) => g.deliveryId)
        .sort(),
      [...ciIds].sort(),
    );
    assert.deepEqual(billing.got(), []);
    await page.fill('#filters input[name="route"]', 'billing');
    await page.locator('#total', { hasText: /^2 of 2 rows/ }).waitFor({ timeout: 15_000 });
    for (const id of billingIds) assert.match((await page.locator(`#rows tr[data-id="${id}"]`).textContent()) ?? '', /billingdead/);
    // One row's page says its route.
    await page.locator(`#rows tr[data-id="${billingIds[0]}"]`).click();
    await page.locator('#d-fields', { hasText: 'routebilling' }).waitFor({ timeout: 10_000 });
    assert.deepEqual(errors, []);
  });
