import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { Page } from 'playwright-core';
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

const delivery = (id: string, receivedAt: number, type = 'invoice.paid'): NewDelivery => ({
  source: 'stripe',
  deliveryId: id,
  eventType: type,
  body: Buffer.from(JSON.stringify({ id, type, object: 'event' })),
  headers: { 'content-type': 'application/json' },
  receivedAt,
});

/** Ten rows received a minute ago that died of one error, then 10,000 received over the two days before (oldest evt_00000). */
async function fill(inbox: Inbox): Promise<void> {
  await inbox.putMany(Array.from({ length: DEAD }, (_, j) => delivery(`evt_dead_${j}`, Date.now() - 60_000 + j, 'charge.failed')));
  const claimed = await inbox.claim({ limit: 100, leaseMs: 60_000 });
  assert.equal(claimed.length, DEAD);
  await inbox.settle(claimed.map((c) => ({ key: c, fence: c.fence, outcome: 'dead' as const, error: 'forward target answered 500' })));
  const start = Date.now() - 2 * 86_400_000;
  for (let i = 0; i < ROWS; i += 1_000) {
    await inbox.putMany(
      Array.from({ length: 1_000 }, (_, j) => delivery(`evt_${String(i + j).padStart(5, '0')}`, start + (i + j) * 10_000)),
    );
  }
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
      const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(ui.pageUrl);
      await page.locator('#total', { hasText: /^200 of 10,?010 rows, newest first$/ }).waitFor({ timeout: 20_000 });
      // The newest first: the dead rows of a minute ago, newest of them on top; the oldest row is not on the page.
      assert.deepEqual(await firstIds(page, 2), ['evt_dead_9', 'evt_dead_8']);
      assert.equal(await page.locator('#rows tr[data-id="evt_00000"]').count(), 0);

      // A delivery that arrives while the page is open appears on top, without a reload, at the next
      // refresh (2 s after the last, or four times as long as it took: a BullMQ scan under CI's load).
      await writer.put(delivery('evt_arrived_now', Date.now()));
      await page.locator('#rows tbody tr:first-child[data-id="evt_arrived_now"]').waitFor({ timeout: 30_000 });
      assert.equal(await page.locator('#rows tr[data-id="evt_dead_0"]').count(), 1, 'the rows it pushed down stay');

      // Older pages on demand: each continues where the last ended, none twice.
      await page.click('#older');
      await page.locator('#total', { hasText: /^401 of 10,?011 rows, newest first$/ }).waitFor({ timeout: 15_000 });
      const ids = await page.$$eval('#rows tbody tr', (trs) => trs.map((tr) => tr.getAttribute('data-id')));
      assert.equal(new Set(ids).size, ids.length, 'no row listed twice');
      const expectedLast = `evt_${String(ROWS - (401 - 1 - DEAD)).padStart(5, '0')}`;
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
    const page = await browser.newPage({ viewport: { width: 1280, height: 768 } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
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
