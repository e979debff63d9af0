import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openInbox } from '../src/inbox/index.js';
import type { NewDelivery } from '../src/inbox/index.js';
import { hookdrill } from './helpers/cli.js';
import { BACKENDS } from './helpers/backends.js';

/** inspect's row lists newest first by default, --order oldest, and pages by cursor (issue 37), on every backend. */

const row = (id: string, receivedAt: number, source = 'stripe'): NewDelivery => ({
  source,
  deliveryId: id,
  eventType: 'invoice.paid',
  body: Buffer.from(`{"id":"${id}"}`),
  headers: {},
  receivedAt,
});

interface RowsJson {
  view: string;
  order: string;
  total: number;
  rows: { deliveryId: string; source: string }[];
  next?: string;
}

for (const b of BACKENDS) {
  test(`inspect (${b.name}): rows newest first by default, --order oldest, --after pages through every row once; --json says the order`, async (t) => {
    const why = await b.missing();
    if (why) return t.skip(why);
    const target = b.target();
    const inbox = await openInbox(target.url);
    const base = Date.now() - 3_600_000;
    // Seven rows, two of them received in the same millisecond under two sources (ties break by source, then id).
    await inbox.putMany([
      row('evt_1', base + 1_000),
      row('evt_2', base + 2_000),
      row('evt_3', base + 3_000, 'github'),
      row('evt_3', base + 3_000, 'stripe'),
      row('evt_4', base + 4_000),
      row('evt_5', base + 5_000),
      row('evt_6', base + 6_000),
    ]);
    await inbox.close();
    try {
      const list = async (...args: string[]) => {
        const r = await hookdrill(['inspect', '--inbox', target.url, '--status', 'pending', '--json', ...args]);
        assert.equal(r.code, 0, r.stderr);
        return JSON.parse(r.stdout) as RowsJson;
      };
      const key = (x: { source: string; deliveryId: string }) => `${x.source}/${x.deliveryId}`;
      const newest = await list();
      assert.equal(newest.order, 'newest');
      assert.deepEqual(newest.rows.map(key), [
        'stripe/evt_6',
        'stripe/evt_5',
        'stripe/evt_4',
        'stripe/evt_3',
        'github/evt_3',
        'stripe/evt_2',
        'stripe/evt_1',
      ]);
      assert.equal(newest.next, undefined, 'every row fitted: no next page');

      for (const order of ['newest', 'oldest'] as const) {
        const pages: string[][] = [];
        let page = await list('--order', order, '--limit', '2');
        assert.equal(page.order, order);
        pages.push(page.rows.map(key));
        while (page.next) {
          page = await list('--order', order, '--limit', '2', '--after', page.next);
          pages.push(page.rows.map(key));
        }
        const want = order === 'newest' ? newest.rows.map(key) : [...newest.rows.map(key)].reverse();
        assert.deepEqual(pages.flat(), want, `${order}: pages of two cover every row once, in order`);
        assert.equal(pages.length, 4);
      }

      // The text says the order and how to go on.
      const text = await hookdrill(['inspect', '--inbox', target.url, '--status', 'pending', '--limit', '3'], { NO_COLOR: '1' });
      assert.equal(text.code, 0, text.stderr);
      const lines = text.stdout.trimEnd().split('\n');
      assert.match(lines[1] ?? '', /^evt_6 /);
      assert.match(lines.at(-2) ?? '', /^3 of 7 matching rows, newest first \(--status pending\)$/);
      assert.match(lines.at(-1) ?? '', /^older rows: the same command with --after [A-Za-z0-9_-]+$/);

      // Bad input: one line, exit 2.
      for (const [args, said] of [
        [['--order', 'sideways'], /^hookdrill: --order sideways: expected newest or oldest\n$/],
        [['--after', 'evt_6'], /^hookdrill: --after evt_6: not a cursor hookdrill printed/],
        [['--after', Buffer.from('[1,2]').toString('base64url')], /not a cursor hookdrill printed/],
      ] as const) {
        const bad = await hookdrill(['inspect', '--inbox', target.url, ...args]);
        assert.equal(bad.code, 2, bad.stderr);
        assert.match(bad.stderr, said);
        assert.equal(bad.stderr.trim().split('\n').length, 1);
      }
    } finally {
      await target.drop();
    }
  });
}
