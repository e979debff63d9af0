import { test } from 'node:test';
import assert from 'node:assert/strict';
import { run as chaos } from '../src/chaos/run.js';
import type { BullmqInbox } from '../src/inbox/bullmq/index.js';
import { openInbox } from '../src/inbox/index.js';
import { BIN, hookdrill } from './helpers/cli.js';
import { postSignedStripe, startListen, stopAll } from './helpers/listen.js';
import { freePort } from './helpers/ports.js';
import { freshQueue, needRedis, redisProxy } from './helpers/redis.js';
import { reply, startServer } from './helpers/server.js';
import { spawnHookdrill } from './helpers/spawned.js';

const SECRET = 'whsec_bullmq_cli';

async function until(what: string, check: () => Promise<boolean> | boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) assert.fail(`timed out waiting: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

test('chaos --inbox redis:// against listen on BullMQ, killed at random moments: nothing acknowledged lost, every job processed', async (t) => {
  if (!(await needRedis(t))) return;
  const q = freshQueue();
  const port = await freePort();
  try {
    const result = await chaos({
      receiver: `node ${BIN} listen --provider stripe --secret ${SECRET} --port ${port} --inbox '${q.url}' --lease 1s`,
      url: `http://127.0.0.1:${port}/`,
      provider: 'stripe',
      secrets: [SECRET],
      inbox: q.url,
      events: 20,
      concurrency: 16,
      rounds: 4,
      killPoint: 'random',
      settle: '300ms',
    });
    assert.deepEqual(result.totals.lost, [], JSON.stringify(result.problems));
    assert.equal(result.ok, true, JSON.stringify(result.problems));
    assert.equal(result.totals.stored, result.totals.sent);
    // The last receiver's worker (and the stalled check, for jobs a killed one held) finishes them all.
    const { p } = await startListen(q.url, SECRET, '--lease', '1s');
    try {
      await until(
        'every stored job done',
        async () => {
          const r = await hookdrill(['inspect', '--inbox', q.url, '--json']);
          const counts = (JSON.parse(r.stdout) as { overview: { stats: { counts: Record<string, number> } } }).overview.stats.counts;
          return counts.done === result.totals.sent && counts.pending === 0 && counts.working === 0;
        },
        15_000,
      );
    } finally {
      await stopAll(p);
    }
  } finally {
    await q.drop();
  }
});

test('an incident on BullMQ: failed jobs grouped by reason in inspect, requeued by selector (dry run first), processed once the app is back', async (t) => {
  if (!(await needRedis(t))) return;
  const q = freshQueue();
  let broken = true;
  const app = await startServer((_req, res) => (broken ? reply(res, 500, 'crm is down') : reply(res, 200, 'ok')));
  const { p, url } = await startListen(
    q.url,
    SECRET,
    '--forward-to',
    app.url,
    '--max-attempts',
    '2',
    '--backoff-base',
    '50ms',
    '--backoff-max',
    '100ms',
  );
  try {
    for (const id of ['evt_inc_1', 'evt_inc_2', 'evt_inc_3']) assert.equal((await postSignedStripe(url, id, SECRET)).status, 200);
    await until('three dead jobs', async () => {
      const r = await hookdrill(['inspect', '--inbox', q.url, '--json']);
      return (JSON.parse(r.stdout) as { overview: { stats: { counts: { dead: number } } } }).overview.stats.counts.dead === 3;
    });
    const overview = await hookdrill(['inspect', '--inbox', q.url]);
    assert.equal(overview.code, 0, overview.stderr);
    assert.match(overview.stdout, /dead 3/);
    assert.match(overview.stdout, /3 +forward target answered 500: crm is down/);
    assert.match(overview.stdout, /kept: done and dead for 7d/);
    const one = await hookdrill(['inspect', '--inbox', q.url, '--id', 'evt_inc_2']);
    assert.equal(one.code, 0, one.stderr);
    assert.match(one.stdout, /status +dead\n +attempts +2\n[\s\S]*last error +forward target answered 500: crm is down/, 'why it failed');
    const body = await hookdrill(['inspect', '--inbox', q.url, '--id', 'evt_inc_2', '--body']);
    assert.match(body.stdout, /^\{"id":"evt_inc_2","object":"event","type":"invoice\.paid"/, 'the raw body, as received');

    const dry = await hookdrill(['requeue', '--inbox', q.url, '--status', 'dead', '--error', 'answered 500', '--dry-run']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout, /3/);
    const forwardedBefore = app.requests.length;
    broken = false;
    const moved = await hookdrill(['requeue', '--inbox', q.url, '--status', 'dead', '--id', 'evt_inc_1', '--id', 'evt_inc_3']);
    assert.equal(moved.code, 0, moved.stderr);
    await until('the two requeued jobs forwarded', () => app.requests.length === forwardedBefore + 2);
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(
      app.requests
        .slice(forwardedBefore)
        .map((r) => String(r.headers['x-hookdrill-delivery-id']))
        .sort(),
      ['evt_inc_1', 'evt_inc_3'],
    );
    const after = await hookdrill(['inspect', '--inbox', q.url, '--json']);
    const o = (JSON.parse(after.stdout) as { overview: { stats: { counts: Record<string, number> }; requeues: { moved: number }[] } })
      .overview;
    assert.equal(o.stats.counts.done, 2);
    assert.equal(o.stats.counts.dead, 1, 'the one not selected stays dead');
    assert.equal(o.requeues[0]?.moved, 2, 'the requeue is on record');
  } finally {
    await stopAll(p);
    await app.close();
    await q.drop();
  }
});

test('Redis goes away under listen on BullMQ: 503 (never a 200), /healthz says why, the CLI is one line and exit 2; back again without a restart', async (t) => {
  if (!(await needRedis(t))) return;
  const q = freshQueue();
  const proxy = await redisProxy();
  const target = proxy.url(q.queue);
  const { p, url } = await startListen(target, SECRET, '--store-deadline', '1s');
  try {
    assert.equal((await postSignedStripe(url, 'evt_up_1', SECRET)).status, 200);
    await proxy.stop();
    const down = await postSignedStripe(url, 'evt_down_1', SECRET);
    assert.equal(down.status, 503, 'a delivery Redis does not hold is never acknowledged');
    const health = await fetch(new URL('/healthz', url));
    assert.notEqual(health.status, 200);
    const inspect = await hookdrill(['inspect', '--inbox', target]);
    assert.equal(inspect.code, 2);
    assert.equal(inspect.stderr.trim().split('\n').length, 1, inspect.stderr);
    assert.match(inspect.stderr, /Redis at 127\.0\.0\.1:\d+ is unreachable/);
    await proxy.start();
    await until('a delivery acknowledged again', async () => (await postSignedStripe(url, 'evt_down_1', SECRET)).status === 200, 15_000);
  } finally {
    await stopAll(p);
    await proxy.close();
    await q.drop();
  }
});

test("listen on BullMQ says at start what Redis's own settings put at risk: in the ready event, and once on stderr at a terminal's log", async (t) => {
  if (!(await needRedis(t))) return;
  const q = freshQueue();
  try {
    const inbox = await openInbox(q.url);
    const expected = (await inbox.durabilityWarnings?.()) ?? [];
    const config = await (inbox as BullmqInbox).aof();
    await inbox.close();
    // This machine's Redis keeps nothing on disk (no AOF): the warning is due.
    if (config.known && !config.appendonly) assert.match(expected.join('\n'), /AOF is off/);
    const { p } = await startListen(q.url, SECRET);
    const ready = p.lines.find((l) => l.event === 'ready');
    await stopAll(p);
    assert.deepEqual(ready?.warnings, expected);
    const text = spawnHookdrill([
      'listen',
      '--port',
      '0',
      '--provider',
      'stripe',
      '--secret',
      SECRET,
      '--inbox',
      q.url,
      '--log',
      'summary',
    ]);
    await text.waitFor((l) => typeof l.text === 'string' && l.text.startsWith('listening on'), 15_000);
    await stopAll(text);
    for (const w of expected) assert.equal(text.stderr().split(`hookdrill: warning: ${w}\n`).length - 1, 1, text.stderr());
  } finally {
    await q.drop();
  }
});
