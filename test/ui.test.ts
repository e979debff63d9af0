import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';
import { startUi } from '../src/ui/server.js';
import { postSignedStripe, startListen, stopAll } from './helpers/listen.js';
import { reply, startServer } from './helpers/server.js';
import { tempDir } from './helpers/tmp.js';
import { BACKENDS, CHROMIUM, chromiumMissing } from './helpers/backends.js';

/** `hookdrill ui` in a real browser (Debian's chromium, driven by playwright-core), against a real listen on each backend (issue 27). */

const SECRET = `whsec_${Buffer.from('ui-browser-test-secret-00').toString('base64')}`;
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** A Stripe event whose strings are hostile: markup, and terminal escapes. */
async function postHostile(url: string, id: string): Promise<number> {
  const { providers } = await import('../src/providers/index.js');
  const body = Buffer.from(
    JSON.stringify({
      id,
      object: 'event',
      type: 'invoice.paid',
      data: { object: { note: '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">\u001b]0;owned\u0007' } },
    }),
  );
  const headers = providers.stripe.sign(body, [SECRET], { nowMs: Date.now(), deliveryId: id, eventType: 'invoice.paid' });
  return (await fetch(url, { method: 'POST', body, headers })).status;
}

for (const b of BACKENDS) {
  test(`ui (${b.name}): deliveries appear live, a dead row is requeued from the page and processed, a hostile body is shown as text; no token, a foreign Host or Origin is refused`, async (t) => {
    const why = chromiumMissing() ?? (await b.missing());
    if (why) return t.skip(why);
    const target = b.target();
    let failing = true;
    const app = await startServer((req, res) => reply(res, failing && req.rawBody.includes('evt_dead') ? 500 : 200, 'ok'));
    const { p: listen, url } = await startListen(target.url, SECRET, '--forward-to', app.url, '--max-attempts', '1');
    const fixturesDir = join(tempDir(), 'fixtures');
    const ui = await startUi({ inbox: target.url, port: 0, provider: 'stripe', secrets: [SECRET], fixturesDir });
    // The app a replay goes to: it verifies with Stripe's own library, as a user's would.
    const verified: string[] = [];
    const verifier = await startServer(async (req, res) => {
      const { verifyWithOfficialCode } = await import('./helpers/official.js');
      await verifyWithOfficialCode('stripe', req.rawBody, req.headers, SECRET).then(
        () => {
          verified.push(req.rawBody.toString());
          reply(res, 200, 'verified');
        },
        (err: Error) => reply(res, 400, err.message),
      );
    });
    const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
    try {
      const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await page.goto(ui.pageUrl);
      await page.waitForSelector('#counts span');

      // Live: sent after the page loaded, shown without a reload.
      assert.equal(await postHostile(url, 'evt_live_<b>1</b>'), 200);
      assert.equal((await postSignedStripe(url, 'evt_dead_1', SECRET)).status, 200);
      await page.waitForSelector('#rows tr[data-id="evt_live_<b>1</b>"]', { timeout: 10_000 });
      // (Waits by locator, not by strings evaluated in the page: the page's CSP refuses eval, as it should.)
      await page.locator('#dead tbody tr', { hasText: 'forward target answered 500' }).waitFor({ timeout: 15_000 });

      // Requeue from the page: previewed (the dry run's count), then done; the worker processes it.
      failing = false;
      await page.click('#dead tbody button');
      const confirm = page.locator('#dead tbody button.confirm');
      assert.equal(await confirm.textContent(), 'requeue 1 row');
      await confirm.click();
      await page.locator('#counts .dead', { hasText: /^dead 0$/ }).waitFor({ timeout: 15_000 });
      await page.locator('#counts .done', { hasText: /^done 2$/ }).waitFor({ timeout: 15_000 });
      // The chart by outcome: both rows of the hour are drawn done (the requeued one too), none dead.
      await page.locator('#legend', { hasText: /^done$/ }).waitFor({ timeout: 10_000 });
      const drawn = await page.$$eval('#chart > div', (bars) =>
        bars.map((b) => [
          Number(b.getAttribute('data-total')),
          [...b.children].map((c) => `${c.getAttribute('class')}:${/flex-grow: (\d+)/.exec(c.getAttribute('style') ?? '')?.[1]}`),
        ]),
      );
      assert.equal(drawn.length, 60);
      assert.equal(
        drawn.reduce((n, [total]) => n + (total as number), 0),
        2,
      );
      assert.deepEqual(
        drawn.flatMap(([, parts]) => parts as string[]).sort(),
        drawn.some(([total]) => total === 2) ? ['done:2'] : ['done:1', 'done:1'],
      );
      const shots = process.env.HOOKDRILL_UPDATE_SCREENSHOTS === '1' && b.name === 'SQLite' ? join(ROOT, 'docs', 'images') : tempDir();
      mkdirSync(shots, { recursive: true });
      await page.screenshot({ path: join(shots, 'ui-overview.png') });
      // Filtered by time, as inspect's --until: nothing was received more than an hour ago.
      await page.fill('#filters input[name="until"]', '1h');
      await page.locator('#total', { hasText: /^0 of 0 rows, newest first$/ }).waitFor({ timeout: 10_000 });
      await page.fill('#filters input[name="until"]', '');
      await page.locator('#total', { hasText: /^2 of 2 rows, newest first$/ }).waitFor({ timeout: 10_000 });

      // One delivery: the markup in its body is text, nothing of it ran.
      await page.click('#rows tr[data-id="evt_live_<b>1</b>"]');
      await page.waitForSelector('#delivery:not([hidden])');
      assert.match((await page.textContent('#d-body')) ?? '', /<script>window\.__pwned = 1<\/script><img src=x onerror=/);
      assert.equal(await page.textContent('#d-title'), 'stripe evt_live_<b>1</b>');
      assert.equal(await page.evaluate(() => (globalThis as { __pwned?: number }).__pwned), undefined);
      assert.equal(await page.locator('#d-title b').count(), 0, 'an id holding markup makes no element');
      // Edit and replay: the changed body is signed afresh and the official verifier accepts it.
      await page.fill('#d-to', verifier.url);
      await page.click('#d-edit');
      const original = await page.inputValue('#d-editor');
      await page.fill('#d-editor', original.replace('"invoice.paid"', '"invoice.payment_failed"'));
      await page.click('#d-send-edited');
      await page.locator('#d-sent', { hasText: /^200: verified/ }).waitFor({ timeout: 10_000 });
      assert.equal(verified.length, 1);
      assert.match(verified[0] ?? '', /"type": ?"invoice\.payment_failed"/);
      await page.click('#d-replay');
      await page.locator('#d-sent', { hasText: /^200: verified/ }).waitFor({ timeout: 10_000 });
      assert.equal(verified.length, 2);
      assert.match(verified[1] ?? '', /"type":"invoice\.paid"/, 'a plain replay sends the body as stored');
      await page.click('#d-curl');
      await page.locator('#d-curl-text', { hasText: /^curl / }).waitFor({ timeout: 10_000 });
      const curl = (await page.textContent('#d-curl-text')) ?? '';
      assert.match(
        curl,
        /^curl -sS -X POST 'http:\/\/127\.0\.0\.1:\d+\/webhooks' .*-H 'stripe-signature: t=\d+,v1=[0-9a-f]{64}' --data-binary '/,
      );
      // Pasted into a shell, it delivers a body the official verifier accepts.
      // (Run asynchronously: the verifying app answers from this process.)
      const { execFile } = await import('node:child_process');
      const pasted = await new Promise<string>((resolve, reject) =>
        execFile('bash', ['-c', curl], (err, stdout) => (err ? reject(err) : resolve(stdout))),
      );
      assert.equal(pasted, 'verified');
      assert.equal(verified.length, 3);
      assert.doesNotMatch(await page.content(), new RegExp(SECRET.slice(6, 30)), 'the secret never reaches the page');
      // Save as a fixture (redacted), as fixtures capture writes it; a second save refuses to overwrite.
      await page.click('#d-fixture');
      await page.locator('#d-fixture-text', { hasText: /^saved / }).waitFor({ timeout: 10_000 });
      assert.match(
        (await page.textContent('#d-fixture-text')) ?? '',
        /saved .*invoice\.paid\.json \(redacted\)\nsend it: .*hookdrill send/,
      );
      assert.ok(existsSync(join(fixturesDir, 'invoice.paid.json')));
      await page.click('#d-fixture');
      await page.locator('#d-fixture-text', { hasText: /exists/ }).waitFor({ timeout: 10_000 });
      await page.screenshot({ path: join(shots, 'ui-delivery.png'), fullPage: true });
      assert.ok(statSync(join(shots, 'ui-delivery.png')).size > 10_000);
      assert.deepEqual(errors, []);

      // What another site cannot do.
      const api = new URL('/api/overview', ui.url);
      assert.equal((await fetch(api)).status, 403, 'no token');
      assert.equal((await fetch(new URL('/', ui.url))).status, 403, 'the page without its token');
      const { request } = await import('node:http');
      const rebound = await new Promise<number>((resolve, reject) => {
        const r = request(
          {
            host: '127.0.0.1',
            port: new URL(ui.url).port,
            path: '/api/overview',
            headers: { host: 'evil.example', 'x-hookdrill-token': ui.token },
          },
          (res) => {
            res.resume();
            resolve(res.statusCode ?? 0);
          },
        );
        r.on('error', reject);
        r.end();
      });
      assert.equal(rebound, 403, 'a foreign Host (DNS rebinding)');
      const cross = await fetch(new URL('/api/requeue', ui.url), {
        method: 'POST',
        headers: { 'x-hookdrill-token': ui.token, origin: 'http://evil.example', 'content-type': 'application/json' },
        body: JSON.stringify({ status: 'dead' }),
      });
      assert.equal(cross.status, 403, 'a state change from another origin');
      const csp = (await fetch(ui.pageUrl)).headers.get('content-security-policy') ?? '';
      assert.match(csp, /default-src 'none'; script-src 'self'/);
    } finally {
      await browser.close();
      await ui.close();
      await stopAll(listen);
      await app.close();
      await verifier.close();
      await target.drop();
    }
  });
}

test('listen --ui: the inspector beside the receiver, with the requests it refused lately and why (no inbox row holds them)', async (t) => {
  const why = chromiumMissing();
  if (why) return t.skip(why);
  const { p: listen, url } = await startListen(join(tempDir(), 'inbox.db'), SECRET, '--ui', '0', '--no-worker');
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  try {
    const { until } = await import('./helpers/until.js');
    await until(() => /the inbox in a browser: http:\/\/\S+token=\S+/.test(listen.stderr()), 'the page URL on stderr', 10_000);
    const pageUrl = /the inbox in a browser: (http:\/\/\S+)/.exec(listen.stderr())?.[1] as string;
    assert.equal((await postSignedStripe(url, 'evt_wrong_secret', 'whsec_b3RoZXItc2VjcmV0LW90aGVyLXNlY3JldA==')).status, 401);
    assert.equal((await postSignedStripe(url, 'evt_fine', SECRET)).status, 200);
    const page = await browser.newPage();
    await page.goto(pageUrl);
    await page.locator('#refused tbody tr', { hasText: 'no_match' }).waitFor({ timeout: 10_000 });
    assert.match((await page.textContent('#refused tbody')) ?? '', /401.*no_match: no Stripe-Signature v1 signature matches the body/);
    // The chart counts it too, as refused, beside the one stored.
    await page.locator('#chart span.refused').first().waitFor({ timeout: 10_000 });
    assert.equal(await page.locator('#chart span.refused').count(), 1);
    assert.match((await page.textContent('#legend')) ?? '', /refused/);
    await page.locator('#rows tr[data-id="evt_fine"]').waitFor({ timeout: 10_000 });
    // Why: the refused request is held whole and judged as hookdrill verify judges it.
    await page.locator('#refused tbody tr', { hasText: 'no_match' }).locator('button', { hasText: 'why?' }).click();
    await page.locator('#refused-why-title', { hasText: 'r1: refused' }).waitFor({ timeout: 10_000 });
    const said = (await page.textContent('#refused-why-text')) ?? '';
    assert.match(said, /hookdrill verify --ui '.*' --refused r1/);
    assert.ok(!said.includes(SECRET));
  } finally {
    await browser.close();
    await stopAll(listen);
  }
});

test('listen --ui keeps a refused request whole: the inspector says why its signature failed, and hookdrill verify --ui --refused judges the same bytes', async () => {
  const { hookdrill } = await import('./helpers/cli.js');
  const { providers } = await import('../src/providers/index.js');
  const { until } = await import('./helpers/until.js');
  const { p: listen, url } = await startListen(join(tempDir(), 'inbox.db'), SECRET, '--ui', '0', '--no-worker');
  try {
    await until(() => /the inbox in a browser: http:\/\/\S+token=\S+/.test(listen.stderr()), 'the page URL on stderr', 10_000);
    const pageUrl = /the inbox in a browser: (http:\/\/\S+)/.exec(listen.stderr())?.[1] as string;
    // Signed as Stripe signs it (pretty-printed, LF), delivered as a proxy that rewrites line ends passes it on.
    const signed = Buffer.from(
      `${JSON.stringify({ id: 'evt_crlf', object: 'event', type: 'invoice.paid', data: { object: {} } }, null, 2)}\n`,
    );
    const headers = providers.stripe.sign(signed, [SECRET], { nowMs: Date.now(), deliveryId: 'evt_crlf', eventType: 'invoice.paid' });
    const sent = Buffer.from(signed.toString().replace(/\n/g, '\r\n'));
    assert.equal((await fetch(url, { method: 'POST', body: sent, headers })).status, 401);
    const token = new URL(pageUrl).searchParams.get('token') as string;
    const api = (path: string) => fetch(new URL(path, pageUrl), { headers: { 'x-hookdrill-token': token } });
    const list = (await (await api('/api/refused')).json()) as { refused: { id: string; kept: boolean; code?: string }[] };
    assert.deepEqual(
      list.refused.map((r) => [r.id, r.kept, r.code]),
      [['r1', true, 'no_match']],
    );
    const detail = (await (await api('/api/refused/r1')).json()) as { explanation: { code: string; findings: string[] }; raw: string };
    assert.equal(detail.explanation.code, 'transformed');
    assert.match(detail.explanation.findings[0] ?? '', /line ends/i);
    assert.ok(Buffer.from(detail.raw, 'base64').includes(sent), 'the raw request carries the body as it arrived');
    assert.ok(!Buffer.from(detail.raw, 'base64').toString().includes(SECRET), 'no secret in what the page is given');
    // The same verdict from a terminal, and a clear line for an id no longer held.
    const cli = await hookdrill(['verify', '--ui', pageUrl, '--refused', 'r1', '--secret', SECRET]);
    assert.equal(cli.code, 1, cli.stderr);
    assert.match(cli.stdout, /line ends/i);
    assert.ok(!cli.stdout.includes(SECRET) && !cli.stdout.includes(token));
    const gone = await hookdrill(['verify', '--ui', pageUrl, '--refused', 'r9', '--secret', SECRET]);
    assert.equal(gone.code, 2);
    assert.match(gone.stderr, /^hookdrill: --refused r9: r9 is no longer held/m);
    const bare = await hookdrill(['verify', '--refused', 'r1', '--secret', SECRET]);
    assert.equal(bare.code, 2);
    assert.match(bare.stderr, /--refused goes with --ui URL/);
  } finally {
    await stopAll(listen);
  }
});
