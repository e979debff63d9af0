import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { spawn } from 'node:child_process';
import { providers } from '../src/providers/index.js';
import { BIN, hookdrill } from './helpers/cli.js';
import { startListen, startListenFor, stopAll } from './helpers/listen.js';
import { live } from './helpers/live.js';
import { freePort } from './helpers/ports.js';
import { SECRET as PY_SECRET, python } from './helpers/verdicts.js';
import { reply, startServer } from './helpers/server.js';
import { tempDir } from './helpers/tmp.js';
import { deadRows } from './helpers/dead-rows.js';

/** What a new user hits in the first hour (issue 25), each as the user met it. */

const SECRET = `whsec_${Buffer.from('first-contact-secret-0000').toString('base64')}`;

function deadRowsOf(n: number): Promise<string> {
  return deadRows(
    join(tempDir(), 'inbox.db'),
    Array.from({ length: n }, (_, i) => ({ deliveryId: `evt_dead_${i}` })),
    'crm down',
  );
}

test("replay, as the README shows it, is one attempt per row: a 401 is reported at once, not retried on Stripe's 3-day schedule", async () => {
  const inbox = await deadRowsOf(3);
  const target = await startServer((_req, res) => reply(res, 401));
  try {
    // Not retried on a schedule: a run that waits is killed at 2 minutes and fails the exit code.
    const r = await hookdrill(
      ['replay', '--inbox', inbox, '--status', 'dead', '--to', target.url, '--provider', 'stripe', '--secret', SECRET, '--json'],
      {},
      [],
      undefined,
      120_000,
    );
    assert.equal(r.code, 1, r.stderr);
    assert.equal(target.requests.length, 3, 'one attempt per row');
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
  const inbox = await deadRowsOf(1);
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
  const inbox = await deadRowsOf(2);
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
  const { p, ready } = await startListen(join(tempDir(), 'i.db'), SECRET);
  try {
    const retries = ready.retries as { maxAttempts: number; deadAfterMs: { minMs: number } } | undefined;
    assert.ok(retries, 'the budget is in the ready line');
    assert.ok(retries.deadAfterMs.minMs >= 30 * 60_000, `dead after ${retries.deadAfterMs.minMs} ms at the soonest`);
  } finally {
    await stopAll(p);
  }
  // As a person reads it: the same budget, in words.
  const text = live(['listen', '--port', '0', '--provider', 'stripe', '--secret', SECRET, '--inbox', join(tempDir(), 'j.db')], SECRET);
  try {
    await text.waitFor('out', /worker:/);
    assert.match(
      text.out(),
      /worker: a delivery that keeps failing is dead after 14 attempts, 35m18s–1h10m of failures \(5s doubling to 10m/,
    );
  } finally {
    text.child.kill('SIGTERM');
    await text.exit;
  }
});

test("inspect, requeue and replay default to listen's inbox; inspect shows when the dead died and the next command, which runs as printed", async () => {
  const dir = tempDir();
  const path = join(dir, 'hookdrill-inbox.db');
  await deadRows(
    path,
    ['evt_x1', 'evt_x2'].map((deliveryId) => ({ deliveryId, body: Buffer.from('{}'), receivedAt: Date.now() - 600_000 })),
    "crm: 503 'unavailable'",
  );

  const r = await hookdrill(['inspect'], {}, [], dir);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /oldest dead: \d+(ms|s) ago/);
  assert.match(r.stdout, /died \d+(\.\d+)?(ms|s) ago/);
  const next = /next: (hookdrill requeue .* --dry-run)/.exec(r.stdout)?.[1];
  assert.ok(next, r.stdout);
  // As a person would: pasted into a shell.
  const pasted = await new Promise<{ code: number | null; out: string }>((resolve) => {
    const sh = spawn('bash', ['-c', next.replace(/^hookdrill/, `"${process.execPath}" "${BIN}"`)], {
      cwd: dir,
      env: { ...process.env, CI: 'true' },
    });
    let out = '';
    sh.stdout.on('data', (c: Buffer) => (out += c.toString()));
    sh.on('close', (code) => resolve({ code, out }));
  });
  assert.equal(pasted.code, 0, pasted.out);
  assert.match(
    pasted.out,
    /dry run: 2 finished rows would move to pending \(--status dead --error "crm: 503 'unavailable'", attempts reset\)/,
  );

  const rows = await hookdrill(['inspect', '--status', 'dead'], {}, [], dir);
  assert.match(rows.stdout, /evt_x1 .* died \d+(\.\d+)?(ms|s) ago/);
  const requeued = await hookdrill(['requeue', '--status', 'dead', '--dry-run'], {}, [], dir);
  assert.equal(requeued.code, 0, requeued.stderr);
  const missing = await hookdrill(['inspect'], {}, [], tempDir());
  assert.equal(missing.code, 2);
  assert.match(missing.stderr, /hookdrill-inbox\.db/);
});

test('listen --json: every line carries the time it was written; a sender-controlled id reaches the terminal with its control characters escaped', async () => {
  const { p, url, ready } = await startListen(join(tempDir(), 'i.db'), SECRET);
  try {
    assert.ok(!Number.isNaN(Date.parse(String(ready.at))), 'ready has its time');
    await fetch(url, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    const request = await p.waitFor((l) => l.event === 'request');
    assert.ok(Math.abs(Date.parse(String(request.at)) - Date.now()) < 60_000, 'a request line has its time');
  } finally {
    await stopAll(p);
  }
  const text = live(
    ['listen', '--port', '0', '--log', 'requests', '--provider', 'stripe', '--secret', SECRET, '--inbox', join(tempDir(), 'k.db')],
    SECRET,
  );
  try {
    await text.waitFor('out', /listening on http:\/\/\S+ /); // not a terminal: no colours
    const textUrl = (/listening on (http:\/\/\S+) /.exec(text.out()) as RegExpExecArray)[1] as string;
    const id = 'evt_\u001b]0;owned\u0007\u001b[2J';
    const body = Buffer.from(JSON.stringify({ id, object: 'event', type: 'invoice.paid' }));
    const headers = providers.stripe.sign(body, [SECRET], { nowMs: Date.now(), deliveryId: id, eventType: 'invoice.paid' });
    const res = await fetch(textUrl, { method: 'POST', body, headers });
    assert.equal(res.status, 200);
    await text.waitFor('out', /owned/);
    assert.match(text.out(), /evt_\\x1b\]0;owned\\x07\\x1b\[2J/);
    assert.ok(!text.out().includes('\u0007'), 'no raw BEL reached the terminal');
  } finally {
    text.child.kill('SIGTERM');
    await text.exit;
  }
});

test("--time-scale compresses only the waits: a slow receiver keeps the provider's real timeout; --scale-timeout asks for the stricter one by name; --timeout given is never scaled", async () => {
  // A receiver that takes 1.5 s: inside Stripe's 20 s timeout, outside a scaled one (1 s floor).
  const slow = await startServer(async (_req, res) => {
    await new Promise((r) => setTimeout(r, 1_500));
    reply(res, 200);
  });
  const send = (...more: string[]) => hookdrill(['send', 'stripe/invoice.paid', '--url', slow.url, '--secret', SECRET, ...more]);
  try {
    const scaled = await send('--time-scale', '0.001', '--json');
    assert.equal(scaled.code, 0, `Stripe waits 20 s: a 1.5 s answer is delivered. ${scaled.stdout.slice(0, 400)}`);
    const t = (JSON.parse(scaled.stdout) as { timing: { timeoutMs: number; retryDelaysMs: number[]; timeoutScaled?: boolean } }).timing;
    assert.equal(t.timeoutMs, 20_000, "Stripe's own timeout");
    assert.equal(t.retryDelaysMs[0], 60, "Stripe's 1-minute first retry, ×0.001");
    assert.equal(t.timeoutScaled, undefined);
    const human = await send('--time-scale', '0.01', '--no-retry');
    assert.equal(human.code, 0);
    assert.match(human.stdout, /profile stripe ×0\.01 \(waits only; the timeout is real\): timeout 20s/);
    const strict = await send('--time-scale', '0.001', '--scale-timeout', '--retry-delays', 'none');
    assert.equal(strict.code, 1, 'a scaled timeout (1 s) gives up on it');
    assert.match(strict.stdout, /×0\.001 \(waits and timeout, scaled to 1s\): timeout 1s/);
    const old = await send('--delay-scale', '0.001', '--no-retry');
    assert.equal(old.code, 0, '--delay-scale, the old name, is the same');
    const given = await send('--timeout', '20s', '--time-scale', '0.01');
    assert.equal(given.code, 0);
    assert.match(given.stdout, /timeout 20s/);
    const both = await send('--time-scale', '0.1', '--delay-scale', '0.1');
    assert.equal(both.code, 2);
    assert.match(both.stderr, /--delay-scale is the old name of --time-scale .*: give one/);
    const clash = await send('--time-scale', '0.1', '--scale-timeout', '--timeout', '2s');
    assert.equal(clash.code, 2);
    assert.match(clash.stderr, /--scale-timeout .* --timeout .*: choose one/);
  } finally {
    await slow.close();
  }
});

test('send --junit into a folder that does not exist yet makes it; cases are named by fixture and place, so CI can track them run after run', async () => {
  const target = await startServer((req, res) => reply(res, JSON.parse(req.rawBody.toString()).type === 'invoice.paid' ? 200 : 500));
  const dir = tempDir();
  const report = join(dir, 'reports', 'sub', 'send.xml');
  try {
    const runs: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await hookdrill([
        'send',
        'stripe/invoice.paid',
        'stripe/customer.created',
        '--count',
        '3',
        '--url',
        target.url,
        '--secret',
        SECRET,
        '--no-retry',
        '--junit',
        report,
      ]);
      assert.equal(r.code, 1, r.stderr);
      runs.push(readFileSync(report, 'utf8'));
    }
    const names = (xmlText: string) => [...xmlText.matchAll(/<testcase [^>]*name="([^"]+)"/g)].map((m) => m[1]);
    assert.deepEqual(names(runs[0] as string), ['invoice.paid #1', 'customer.created #2', 'invoice.paid #3']);
    assert.deepEqual(names(runs[0] as string), names(runs[1] as string), 'the same names in every run');
    assert.match(runs[0] as string, /delivery evt_\w+ \(customer\.created\)/, 'the id is in the failure, where a person reads it');
  } finally {
    await target.close();
  }
});

test('send takes a form-encoded fixture file (.form, .txt) — a slash command, an interaction — and listen verifies and stores each', async () => {
  const dir = tempDir();
  const slash = join(dir, 'deploy.form');
  writeFileSync(
    slash,
    'token=gIkuvaNzQIHg97ATvDxqgjtO&team_id=T0001&channel_id=C2147483705&user_id=U2147483697&command=%2Fdeploy&text=api+v2&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2F1234%2F5678&trigger_id=13345224609.738474920.8088930838d88f008e0\n',
  );
  const action = join(dir, 'block_actions.txt');
  writeFileSync(
    action,
    `payload=${encodeURIComponent(JSON.stringify({ type: 'block_actions', user: { id: 'U1' }, actions: [{ action_id: 'approve' }], trigger_id: '1.2.3' }))}`,
  );
  const notForm = join(dir, 'broken.form');
  writeFileSync(notForm, '{"type": "not a form"}');
  const { p, url } = await startListenFor('slack', join(dir, 'i.db'), 'slack-signing-secret');
  try {
    const r = await hookdrill(['send', slash, action, '--provider', 'slack', '--url', url, '--secret', 'slack-signing-secret', '--json']);
    assert.equal(r.code, 0, r.stdout.slice(0, 500) + r.stderr);
    await p.waitFor((l) => l.event === 'request' && l.result === 'stored' && p.lines.filter((x) => x.result === 'stored').length === 2);
    assert.equal(
      p.lines.filter((l) => l.event === 'request' && l.result === 'rejected').length,
      0,
      'each signature verified over the bytes sent',
    );
    const bad = await hookdrill(['send', notForm, '--provider', 'slack', '--url', url, '--secret', 'slack-signing-secret']);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /is not form-encoded \(name=value&…\)/);
  } finally {
    await stopAll(p);
  }
});

test('words: "1 attempt", not "1 attempts"; times to a tenth of a millisecond; the README’s placeholder key is named as one', async () => {
  const target = await startServer((_req, res) => reply(res, 200));
  try {
    const r = await hookdrill(['send', 'stripe/invoice.paid', '--url', target.url, '--secret', SECRET]);
    assert.match(r.stdout, /1 event · 1 delivered · 0 failed · 1 attempt \(0 retries\)/);
    const json = await hookdrill(['send', 'stripe/invoice.paid', '--url', target.url, '--secret', SECRET, '--json']);
    const at = (JSON.parse(json.stdout) as { deliveries: { attempts: { atMs: number; latencyMs: number }[] }[] }).deliveries[0]
      ?.attempts[0];
    for (const v of [at?.atMs, at?.latencyMs]) assert.ok(Number.isInteger((v as number) * 10), `${v}: a tenth of a ms at most`);
  } finally {
    await target.close();
  }
  const placeholder = await hookdrill(['reconcile', '--provider', 'stripe', '--since', '1d', '--stored', 'true'], {
    STRIPE_API_KEY: 'rk_live_…',
  });
  assert.equal(placeholder.code, 2);
  assert.equal(
    placeholder.stderr,
    "hookdrill: STRIPE_API_KEY=rk_live_…: that is the README's placeholder; set it to a Stripe API key with read access to events\n",
  );
  // The placeholder shown as it was given: one ellipsis, not "ghp_……".
  const token = await hookdrill(['pull', '--provider', 'github', '--repo', 'acme/shop', '--hook-id', '1', '--to-inbox', 'x.db'], {
    GITHUB_TOKEN: 'ghp_…',
  });
  assert.match(token.stderr, /^hookdrill: GITHUB_TOKEN=ghp_…: that is the README's placeholder; set it to a GitHub token/);
  const secret = await hookdrill(['send', 'stripe/invoice.paid', '--url', 'http://127.0.0.1:9/', '--secret', 'whsec_…']);
  assert.equal(secret.stderr, "hookdrill: --secret whsec_…: that is the README's placeholder; give your endpoint's signing secret\n");
});

test('the package holds the LICENSE its package.json names, and source maps that carry their sources (src/ is not in the package)', async () => {
  const root = join(BIN, '..', '..');
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { license: string };
  assert.match(readFileSync(join(root, 'LICENSE'), 'utf8'), new RegExp(`^${pkg.license} License`));
  const map = JSON.parse(readFileSync(join(root, 'dist', 'src', 'index.js.map'), 'utf8')) as { sourcesContent?: string[] };
  assert.ok(map.sourcesContent?.[0]?.includes('export'), 'the TypeScript source is inside the map');
  const packed = await new Promise<string>((resolve) => {
    const npm = spawn('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: root });
    let out = '';
    npm.stdout.on('data', (c: Buffer) => (out += c.toString()));
    npm.on('close', () => resolve(out));
  });
  const files = (JSON.parse(packed) as { files: { path: string }[] }[])[0]?.files.map((f) => f.path) ?? [];
  assert.ok(files.includes('LICENSE'), 'LICENSE is packed');
  assert.ok(!files.some((f) => f.startsWith('src/')), 'src/ is not');
});

test('a receiver that fails to start is shown by the line that names its error, not only its last lines (Node and Python)', async () => {
  for (const [receiver, said] of [
    [
      `"${process.execPath}" -e "require('no-such-module-here')"`,
      /its stderr says: Error: Cannot find module 'no-such-module-here' \(and ended with: .*Node\.js v/,
    ],
    [
      `python3 -c "import json; import no_such_module_here"`,
      /its stderr ended with: .*ModuleNotFoundError: No module named 'no_such_module_here'/,
    ],
  ] as const) {
    const r = await hookdrill([
      'check',
      '--receiver',
      receiver,
      '--url',
      'http://127.0.0.1:3999/',
      '--provider',
      'stripe',
      '--secret',
      SECRET,
    ]);
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, said);
  }
});

test("check shows the receiver's own words under a failed case (the first line of its answer), and --quiet prints only what needs a look", async () => {
  // The Python receiver whose database refuses a duplicate with a 500 and says why.
  const receiver = python('stripe', 'duplicate-500');
  const port = await freePort();
  const args = [
    'check',
    '--receiver',
    receiver.command,
    '--url',
    `http://127.0.0.1:${port}/`,
    '--provider',
    'stripe',
    '--secret',
    PY_SECRET.stripe as string,
  ];
  const r = await hookdrill([...args, '--only', 'valid,duplicate']);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stdout, /FAIL duplicate[\s\S]*the receiver said: ERROR: duplicate key value violates unique constraint "deliveries_pkey"/);
  const quiet = await hookdrill([...args, '--only', 'valid,duplicate', '--quiet']);
  assert.doesNotMatch(quiet.stdout, /PASS valid/);
  assert.match(quiet.stdout, /FAIL duplicate/);
});

test("check marks every request with X-Hookdrill-Check: <run id>, and inspect and requeue can leave a run's rows out or pick them", async () => {
  const path = join(tempDir(), 'inbox.db');
  const { p, url } = await startListen(path, SECRET);
  try {
    // Something real first: a delivery check did not send.
    assert.equal((await hookdrill(['send', 'stripe/invoice.paid', '--url', url, '--secret', SECRET])).code, 0);
    const r = await hookdrill(['check', '--url', url, '--provider', 'stripe', '--secret', SECRET, '--inbox', path, '--run-id', 'ci-4711']);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(
      r.stdout,
      new RegExp(
        `run ci-4711 \\(on every request as X-Hookdrill-Check\\) · what it left in the inbox: hookdrill inspect --inbox ${path} --check-run ci-4711`,
      ),
    );
    const mine = JSON.parse(
      (await hookdrill(['inspect', '--inbox', path, '--check-run', 'ci-4711', '--json', '--limit', '1000'])).stdout,
    ) as {
      total: number;
    };
    const all = JSON.parse((await hookdrill(['inspect', '--inbox', path, '--limit', '1000', '--json'])).stdout) as { total: number };
    assert.ok(mine.total > 10, `check's rows are found by its run id (${mine.total})`);
    assert.equal(all.total, mine.total + 1, 'every row but the real one is marked');
    // (--exclude-check alone is the overview without check's rows; a list needs --limit or another selector.)
    const rest = JSON.parse((await hookdrill(['inspect', '--inbox', path, '--exclude-check', '--limit', '1000', '--json'])).stdout) as {
      rows: { deliveryId: string; eventType: string }[];
    };
    assert.deepEqual(
      rest.rows.map((x) => x.eventType),
      ['invoice.paid'],
      'only the real delivery is left',
    );
    // The dead row check leaves (a body the worker cannot parse) is check's, and a requeue can leave it be.
    const dry = await hookdrill(['requeue', '--inbox', path, '--status', 'dead', '--exclude-check', '--dry-run']);
    assert.equal(dry.code, 0, dry.stderr);
    assert.match(dry.stdout + dry.stderr, /no finished row matched|0 finished rows/);
    const both = await hookdrill(['inspect', '--inbox', path, '--exclude-check', '--check-run', 'x']);
    assert.equal(both.code, 2);
    assert.equal(both.stderr.trim(), 'hookdrill: give one of --exclude-check and --check-run, not both');
  } finally {
    await stopAll(p);
  }
});
