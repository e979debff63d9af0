import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parsePrometheus, prometheusParserMissing } from './helpers/prometheus.js';
import type { Sample } from './helpers/prometheus.js';
import { postSignedStripe, startListen, stopAll } from './helpers/listen.js';
import { until } from './helpers/until.js';
import { BACKENDS } from './helpers/backends.js';

/** listen's GET /metrics (issue 27, item 3), scraped and read by a Prometheus text-format parser. */

const SECRET = `whsec_${Buffer.from('metrics-test-secret-00000').toString('base64')}`;

async function scrape(url: string): Promise<Sample[]> {
  const r = await fetch(new URL('/metrics', url));
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type') ?? '', /^text\/plain; version=0\.0\.4/);
  return parsePrometheus(await r.text());
}

/** The value of the one sample of that name whose labels include these. */
function value(samples: Sample[], name: string, labels: Record<string, string> = {}): number {
  const found = samples.filter((x) => x.name === name && Object.entries(labels).every(([k, v]) => x.labels[k] === v));
  assert.equal(found.length, 1, `${found.length} samples ${name} ${JSON.stringify(labels)}`);
  return (found[0] as Sample).value;
}

for (const b of BACKENDS) {
  test(`/metrics on listen (${b.name}): deliveries by result, latency, rows by status, and the oldest pending row's age — rising while no worker runs, 0 once one drains it`, async (t) => {
    const why = (await b.missing()) ?? (await prometheusParserMissing());
    if (why) return t.skip(why);
    const target = b.target();
    const { p, url } = await startListen(target.url, SECRET, '--no-worker');
    try {
      for (const id of ['evt_m1', 'evt_m2', 'evt_m3']) assert.equal((await postSignedStripe(url, id, SECRET)).status, 200);
      assert.equal((await postSignedStripe(url, 'evt_m1', SECRET)).status, 200, 'a duplicate');
      assert.equal((await postSignedStripe(url, 'evt_bad', 'whsec_b3RoZXItc2VjcmV0LW90aGVyLXNlY3JldA==')).status, 401);
      const first = await scrape(url);
      assert.equal(value(first, 'hookdrill_deliveries_total', { result: 'stored' }), 3);
      assert.equal(value(first, 'hookdrill_deliveries_total', { result: 'duplicate' }), 1);
      assert.equal(value(first, 'hookdrill_deliveries_total', { result: 'rejected', reason: 'no_match' }), 1);
      assert.equal(value(first, 'hookdrill_request_duration_seconds_count', { result: 'stored' }), 3, 'three stored requests timed');
      assert.equal(value(first, 'hookdrill_inbox_rows', { status: 'pending' }), 3);
      assert.equal(value(first, 'hookdrill_store_healthy'), 1);
      assert.ok(value(first, 'hookdrill_commit_batch_size_count') >= 1, 'group commit reports its transactions');
      const age1 = value(first, 'hookdrill_inbox_oldest_pending_age_seconds');
      assert.ok(age1 > 0, `age ${age1}`);
      await new Promise((r) => setTimeout(r, 1_100));
      const age2 = value(await scrape(url), 'hookdrill_inbox_oldest_pending_age_seconds');
      assert.ok(age2 > age1 + 1, `the age rises while nothing works the rows (${age1} → ${age2})`);

      const health = (await (await fetch(new URL('/healthz', url))).json()) as { ok: boolean; answered: Record<string, number> };
      assert.equal(health.ok, true);
      assert.deepEqual({ ...health.answered, since: 0 }, { since: 0, stored: 3, duplicates: 1, rejected: 1, failed: 0 });

      // A worker elsewhere (a second listen on the same inbox) drains it: the age falls to 0.
      const { p: worker, url: workerUrl } = await startListen(target.url, SECRET);
      try {
        await until(
          async () => value(await scrape(url), 'hookdrill_inbox_oldest_pending_age_seconds') === 0,
          'the age to fall to 0',
          15_000,
        );
        const after = await scrape(url);
        assert.equal(value(after, 'hookdrill_inbox_rows', { status: 'done' }), 3);
        assert.equal(value(await scrape(workerUrl), 'hookdrill_worker_outcomes_total', { outcome: 'done' }), 3);
      } finally {
        await stopAll(worker);
      }
    } finally {
      await stopAll(p);
      await target.drop();
    }
  });
}
