import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { openInbox } from '../src/inbox/index.js';
import type { Inbox, NewDelivery } from '../src/inbox/index.js';
import { startUi } from '../src/ui/server.js';
import { tempDir } from './helpers/tmp.js';
import { BACKENDS, CHROMIUM, chromiumMissing } from './helpers/backends.js';

/**
 * The inspector an on-call engineer relies on (issue 37), in a real browser on every backend: the
 * newest rows first and new ones on top while the page is open, older pages on demand, and actions
 * that survive the live refresh and end in words where they were asked.
 */

const ROWS = 10_000;
const DEAD = 10;
/** Rows that failed once and wait an hour for their next attempt: an outage of the app behind the receiver. */
const RETRYING = 2;

const delivery = (id: string, receivedAt: number, type = 'invoice.paid'): NewDelivery => ({
  source: 'stripe',
  deliveryId: id,
  eventType: type,
  body: Buffer.from(JSON.stringify({ id, type, object: 'event' })),
  headers: { 'content-type': 'application/json' },
  receivedAt,
});

/** Ten rows received a minute ago that died of one error, two that wait for a retry, then 10,000 received over the two days before (oldest evt_00000). */
async function fill(inbox: Inbox): Promise<void> {
  await inbox.putMany(Array.from({ length: DEAD }, (_, j) => delivery(`evt_dead_${j}`, Date.now() - 60_000 + j, 'charge.failed')));
  const claimed = await inbox.claim({ limit: 100, leaseMs: 60_000 });
  assert.equal(claimed.length, DEAD);
  await inbox.settle(claimed.map((c) => ({ key: c, fence: c.fence, outcome: 'dead' as const, error: 'forward target answered 500' })));
  await inbox.putMany(Array.from({ length: RETRYING }, (_, j) => delivery(`evt_retrying_${j}`, Date.now() - 30_000 + j)));
  const waiting = await inbox.claim({ limit: 100, leaseMs: 60_000 });
  assert.equal(waiting.length, RETRYING);
  await inbox.settle(
    waiting.map((c) => ({
      key: c,
      fence: c.fence,
      outcome: 'retry' as const,
      error: 'connect ECONNREFUSED 127.0.0.1:3000',
      retryInMs: 3_600_000,
    })),
  );
  const start = Date.now() - 2 * 86_400_000;
  for (let i = 0; i < ROWS; i += 1_000) {
    await inbox.putMany(
      Array.from({ length: 1_000 }, (_, j) => delivery(`evt_${String(i + j).padStart(5, '0')}`, start + (i + j) * 10_000)),
    );
  }
}

/** A page whose uncaught errors are kept: every test ends by asserting there were none. */
async function watchedPage(browser: Browser, options: Parameters<Browser['newPage']>[0]): Promise<{ page: Page; errors: string[] }> {
  const page = await browser.newPage(options);
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  return { page, errors };
}

const firstIds = (page: Page, n: number) =>
  page.$$eval('#rows tbody tr', (trs, k) => trs.slice(0, k).map((tr) => tr.getAttribute('data-id')), n);

for (const b of BACKENDS) {
  test(`ui (${b.name}): on ${ROWS.toLocaleString('en-US')} rows the newest are listed first, a new delivery appears on top within a refresh, older pages load on demand; a group requeue's confirm outlives the refresh and completes`, async (t) => {
    const why = chromiumMissing() ?? (await b.missing());
    if (why) return t.skip(why);
    const target = b.target();
    const writer = await openInbox(target.url);
    await fill(writer);
    const ui = await startUi({ inbox: target.url, port: 0 });
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    try {
      const { page, errors } = await watchedPage(browser, { viewport: { width: 1280, height: 800 } });
      await page.goto(ui.pageUrl);
      await page.locator('#total', { hasText: /^200 of 10,?012 rows, newest first$/ }).waitFor({ timeout: 20_000 });
      // The newest first: the dead rows of a minute ago, newest of them on top; the oldest row is not on the page.
      assert.deepEqual(await firstIds(page, 3), ['evt_retrying_1', 'evt_retrying_0', 'evt_dead_9']);
      assert.equal(await page.locator('#rows tr[data-id="evt_00000"]').count(), 0);

      // A delivery that arrives while the page is open appears on top, without a reload, at the next
      // refresh (2 s after the last, or four times as long as it took: a BullMQ scan under CI's load).
      await writer.put(delivery('evt_arrived_now', Date.now()));
      await page.locator('#rows tbody tr:first-child[data-id="evt_arrived_now"]').waitFor({ timeout: 30_000 });
      assert.equal(await page.locator('#rows tr[data-id="evt_dead_0"]').count(), 1, 'the rows it pushed down stay');

      // Older pages on demand: each continues where the last ended, none twice.
      await page.click('#older');
      await page.locator('#total', { hasText: /^401 of 10,?013 rows, newest first$/ }).waitFor({ timeout: 15_000 });
      const ids = await page.$$eval('#rows tbody tr', (trs) => trs.map((tr) => tr.getAttribute('data-id')));
      assert.equal(new Set(ids).size, ids.length, 'no row listed twice');
      const expectedLast = `evt_${String(ROWS - (401 - 1 - DEAD - RETRYING)).padStart(5, '0')}`;
      assert.equal(ids[ids.length - 1], expectedLast, 'the second page ends where receipt order says');

      // Requeue the dead group from the page: the confirm is still there after refreshes have run.
      await page.locator('#dead tbody tr', { hasText: 'forward target answered 500' }).locator('button').click();
      const confirm = page.locator('#dead tbody button.confirm');
      await confirm.waitFor({ timeout: 10_000 });
      assert.equal(await confirm.textContent(), `requeue ${DEAD} rows`);
      const before = await page.textContent('#updated');
      // (In the page: the DOM's globals, which this file's Node types do not declare.)
      await page.waitForFunction(
        (t0) =>
          (globalThis as unknown as { document: { getElementById(id: string): { textContent: string } | null } }).document.getElementById(
            'updated',
          )?.textContent !== t0,
        before,
        { timeout: 30_000 },
      );
      assert.equal(await confirm.isVisible(), true, 'a live refresh left the confirm where it was');
      await confirm.click();
      await page.locator('#dead tbody', { hasText: `requeued ${DEAD} of ${DEAD}` }).waitFor({ timeout: 15_000 });
      await page.locator('#counts .dead', { hasText: /^dead 0$/ }).waitFor({ timeout: 15_000 });
      assert.equal(await page.locator('#dead tbody', { hasText: `requeued ${DEAD} of ${DEAD}` }).count(), 1, 'the outcome stays said');

      // The outage: why the pending rows wait and when they try next, and "retry now" for them.
      const group = page.locator('#retrying tbody tr', { hasText: 'connect ECONNREFUSED 127.0.0.1:3000' });
      await group.waitFor({ timeout: 15_000 });
      assert.match((await group.textContent()) ?? '', new RegExp(`^${RETRYING}connect ECONNREFUSED.*next attempt in (59|60)m`));
      assert.match(
        (await page.locator('#rows tr[data-id="evt_retrying_0"]').textContent()) ?? '',
        /pending1in (59|60)m.*connect ECONNREFUSED/,
      );
      await group.locator('button').click();
      const retry = page.locator('#retrying tbody button.confirm');
      await retry.waitFor({ timeout: 10_000 });
      assert.equal(await retry.textContent(), `retry ${RETRYING} rows now`);
      await retry.click();
      await page.locator('#retrying tbody', { hasText: `due now: ${RETRYING} of ${RETRYING}` }).waitFor({ timeout: 15_000 });
      for (let j = 0; j < RETRYING; j++) {
        const row = await writer.get({ source: 'stripe', deliveryId: `evt_retrying_${j}` });
        assert.equal(row?.status, 'pending');
        assert.ok((row?.nextAttemptAt ?? Number.POSITIVE_INFINITY) <= Date.now(), `evt_retrying_${j} is due now, not in an hour`);
      }
      assert.deepEqual(errors, []);
    } finally {
      await browser.close();
      await ui.close();
      await writer.close();
      await target.drop();
    }
  });
}

test('ui: a click brings the delivery into view; a bad filter, a replay with no URL and an existing fixture each end in a message where they were asked', async (t) => {
  const why = chromiumMissing();
  if (why) return t.skip(why);
  const file = join(tempDir(), 'inbox.db');
  const writer = await openInbox(file);
  const now = Date.now();
  await writer.putMany(Array.from({ length: 40 }, (_, i) => delivery(`evt_${i}`, now - 60_000 + i)));
  const fixturesDir = join(tempDir(), 'fixtures');
  const secret = `whsec_${Buffer.from('ui-inspector-test-secret').toString('base64')}`;
  const ui = await startUi({ inbox: file, port: 0, provider: 'stripe', secrets: [secret], fixturesDir });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const { page, errors } = await watchedPage(browser, { viewport: { width: 1280, height: 768 } });
    await page.goto(ui.pageUrl);
    await page.locator('#total', { hasText: /^40 of 40 rows, newest first$/ }).waitFor({ timeout: 15_000 });

    // The last row of a long list: the delivery opens below it, scrolled into the window.
    await page.click('#rows tr[data-id="evt_0"]');
    await page.locator('#d-title', { hasText: 'stripe evt_0' }).waitFor({ timeout: 10_000 });
    const inView = async () => {
      const box = await page.locator('#delivery').boundingBox();
      return box !== null && box.y >= 0 && box.y < 768;
    };
    for (let i = 0; i < 50 && !(await inView()); i++) await new Promise((r) => setTimeout(r, 100));
    assert.ok(await inView(), 'the delivery is in the window');
    assert.equal(await page.locator('#rows tr.selected').getAttribute('data-id'), 'evt_0');
    // The editor shows the body pretty-printed.
    await page.click('#d-edit');
    assert.match(await page.inputValue('#d-editor'), /^\{\n {2}"id": "evt_0",\n/);

    // Replay with no URL: said, not "sending…" forever.
    await page.fill('#d-to', '');
    await page.click('#d-replay');
    await page.locator('#d-sent', { hasText: /^give the URL to replay to/ }).waitFor({ timeout: 5_000 });
    // A URL that is not one: the server's reason, where it was asked.
    await page.fill('#d-to', 'not a url');
    await page.click('#d-replay');
    await page.locator('#d-sent', { hasText: /^not sent: / }).waitFor({ timeout: 10_000 });

    // A second fixture of one type: offered to replace, and replaced.
    await page.click('#d-fixture');
    await page.locator('#d-fixture-text', { hasText: /^saved / }).waitFor({ timeout: 10_000 });
    await page.click('#d-fixture');
    await page.locator('#d-fixture-text', { hasText: /already exists/ }).waitFor({ timeout: 10_000 });
    assert.doesNotMatch((await page.textContent('#d-fixture-text')) ?? '', /--force/, 'no CLI flag the page does not have');
    await page.click('#d-fixture-text button');
    await page.locator('#d-fixture-text', { hasText: /^saved / }).waitFor({ timeout: 10_000 });

    // A filter the inbox cannot take empties the list and says why beside it.
    await page.fill('#filters input[name="since"]', 'banana');
    await page.locator('#total.error', { hasText: /--since banana/ }).waitFor({ timeout: 10_000 });
    assert.equal(await page.locator('#rows tbody tr').count(), 0, 'no rows of the old filter left on screen');
    await page.fill('#filters input[name="since"]', '');
    await page.locator('#total', { hasText: /^40 of 40 rows, newest first$/ }).waitFor({ timeout: 10_000 });
    assert.deepEqual(errors, []);
  } finally {
    await browser.close();
    await ui.close();
    await writer.close();
  }
});

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

// What the page-side callbacks below use of the browser (this file compiles without the DOM's types).
declare const document: { documentElement: { scrollWidth: number }; body: unknown };
declare function getComputedStyle(e: unknown): { lineHeight: string; color: string; backgroundColor: string };

test("ui: from 390 to 1920 px, light and dark — nothing wider than the window, buttons on one line, a chart with a scale, the body in colour; check's rows marked and left out on request (screenshots at three widths)", async (t) => {
  const why = chromiumMissing();
  if (why) return t.skip(why);
  const file = join(tempDir(), 'inbox.db');
  const writer = await openInbox(file);
  const now = Date.now();
  const marked = (d: NewDelivery): NewDelivery => ({ ...d, headers: { ...d.headers, 'x-hookdrill-check': 'chk-1' } });
  await writer.putMany([
    ...Array.from({ length: 120 }, (_, i) =>
      delivery(`evt_1QxYz${String(i).padStart(4, '0')}AbCdEfGhIjKlMn`, now - 3_500_000 + i * 29_000),
    ),
    ...Array.from({ length: 3 }, (_, i) => marked(delivery(`evt_check_${i}`, now - 200_000 + i))),
    ...Array.from({ length: 4 }, (_, i) => delivery(`evt_dead_${i}`, now - 100_000 + i, 'charge.failed')),
    ...Array.from({ length: 2 }, (_, i) => delivery(`evt_retrying_${i}`, now - 50_000 + i)),
    delivery('evt_silent', now - 40_000),
  ]);
  const claimed = await writer.claim({ limit: 1_000, leaseMs: 60_000 });
  const error = 'forward target answered 422: {"error":{"code":"invalid_amount","message":"amount must be positive"}}';
  await writer.settle(
    claimed.map((c) =>
      c.deliveryId.startsWith('evt_check')
        ? { key: c, fence: c.fence, outcome: 'dead' as const, error: 'check: deliberately dead' }
        : c.deliveryId.startsWith('evt_dead')
          ? { key: c, fence: c.fence, outcome: 'dead' as const, error }
          : c.deliveryId === 'evt_silent'
            ? { key: c, fence: c.fence, outcome: 'dead' as const, error: '' }
            : c.deliveryId.startsWith('evt_retrying')
              ? { key: c, fence: c.fence, outcome: 'retry' as const, error: 'connect ECONNREFUSED 127.0.0.1:3000', retryInMs: 95_000 }
              : { key: c, fence: c.fence, outcome: 'done' as const },
    ),
  );
  const ui = await startUi({ inbox: file, port: 0 });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  const shots = process.env.HOOKDRILL_UPDATE_SCREENSHOTS === '1' ? join(ROOT, 'docs', 'images') : tempDir();
  mkdirSync(shots, { recursive: true });
  try {
    for (const [width, scheme] of [
      [390, 'dark'],
      [1280, 'light'],
      [1920, 'light'],
      [2560, 'dark'],
    ] as const) {
      const { page, errors } = await watchedPage(browser, { viewport: { width, height: 900 }, colorScheme: scheme });
      await page.goto(ui.pageUrl);
      await page.locator('#total', { hasText: /^130 of 130 rows, newest first$/ }).waitFor({ timeout: 15_000 });
      await page.locator('#retrying tbody tr').waitFor({ timeout: 10_000 });
      const at = `${width} px, ${scheme}`;
      // Nothing wider than the window: wide tables scroll inside their box, the page does not.
      assert.equal(await page.evaluate(() => document.documentElement.scrollWidth), width, `${at}: the page scrolls sideways`);
      // Every button on one line (none squeezed into "requ / eu / e…").
      const tall = await page.$$eval('button', (bs) =>
        bs
          .filter((b) => b.offsetParent !== null)
          .filter((b) => b.getBoundingClientRect().height > 2 * Number.parseFloat(getComputedStyle(b).lineHeight || '20'))
          .map((b) => b.textContent),
      );
      assert.deepEqual(tall, [], `${at}: buttons wrapped`);
      // No id broken across lines in the list.
      const broken = await page.$$eval(
        '#rows td.id',
        (tds) =>
          tds.filter((td) => td.getBoundingClientRect().height > 1.8 * Number.parseFloat(getComputedStyle(td).lineHeight || '16')).length,
      );
      assert.equal(broken, 0, `${at}: ids broken mid-word`);
      // The chart's scale: 0 to a round top no lower than the busiest minute, the hour along the bottom.
      const peak = Math.max(...(await page.$$eval('#chart > div', (bars) => bars.map((b) => Number(b.getAttribute('data-total'))))));
      const top = Number(await page.textContent('#y-top'));
      assert.ok(
        top >= peak && [1, 2, 5].includes(top / 10 ** Math.floor(Math.log10(top))),
        `${at}: y axis top ${top} for a peak of ${peak}`,
      );
      assert.deepEqual(await page.$$eval('#x-axis span', (xs) => [xs[0]?.textContent, xs.at(-1)?.textContent]), ['60 min ago', 'now']);
      assert.match((await page.textContent('#legend')) ?? '', /done.*pending.*dead/);
      // Dark or light, as the system says.
      const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
      const [r = 0, g = 0, b = 0] = (bg.match(/\d+/g) ?? []).map(Number);
      const light = (0.2126 * r + 0.7152 * g + 0.0722 * b) / 255;
      assert.ok(scheme === 'dark' ? light < 0.2 : light > 0.8, `${at}: background ${bg}`);
      // Check's deliberate dead rows are marked, and left out when asked.
      assert.match(
        (await page.locator('#dead tbody tr', { hasText: 'deliberately dead' }).textContent()) ?? '',
        /all sent by hookdrill check/,
      );
      await page.check('#exclude-check');
      await page.locator('#dead tbody tr', { hasText: 'deliberately dead' }).waitFor({ state: 'detached', timeout: 10_000 });
      assert.equal(await page.locator('#dead tbody tr', { hasText: 'invalid_amount' }).count(), 1);
      await page.uncheck('#exclude-check');
      await page.locator('#dead tbody tr', { hasText: 'deliberately dead' }).waitFor({ timeout: 10_000 });
      if (width === 390 || width === 1280 || width === 1920) await page.screenshot({ path: join(shots, `ui-${width}.png`) });
      if (width === 2560) {
        // The group with no recorded error is previewed as itself, not as every dead row.
        await page.locator('#dead tbody tr', { hasText: '(no error recorded)' }).locator('button').click();
        assert.equal(
          await page.locator('#dead tbody tr', { hasText: '(no error recorded)' }).locator('button.confirm').textContent(),
          'requeue 1 row',
        );
      }
      // A pending row: why it waits and when it tries next, "Retry now", and its body pretty and in colour.
      await page.click('#rows tr[data-id="evt_retrying_1"]');
      await page.locator('#d-title', { hasText: 'stripe evt_retrying_1' }).waitFor({ timeout: 10_000 });
      assert.match((await page.textContent('#d-fields')) ?? '', /next attempt\s*in [12]m.*last error\s*connect ECONNREFUSED/s);
      assert.equal(await page.textContent('#d-requeue'), 'Retry now…');
      assert.ok((await page.locator('#d-body .j-key').count()) >= 3, `${at}: the body's keys in colour`);
      assert.notEqual(
        await page
          .locator('#d-body .j-key')
          .first()
          .evaluate((e) => getComputedStyle(e).color),
        await page
          .locator('#d-body .j-str')
          .first()
          .evaluate((e) => getComputedStyle(e).color),
      );
      await page.click('#d-raw');
      assert.equal(await page.locator('#d-body span').count(), 0, 'raw bytes are plain');
      assert.deepEqual(errors, []);
      await page.close();
    }
  } finally {
    await browser.close();
    await ui.close();
    await writer.close();
  }
});
