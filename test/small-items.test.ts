import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readlinkSync, writeFileSync } from 'node:fs';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import type { NewDelivery } from '../src/inbox/index.js';
import { BIN } from './helpers/cli.js';
import type { CliRun } from './helpers/cli.js';
import { deadRows } from './helpers/dead-rows.js';
import { stripeRow } from './helpers/rows.js';
import { knownProviderNames } from '../src/providers/names.js';
import { tempDir } from './helpers/tmp.js';
import { until } from './helpers/until.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const S = ['--provider', 'stripe', '--secret', 'whsec_small'];

/**
 * bin/hookdrill, killed if still running after `guardMs`: the old code ran `listen --lease 0` or
 * `inspect --inbox /dev/zero` for ever, and a killed run (code null) fails the exit-2 assertion.
 */
function cli(args: string[], o: { nodeArgs?: string[]; guardMs?: number; env?: Record<string, string> } = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const { HOOKDRILL_SECRET: _drop, ...env } = process.env;
    const child = spawn(process.execPath, [...(o.nodeArgs ?? []), BIN, ...args], {
      env: { ...env, CI: 'true', ...o.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const guard = setTimeout(() => child.kill('SIGKILL'), o.guardMs ?? 20_000);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve({ code, stdout, stderr });
    });
  });
}

/** Bad input: exit 2, one line naming the problem, no stack trace, nothing on stdout. */
function usage(r: CliRun, pattern: RegExp): void {
  assert.equal(r.code, 2, `${r.stderr}${r.stdout}`);
  assert.match(r.stderr, pattern);
  assert.equal(r.stderr.trim().split('\n').length, 1, `expected one line, got:\n${r.stderr}`);
  assert.doesNotMatch(r.stderr, /\n\s+at |internal error/);
  assert.equal(r.stdout, '');
}

test('listen refuses a zero or absurd --forward-timeout, --lease, --backoff-base, naming the flag and its bounds', async () => {
  const inbox = join(tempDir(), 'inbox.db');
  const listen = (...flags: string[]) => cli(['listen', ...S, '--port', '0', '--inbox', inbox, ...flags]);
  const fwd = ['--forward-to', 'http://127.0.0.1:1/'];
  usage(await listen(...fwd, '--forward-timeout', '0'), /^hookdrill: --forward-timeout 0: at least 1s \(/);
  usage(await listen(...fwd, '--forward-timeout', '200ms'), /--forward-timeout 200ms: at least 1s/);
  usage(await listen(...fwd, '--forward-timeout', '30d', '--lease', '31d'), /--forward-timeout 30d: at most 1h \(/);
  usage(await listen('--lease', '0'), /--lease 0: at least 100ms \(/);
  usage(await listen('--lease', '1000d'), /--lease 1000d: at most 1d \(/);
  usage(await listen('--backoff-base', '0'), /--backoff-base 0: at least 10ms \(/);
  usage(await listen('--backoff-base', '9d', '--backoff-max', '10d'), /--backoff-base 9d: at most 1d \(/);
  usage(await listen('--backoff-max', '0'), /--backoff-max 0: at least 10ms/);
  usage(await listen('--backoff-max', '1000d'), /--backoff-max 1000d: at most 30d/);
});

test('--inbox with a URL scheme hookdrill does not speak, or a path that is a device or a FIFO: one line, exit 2', async () => {
  const dir = tempDir();
  const notSpoken = /^hookdrill: mysql:\/\/ is not an inbox hookdrill speaks: a file path, postgres:\/\/…, or redis:\/\/…\n$/;
  for (const cmd of [['inspect'], ['requeue', '--status', 'dead'], ['listen', ...S, '--port', '0']]) {
    const r = await cli([...cmd, '--inbox', 'mysql://root@127.0.0.1/hooks']);
    usage(r, notSpoken);
  }
  usage(await cli(['inspect', '--inbox', 'sqlite:///tmp/x.db']), /^hookdrill: sqlite:\/\/ is not an inbox hookdrill speaks/);
  usage(
    await cli(['inspect', '--inbox', '/dev/zero']),
    /the inbox \/dev\/zero is not a regular file \(a device, FIFO or socket\): give --inbox a file path/,
  );
  const fifo = join(dir, 'inbox.fifo');
  execFileSync('mkfifo', [fifo]);
  usage(await cli(['inspect', '--inbox', fifo]), /inbox\.fifo is not a regular file/);
  usage(await cli(['requeue', '--inbox', fifo, '--status', 'dead']), /inbox\.fifo is not a regular file/);
});

test('requeue: rows a worker buries between the preview and the move are counted as matched; never "moved more than matched"', async () => {
  const dir = tempDir();
  // A worker burying rows after requeue's preview count: simulated, at exactly that moment, by
  // a preload that turns the pending rows dead right after the first count of the deliveries.
  const hook = join(dir, 'bury-after-count.mjs');
  writeFileSync(
    hook,
    `import { createRequire } from 'node:module';
const Database = createRequire(${JSON.stringify(join(ROOT, 'package.json'))})('better-sqlite3');
const prepare = Database.prototype.prepare;
let done = false;
Database.prototype.prepare = function (sql) {
  const stmt = prepare.call(this, sql);
  if (!done && /^SELECT COUNT\\(\\*\\) AS n FROM deliveries/.test(sql)) {
    const get = stmt.get;
    const db = this;
    stmt.get = function (...args) {
      const row = get.apply(this, args);
      if (!done) {
        done = true;
        prepare.call(db, "UPDATE deliveries SET status = 'dead', last_error = 'crm down', finished_at = 1 WHERE status = 'pending'").run();
      }
      return row;
    };
  }
  return stmt;
};
`,
  );
  const make = async (name: string) => {
    const path = await deadRows(
      join(dir, name),
      Array.from({ length: 5 }, (_, i) => ({ deliveryId: `evt_dead_${i}` })),
      'crm down',
    );
    const inbox = openSqliteInbox(path);
    for (let i = 0; i < 3; i++)
      await inbox.put({
        source: 'stripe',
        deliveryId: `evt_late_${i}`,
        eventType: 'invoice.paid',
        body: Buffer.from('{}'),
        headers: {},
        receivedAt: Date.now(),
      });
    await inbox.close();
    return path;
  };
  const jsonRun = await cli(['requeue', '--inbox', await make('json.db'), '--status', 'dead', '--json'], { nodeArgs: ['--import', hook] });
  assert.equal(jsonRun.code, 0, jsonRun.stderr);
  const result = JSON.parse(jsonRun.stdout) as { matched: number; moved: number };
  assert.equal(result.moved, 8, 'the 3 rows buried after the preview move too');
  assert.equal(result.matched, 8, 'matched is what the move chose, not the stale preview');

  const textRun = await cli(['requeue', '--inbox', await make('text.db'), '--status', 'dead'], { nodeArgs: ['--import', hook] });
  assert.equal(textRun.code, 0, textRun.stderr);
  assert.match(textRun.stdout, /requeued 8 of 8 matching finished rows/);
});

/** `rows` dead Stripe deliveries, made in chunks (one transaction each) so 200k take seconds. */
async function manyDead(path: string, rows: number): Promise<void> {
  const inbox = openSqliteInbox(path);
  try {
    const chunk = 10_000;
    for (let i = 0; i < rows; i += chunk) {
      const batch: NewDelivery[] = Array.from({ length: Math.min(chunk, rows - i) }, (_, j) => ({
        source: 'stripe',
        deliveryId: `evt_${i + j}`,
        eventType: 'invoice.paid',
        body: Buffer.from('{}'),
        headers: {},
        receivedAt: 1_000 + i + j,
      }));
      await inbox.putMany(batch);
      const claimed = await inbox.claim({ limit: batch.length, leaseMs: 60_000 });
      await inbox.settle(claimed.map((c) => ({ key: c, fence: c.fence, outcome: 'dead' as const, error: 'crm down' })));
    }
  } finally {
    await inbox.close();
  }
}

/** Start a requeue, signal it once rows have started to move (read from the inbox), and let it report. */
async function interruptedRequeue(path: string, signal: 'SIGINT' | 'SIGTERM'): Promise<CliRun> {
  const child = spawn(process.execPath, [BIN, 'requeue', '--inbox', path, '--status', 'dead', '--rate', '2000'], {
    env: { ...process.env, CI: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
  const before = await pendingRows(path);
  const reader = openSqliteInbox(path, { readonly: true });
  try {
    await until(async () => (await reader.stats()).counts.pending > before, 'the requeue to move its first batch', 60_000);
  } finally {
    await reader.close();
  }
  child.kill(signal);
  return { code: await closed, stdout, stderr };
}

async function pendingRows(path: string): Promise<number> {
  const inbox = openSqliteInbox(path, { readonly: true });
  try {
    return (await inbox.stats()).counts.pending;
  } finally {
    await inbox.close();
  }
}

const num = (text: string) => Number(text.replaceAll(',', ''));

test('an interrupted requeue of 200k rows says how many moved before the stop, exits 130/143, and the same command resumes', async () => {
  const path = join(tempDir(), 'big.db');
  const TOTAL = 200_000;
  await manyDead(path, TOTAL);

  const first = await interruptedRequeue(path, 'SIGINT');
  assert.equal(first.code, 130, first.stderr);
  const m1 = /stopped: moved ([\d,]+) of ([\d,]+) matching finished rows before the stop .*Run the same command again/.exec(first.stdout);
  assert.ok(m1, first.stdout);
  const moved1 = num(m1[1] as string);
  assert.equal(num(m1[2] as string), TOTAL);
  assert.ok(moved1 > 0 && moved1 < TOTAL, `moved ${moved1}`);
  assert.equal(await pendingRows(path), moved1, 'the number printed is the number of rows moved');

  const second = await interruptedRequeue(path, 'SIGTERM');
  assert.equal(second.code, 143, second.stderr);
  const m2 = /stopped: moved ([\d,]+) of ([\d,]+) matching finished rows before the stop/.exec(second.stdout);
  assert.ok(m2, second.stdout);
  assert.equal(num(m2[2] as string), TOTAL - moved1, 'run again, it matches only what did not move');
  const moved2 = num(m2[1] as string);
  assert.equal(await pendingRows(path), moved1 + moved2, 'nothing moved twice, nothing lost');

  const log = openSqliteInbox(path, { readonly: true });
  try {
    const requeues = (await log.overview()).requeues.map((q) => q.moved).sort((a, b) => a - b);
    assert.deepEqual(
      requeues,
      [moved1, moved2].sort((a, b) => a - b),
      'the requeue log says the same',
    );
  } finally {
    await log.close();
  }
});

/** Whether process `pid` holds `path` open: it has installed its signal handlers by then. */
function holdsOpen(pid: number, path: string): boolean {
  try {
    return readdirSync(`/proc/${pid}/fd`).some((fd) => {
      try {
        return readlinkSync(`/proc/${pid}/fd/${fd}`) === path;
      } catch {
        return false;
      }
    });
  } catch {
    return false;
  }
}

/**
 * A requeue signalled while another process holds its inbox: it waits for the lock inside SQLite,
 * the event loop blocked, and the Ctrl-C is heard only once the lock is free — after the last
 * (here: the only) step of its work.
 */
async function interruptedWhileLocked(path: string, args: string[]): Promise<CliRun> {
  const db = new Database(path);
  db.pragma('journal_mode = DELETE');
  db.exec('BEGIN EXCLUSIVE');
  db.prepare("UPDATE deliveries SET last_error = 'held' WHERE rowid = 1").run();
  try {
    const child = spawn(process.execPath, [BIN, 'requeue', '--inbox', path, '--status', 'dead', ...args], {
      env: { ...process.env, CI: 'true' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    await until(async () => holdsOpen(child.pid as number, path), 'the requeue to open the inbox', 60_000);
    child.kill('SIGINT');
    db.exec('COMMIT');
    return { code: await closed, stdout, stderr };
  } finally {
    if (db.inTransaction) db.exec('ROLLBACK');
    db.close();
  }
}

test('a requeue interrupted while SQLite holds it (a lock, a long batch) exits 130, not 0, even when the work it was on then finishes', async () => {
  const path = join(tempDir(), 'locked.db');
  await manyDead(path, 20);
  for (const args of [['--dry-run'], []]) {
    const r = await interruptedWhileLocked(path, args);
    assert.equal(r.code, 130, `requeue ${args.join(' ')}: ${r.stderr}${r.stdout}`);
  }
});

test('pull and reconcile refuse an empty or spaced --type before asking the API (it would match no event, without a word)', async () => {
  const dir = tempDir();
  const env = { STRIPE_API_KEY: 'sk_test_small_items', GITHUB_TOKEN: 'ghp_small_items' };
  const base = 'http://127.0.0.1:9/';
  for (const bad of ['', ' ', 'invoice paid']) {
    usage(
      await cli(['pull', ...S, '--to', base, '--api-base', base, '--state', join(dir, 's.json'), '--type', bad], { env }),
      new RegExp(`^hookdrill: --type ${JSON.stringify(bad)}: not an event type \\(one word: invoice\\.paid`),
    );
    usage(
      await cli(['reconcile', '--provider', 'stripe', '--inbox', join(dir, 'x.db'), '--api-base', base, '--since', '1h', '--type', bad], {
        env,
      }),
      /--type .*: not an event type \(one word: invoice\.paid, invoice\.\*; GitHub: issues, issues\.opened\)/,
    );
  }
  usage(
    await cli(['pull', '--provider', 'github', '--repo', 'acme/shop', '--hook-id', '1', '--to', base, '--api-base', base, '--type', ''], {
      env,
    }),
    /--type "": not an event type/,
  );
});

test('small items of issue 38: a misspelt provider is named as one, a port past 65535 is said as that, and --max-bytes takes sizes as its help writes them', async () => {
  const typo = await cli(['send', 'strpe/invoice.paid', '--url', 'http://127.0.0.1:9/', '--secret', 'whsec_small']);
  assert.equal(typo.code, 2);
  assert.equal(
    typo.stderr,
    `hookdrill: strpe/invoice.paid: no provider strpe — did you mean stripe/invoice.paid? (providers: ${knownProviderNames().join(', ')})\n`,
  );
  const port = await cli(['send', 'stripe/invoice.paid', '--url', 'http://127.0.0.1:99999/', '--secret', 'whsec_small']);
  assert.equal(port.code, 2);
  assert.equal(port.stderr, 'hookdrill: --url "http://127.0.0.1:99999/": port 99999 is out of range (a port is 1 to 65535)\n');
  const { parseBytesFlag } = await import('../src/util/options.js');
  assert.equal(parseBytesFlag('5mb', '--max-bytes', 1, 1024 ** 3, 1), 5_000_000);
  assert.equal(parseBytesFlag('32MiB', '--max-bytes', 1, 1024 ** 3, 1), 32 * 1024 ** 2);
  assert.equal(parseBytesFlag('512 KiB', '--max-bytes', 1, 1024 ** 3, 1), 512 * 1024);
  assert.equal(parseBytesFlag('1048576', '--max-bytes', 1, 1024 ** 3, 1), 1_048_576);
  assert.throws(
    () => parseBytesFlag('5 banana', '--max-bytes', 1, 1024 ** 3, 1),
    /--max-bytes 5 banana: expected a size from 1 to 1073741824 bytes/,
  );
  // As the CLI takes it: listen refuses a bad one in one line, exit 2, before it listens.
  const bad = await cli(['listen', ...S, '--max-bytes', '5 banana', '--port', '0']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^hookdrill: --max-bytes 5 banana: expected a size/);
});

test("check's closing lines: with --stored it does not suggest inspect (which reads an inbox, not the receiver's own store); with --inbox it names that inbox", async () => {
  const { renderCheckEnd } = await import('../src/render/check.js');
  const base = {
    command: 'check' as const,
    ok: true,
    runId: 'chk-1',
    provider: 'stripe',
    url: 'http://127.0.0.1:3000/webhooks',
    cases: [],
    counts: { pass: 1, fail: 0, warn: 0, skipped: 0 },
    roots: [],
    notJudged: 0,
    interrupted: false,
    elapsedMs: 10,
  };
  const stored = renderCheckEnd({ ...base, store: 'command' });
  assert.doesNotMatch(stored, /hookdrill inspect/);
  assert.match(stored, /run chk-1 \(on every request as X-Hookdrill-Check\) · what it left in your receiver's store carries that header/);
  const inbox = renderCheckEnd({ ...base, store: 'inbox', inbox: '/srv/inbox.db' });
  assert.match(inbox, /what it left in the inbox: hookdrill inspect --inbox \/srv\/inbox\.db --check-run chk-1/);
});

test('fixtures: each name once (its type only where the name does not say it), and the suggested send line is of the provider listed', async () => {
  const stripe = await cli(['fixtures', 'stripe'], { env: { NO_COLOR: '1' } });
  assert.equal(stripe.code, 0, stripe.stderr);
  const names = stripe.stdout.split('\n').filter((l) => l.startsWith('stripe/'));
  assert.ok(names.length > 500, `${names.length} stripe fixtures listed`);
  assert.deepEqual(
    names.filter((l) => /\s/.test(l)),
    [],
    'no line repeats its name as a type',
  );
  const standard = await cli(['fixtures', 'standard'], { env: { NO_COLOR: '1' } });
  assert.match(standard.stdout, /send one with: hookdrill send standard\/\S+ --url URL --secret S/);
  assert.doesNotMatch(standard.stdout, /hookdrill send stripe\//);
});

test('replay that matches no row says so and exits 0, as requeue does; an --id that names no row exits 1', async () => {
  const file = join(tempDir(), 'inbox.db');
  const inbox = openSqliteInbox(file);
  await inbox.put(stripeRow('evt_ok'));
  await inbox.close();
  const none = await cli(['replay', '--inbox', file, '--status', 'dead', '--to', 'http://127.0.0.1:9/', ...S]);
  assert.equal(none.code, 0, none.stderr);
  assert.equal(none.stdout, 'nothing to replay: no row matches (--status dead)\n');
  const requeue = await cli(['requeue', '--inbox', file, '--status', 'dead']);
  assert.equal(requeue.code, 0, 'the same empty match, the same exit code');
  const typo = await cli(['replay', '--inbox', file, '--id', 'evt_typo', '--to', 'http://127.0.0.1:9/', ...S]);
  assert.equal(typo.code, 1);
  assert.match(typo.stdout, /^nothing to replay: no row matches \(--id evt_typo\)/);
});
