import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, Page } from 'playwright-core';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { startUi } from '../src/ui/server.js';
import { tempDir } from './helpers/tmp.js';
import { CHROMIUM, chromiumMissing } from './helpers/backends.js';

/**
 * The inspector on a new user's first day (issue 53, 14), in a real browser: every column in view
 * or ended in … at the card's edge, on a phone and a laptop; no 404 for an icon; an empty dead-rows
 * table said in words; the signed curl refused without a URL, as Replay is.
 */

const LONG_ERROR =
  'forward target answered 500: {"error":"connect ECONNREFUSED 10.0.3.12:5432 — the billing database is down for maintenance"}';

async function inboxWith(rows: boolean): Promise<string> {
  const file = join(tempDir(), 'inbox.db');
  const inbox = openSqliteInbox(file);
  if (rows) {
    const now = Date.now();
    for (let i = 0; i < 6; i++)
      await inbox.put({
        source: 'stripe',
        deliveryId: `evt_1Qx${i}Lk8aBcDeFgHiJkLmNoPq`,
        eventType: 'customer.subscription.updated',
        body: Buffer.from('{"id":"evt_x","type":"customer.subscription.updated"}'),
        headers: { 'content-type': 'application/json', 'x-stripe-very-long-header-name-for-testing': 'v' },
        receivedAt: now - i * 1000,
      });
    const claimed = await inbox.claim({ limit: 3, leaseMs: 60_000 });
    await inbox.settle(claimed.map((c) => ({ key: c, fence: c.fence, outcome: 'dead' as const, error: LONG_ERROR })));
  }
  await inbox.close();
  return file;
}

async function opened(browser: Browser, pageUrl: string, width: number): Promise<{ page: Page; failed: string[] }> {
  const page = await browser.newPage({ viewport: { width, height: 900 } });
  const failed: string[] = [];
  page.on('response', (r) => {
    if (r.status() === 404 && !new URL(r.url()).pathname.startsWith('/api/refused')) failed.push(new URL(r.url()).pathname);
  });
  await page.goto(pageUrl);
  return { page, failed };
}

test('the list fits its card at 1280 px (the last error ends in …) and keeps status in view at 390 px; header names break only at hyphens; no icon 404', async (t) => {
  const why = chromiumMissing();
  if (why) return t.skip(why);
  const ui = await startUi({ inbox: await inboxWith(true), port: 0 });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const wide = await opened(browser, ui.pageUrl, 1280);
    await wide.page.locator('#rows td.err', { hasText: 'forward target' }).first().waitFor({ timeout: 10_000 });
    const right = (selector: string) => wide.page.$eval(selector, (e) => e.getBoundingClientRect().right);
    const fit = { cardRight: await right('#list'), tableRight: await right('#rows') };
    assert.ok(fit.tableRight <= fit.cardRight, `the list's table ends at ${fit.tableRight}, past its card's edge at ${fit.cardRight}`);
    // A string to evaluate: the tests compile without the DOM's types.
    assert.equal(await wide.page.evaluate(`getComputedStyle(document.querySelector('#rows td.err')).textOverflow`), 'ellipsis');
    assert.equal(await wide.page.locator('link[rel="icon"]').count(), 1);
    assert.deepEqual(wide.failed, [], 'nothing the page asks for is missing (a favicon included)');

    const phone = await opened(browser, ui.pageUrl, 390);
    await phone.page.locator('#rows tbody tr').first().waitFor({ timeout: 10_000 });
    const status = await phone.page.$eval('#rows thead th:nth-child(3)', (th) => th.getBoundingClientRect().right);
    assert.ok(status <= 390, `the status column ends at ${status} px, off a 390 px screen`);
    await phone.page.click('#rows tbody tr');
    await phone.page.locator('#d-headers td', { hasText: 'x-stripe-very-long-header-name-for-testing' }).waitFor({ timeout: 10_000 });
    assert.equal(await phone.page.evaluate(`getComputedStyle(document.querySelector('#d-headers td')).overflowWrap`), 'normal');
  } finally {
    await browser.close();
    await ui.close();
  }
});

test('an empty dead-rows table says "no dead rows"; the signed curl without a URL is refused in the words Replay uses', async (t) => {
  const why = chromiumMissing();
  if (why) return t.skip(why);
  const empty = await startUi({ inbox: await inboxWith(false), port: 0 });
  const signing = await startUi({ inbox: await inboxWith(true), port: 0, provider: 'stripe', secrets: ['whsec_first_day'] });
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const { page } = await opened(browser, empty.pageUrl, 1280);
    await page.locator('#dead tbody td', { hasText: 'no dead rows' }).waitFor({ timeout: 10_000 });

    const { page: p } = await opened(browser, signing.pageUrl, 1280);
    await p.locator('#rows tbody tr').first().click();
    await p.locator('#d-curl').waitFor({ state: 'visible', timeout: 10_000 });
    await p.click('#d-replay');
    const replaySaid = await p.textContent('#d-sent');
    assert.match(replaySaid ?? '', /give the URL to replay to/);
    await p.$eval('#d-sent', (e) => {
      e.textContent = '';
    });
    await p.click('#d-curl');
    assert.equal(await p.textContent('#d-sent'), replaySaid);
    assert.equal(await p.isHidden('#d-curl-text'), true, 'no curl with a placeholder URL');
  } finally {
    await browser.close();
    await empty.close();
    await signing.close();
  }
});
