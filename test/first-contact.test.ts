import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { spawn } from 'node:child_process';
import { BIN, hookdrill } from './helpers/cli.js';
import { reply, startServer } from './helpers/server.js';
import { spawnHookdrill } from './helpers/spawned.js';
import { tempDir } from './helpers/tmp.js';

/** What a new user hits in the first hour (issue 25), each as the user met it. */

const SECRET = `whsec_${Buffer.from('first-contact-secret-0000').toString('base64')}`;

async function deadRows(n: number): Promise<string> {
  const path = join(tempDir(), 'inbox.db');
  const inbox = openSqliteInbox(path);
  for (let i = 0; i < n; i++) {
    const id = `evt_dead_${i}`;
    await inbox.put({
      source: 'stripe',
      deliveryId: id,
      eventType: 'invoice.paid',
      body: Buffer.from(JSON.stringify({ id, object: 'event', type: 'invoice.paid' })),
      headers: {},
      receivedAt: Date.now() - 60_000,
    });
  }
  const claimed = await inbox.claim({ limit: n, leaseMs: 60_000 });
  await inbox.settle(claimed.map((r) => ({ key: r, fence: r.fence, outcome: 'dead' as const, error: 'crm down' })));
  await inbox.close();
  return path;
}

test("replay, as the README shows it, is one attempt per row: a 401 is reported at once, not retried on Stripe's 3-day schedule", async () => {
  const inbox = await deadRows(3);
  const target = await startServer((_req, res) => reply(res, 401));
  try {
    const started = Date.now();
    const r = await hookdrill([
      'replay',
      '--inbox',
      inbox,
      '--status',
      'dead',
      '--to',
      target.url,
      '--provider',
      'stripe',
      '--secret',
      SECRET,
      '--json',
    ]);
    assert.equal(r.code, 1, r.stderr);
    assert.equal(target.requests.length, 3, 'one attempt per row');
    assert.ok(Date.now() - started < 15_000);
    const result = JSON.parse(r.stdout) as {
      timing: { retryDelaysMs: number[] };
      deliveries: { finalStatus: number; attempts: unknown[] }[];
    };
    assert.deepEqual(result.timing.retryDelaysMs, []);
    assert.ok(result.deliveries.every((d) => d.finalStatus === 401 && d.attempts.length === 1));
  } finally {
    await target.close();
  }
});

test('replay with a schedule asked for retries a 500, but never a 400, 401, 403, 404 or 410: those say the request is wrong', async () => {
  const inbox = await deadRows(1);
  for (const [status, attempts] of [
    [500, 3],
    [401, 1],
    [404, 1],
    [410, 1],
  ] as const) {
    const target = await startServer((_req, res) => reply(res, status));
    try {
      const r = await hookdrill([
        'replay',
        '--inbox',
        inbox,
        '--status',
        'dead',
        '--to',
        target.url,
        '--provider',
        'stripe',
        '--secret',
        SECRET,
        '--retry-delays',
        '50ms,50ms',
      ]);
      assert.equal(r.code, 1, r.stderr);
      assert.equal(target.requests.length, attempts, `${status}: ${attempts} attempt(s)`);
    } finally {
      await target.close();
    }
  }
});

test('requeue is a fresh start by default: a dead row gets the whole budget again (on record); --keep-attempts gives it only what is left', async () => {
  const inbox = await deadRows(2);
  const fresh = await hookdrill(['requeue', '--inbox', inbox, '--id', 'evt_dead_0']);
  assert.equal(fresh.code, 0, fresh.stderr);
  assert.match(fresh.stdout, /attempts reset/);
  const kept = await hookdrill(['requeue', '--inbox', inbox, '--id', 'evt_dead_1', '--keep-attempts']);
  assert.equal(kept.code, 0, kept.stderr);
  const db = openSqliteInbox(inbox);
  const claimed = await db.claim({ limit: 2, leaseMs: 60_000 });
  const attempt = Object.fromEntries(claimed.map((c) => [c.deliveryId, c.attempt]));
  assert.equal(attempt.evt_dead_0, 1, 'counted anew: the first attempt of its new budget');
  assert.equal(attempt.evt_dead_1, 2, 'kept: one already spent');
  const audit = (await db.overview()).requeues;
  await db.close();
  assert.deepEqual(audit.map((q) => q.resetAttempts).sort(), [false, true], 'both on record, each as it was done');
  const both = await hookdrill(['requeue', '--inbox', inbox, '--id', 'evt_dead_0', '--keep-attempts', '--reset-attempts']);
  assert.equal(both.code, 2);
  assert.match(both.stderr, /--keep-attempts and --reset-attempts say opposite things/);
});

test("listen prints its worker's retry budget at start, and by default a failing delivery outlives a common outage (over half an hour)", async () => {
  const p = spawnHookdrill([
    'listen',
    '--json',
    '--port',
    '0',
    '--provider',
    'stripe',
    '--secret',
    SECRET,
    '--inbox',
    join(tempDir(), 'i.db'),
  ]);
  try {
    const ready = (await p.waitFor((l) => l.event === 'ready', 15_000)) as {
      retries?: { maxAttempts: number; deadAfterMs: { minMs: number } };
    };
    assert.ok(ready.retries, 'the budget is in the ready line');
    assert.ok(ready.retries.deadAfterMs.minMs >= 30 * 60_000, `dead after ${ready.retries.deadAfterMs.minMs} ms at the soonest`);
  } finally {
    p.child.kill('SIGTERM');
    await p.exit;
  }
  // At a terminal's width, as a person reads it: the same budget, in words.
  const child = spawn(
    process.execPath,
    [BIN, 'listen', '--port', '0', '--provider', 'stripe', '--secret', SECRET, '--inbox', join(tempDir(), 'j.db')],
    {
      env: { ...process.env, CI: 'true' },
    },
  );
  const text = await new Promise<string>((resolve) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      if (out.includes('worker:')) resolve(out);
    });
  });
  child.kill('SIGTERM');
  assert.match(text, /worker: a delivery that keeps failing is dead after 14 attempts, 35m18s–1h10m of failures \(5s doubling to 10m/);
});
