import assert from 'node:assert/strict';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import type { NewDelivery } from '../src/inbox/index.js';
import { hookdrill } from './helpers/cli.js';
import { postSignedStripe, startListen, stopAll } from './helpers/listen.js';
import { tempDir } from './helpers/tmp.js';
import { until } from './helpers/until.js';

/**
 * `listen --ui` beside a receiver (issue 36): the inspector can sign any body with the real secret,
 * so it stays on this machine unless its own flag says otherwise; and its queries run on a thread
 * of their own, so looking at the inbox never holds up an acknowledgement.
 */

const SECRET = 'whsec_test_ui_isolation';

/** This machine's first address that is not loopback, if it has one. */
function outsideAddress(): string | undefined {
  for (const list of Object.values(networkInterfaces()))
    for (const a of list ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  return undefined;
}

async function pageUrlOf(stderr: () => string): Promise<URL> {
  await until(() => /the inbox in a browser: http:\/\/\S+token=\S+/.test(stderr()), 'the page URL on stderr', 10_000);
  return new URL(/the inbox in a browser: (http:\/\/\S+)/.exec(stderr())?.[1] as string);
}

test('listen --host 0.0.0.0 --ui: the receiver is open to senders, the inspector stays on loopback, and --ui-host opens it loudly', async () => {
  const outside = outsideAddress();
  const { p, url } = await startListen(join(tempDir(), 'inbox.db'), SECRET, '--host', '0.0.0.0', '--ui', '0', '--no-worker');
  try {
    const page = await pageUrlOf(p.stderr);
    assert.equal(page.hostname, '127.0.0.1', `the inspector bound to ${page.hostname}`);
    assert.doesNotMatch(p.stderr(), /reachable from other machines/);
    if (outside) {
      const port = new URL(url).port;
      assert.equal(
        (await postSignedStripe(`http://${outside}:${port}/`, 'evt_outside', SECRET)).status,
        200,
        'the receiver on every interface',
      );
      const reached = await fetch(`http://${outside}:${page.port}/`).then(
        (r) => r.status,
        () => 'refused',
      );
      assert.equal(reached, 'refused', `the inspector answered on ${outside}`);
    }
  } finally {
    await stopAll(p);
  }
  const { p: open } = await startListen(join(tempDir(), 'inbox.db'), SECRET, '--ui', '0', '--ui-host', '0.0.0.0', '--no-worker');
  try {
    await pageUrlOf(open.stderr);
    await until(
      () => /warning: the inspector listens on 0\.0\.0\.0, reachable from other machines/.test(open.stderr()),
      'the warning that the inspector is open to other machines',
      10_000,
    );
  } finally {
    await stopAll(open);
  }
});

test('an empty --host or --ui-host is one line and exit 2, not a server bound to every interface', async () => {
  const inbox = join(tempDir(), 'inbox.db');
  for (const args of [
    ['listen', '--provider', 'stripe', '--secret', SECRET, '--inbox', inbox, '--port', '0', '--host', ''],
    ['listen', '--provider', 'stripe', '--secret', SECRET, '--inbox', inbox, '--port', '0', '--ui', '0', '--ui-host', ''],
    ['ui', '--inbox', inbox, '--port', '0', '--host', ''],
  ]) {
    const r = await hookdrill(args);
    assert.equal(r.code, 2, `${args.join(' ')}: exit ${r.code} ${r.stderr}`);
    assert.match(r.stderr, /is empty: give an address/);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  }
});

test("the inspector's queries run off the receiver's thread: a delivery is answered while an overview of 400,000 rows is computed", async () => {
  const file = join(tempDir(), 'inbox.db');
  const seed = openSqliteInbox(file);
  const now = Date.now();
  for (let batch = 0; batch < 40; batch++) {
    const rows: NewDelivery[] = Array.from({ length: 10_000 }, (_, i) => ({
      source: 'stripe',
      deliveryId: `evt_seed_${batch}_${i}`,
      eventType: i % 3 ? 'invoice.paid' : 'charge.failed',
      body: Buffer.from('{}'),
      headers: {},
      receivedAt: now - (batch * 10_000 + i) * 5,
    }));
    await seed.putMany(rows);
  }
  await seed.close();
  const { p, url } = await startListen(file, SECRET, '--ui', '0', '--no-worker');
  try {
    const page = await pageUrlOf(p.stderr);
    const token = page.searchParams.get('token') as string;
    const order: string[] = [];
    const overview = fetch(new URL('/api/overview', page), { headers: { 'x-hookdrill-token': token } }).then((r) => {
      order.push('overview');
      return r.status;
    });
    // Long enough for the inspector to be in its query; far shorter than the query.
    await new Promise((r) => setTimeout(r, 150));
    const delivered = postSignedStripe(url, 'evt_during_overview', SECRET).then((r) => {
      order.push('delivery');
      return r.status;
    });
    assert.deepEqual(await Promise.all([overview, delivered]), [200, 200]);
    assert.deepEqual(order, ['delivery', 'overview'], 'the delivery waited for the inspector');
    // And a page asking for a million rows is told how many it may have, not served them.
    const huge = await fetch(new URL('/api/rows?limit=1000000', page), { headers: { 'x-hookdrill-token': token } });
    assert.equal(huge.status, 400);
    assert.match(((await huge.json()) as { error: string }).error, /from 1 to 1000 rows at a time/);
  } finally {
    await stopAll(p);
  }
});
