import { test } from 'node:test';
import type { TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { providers } from '../src/providers/index.js';
import { hookdrill } from './helpers/cli.js';
import { spawnHookdrill } from './helpers/spawned.js';
import { tempDir } from './helpers/tmp.js';

const SECRET = 'whsec_durability_test';
let seq = 0;

/** Wait until the process has said this on stderr; throws, with what it did say, after 5 s. */
async function saidOnStderr(stderr: () => string, pattern: RegExp): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!pattern.test(stderr())) {
    if (Date.now() > deadline) throw new Error(`stderr never matched ${pattern}: ${JSON.stringify(stderr())}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** POST one signed Stripe delivery; its status. */
async function deliver(url: string, id = `evt_dur_${Date.now()}_${seq++}`): Promise<number> {
  const body = Buffer.from(JSON.stringify({ id, object: 'event', type: 'invoice.paid', data: { object: {} } }));
  const headers = providers.stripe.sign(body, [SECRET], { nowMs: Date.now(), deliveryId: id, eventType: 'invoice.paid' });
  return (await fetch(url, { method: 'POST', body, headers })).status;
}

test('the inbox file deleted under a running listen: 503 and a loud line, never a 200 into the orphan; no silent new inbox after', async () => {
  const inbox = join(tempDir(), 'inbox.db');
  const listen = spawnHookdrill(['listen', '--json', '--port', '0', '--provider', 'stripe', '--secret', SECRET, '--inbox', inbox]);
  try {
    const ready = await listen.waitFor((l) => l.event === 'ready');
    const url = String(ready.url);
    assert.equal(await deliver(url), 200);
    rmSync(inbox);
    assert.equal(await deliver(url), 503, 'a commit into a deleted file is not kept: not acknowledged');
    assert.equal(await deliver(url), 503);
    const health = await fetch(`${url}healthz`);
    assert.equal(health.status, 503);
    assert.match(String(((await health.json()) as { problem?: string }).problem), /was deleted while in use/);
    await saidOnStderr(listen.stderr, /answering 503: inbox .* was deleted while in use/);
    assert.equal(listen.stderr().match(/was deleted/g)?.length, 1, 'said once, not per request');
  } finally {
    listen.child.kill('SIGKILL');
    await listen.exit;
  }
  // Restarting on the same path: the orphaned WAL holds the last commits; SQLite would drop it.
  const again = await hookdrill(['listen', '--port', '0', '--provider', 'stripe', '--secret', SECRET, '--inbox', inbox]);
  assert.equal(again.code, 2, again.stderr);
  assert.match(again.stderr, /^hookdrill: no inbox at .*, but its write-ahead log .*-wal is there \(\d+ bytes\)/);
});

/** A 2 MiB file system of its own (root only), so a disk can be filled for real. */
function smallDisk(t: TestContext): string | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'hookdrill-disk-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=2m', 'tmpfs', dir], { stdio: 'ignore' });
  } catch {
    rmSync(dir, { recursive: true, force: true });
    t.skip('cannot mount a tmpfs here (needs root, as on CI)');
    return undefined;
  }
  t.after(() => {
    execFileSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  });
  return dir;
}

test('a full disk: listen opens without writing, answers 503 while full, and recovers when space is freed', async (t) => {
  const disk = smallDisk(t);
  if (!disk) return;
  const inbox = join(disk, 'inbox.db');
  const filler = join(disk, 'filler');
  writeFileSync(filler, Buffer.alloc(256 * 1024));
  // Fill the disk through the inbox, in a process that then dies without closing (as a crash would).
  const fill = `
    const { openSqliteInbox } = await import(${JSON.stringify(new URL('../src/inbox/sqlite/index.js', import.meta.url).href)});
    const inbox = openSqliteInbox(${JSON.stringify(inbox)});
    for (const size of [20000, 2000, 200]) for (let i = 0; ; i++) {
      try { await inbox.put({ source: 'stripe', deliveryId: 'fill-' + size + '-' + i, eventType: 'x', body: Buffer.alloc(size, 97), headers: {}, receivedAt: Date.now() }); }
      catch { break; }
    }
    process.exit(0);`;
  execFileSync(process.execPath, ['--input-type=module', '-e', fill]);

  const listen = spawnHookdrill([
    'listen',
    '--json',
    '--port',
    '0',
    '--provider',
    'stripe',
    '--secret',
    SECRET,
    '--inbox',
    inbox,
    '--no-worker',
  ]);
  try {
    const ready = await listen.waitFor((l) => l.event === 'ready');
    const url = String(ready.url);
    assert.equal(await deliver(url), 503, 'nothing acknowledged while the disk is full');
    await saidOnStderr(listen.stderr, /answering 503: inbox .*: the disk holding it is full/);
    rmSync(filler);
    assert.equal(await deliver(url), 200, 'space freed: stored again');
  } finally {
    listen.child.kill('SIGTERM');
    assert.notEqual(await listen.exit, 70);
  }
});

test('requeue on an inbox that cannot be written (a read-only file system): one line, exit 2, nothing changed', async (t) => {
  const disk = smallDisk(t);
  if (!disk) return;
  const inbox = join(disk, 'inbox.db');
  const db = openSqliteInbox(inbox);
  await db.put({
    source: 'stripe',
    deliveryId: 'evt_ro',
    eventType: 'invoice.paid',
    body: Buffer.from('{}'),
    headers: {},
    receivedAt: Date.now(),
  });
  const [row] = await db.claim({ limit: 1, leaseMs: 1_000 });
  await db.fail({ source: 'stripe', deliveryId: 'evt_ro' }, row?.fence ?? 0, 'crm down', { dead: true });
  await db.close();
  execFileSync('mount', ['-o', 'remount,ro', disk]);
  const r = await hookdrill(['requeue', '--inbox', inbox, '--status', 'dead']);
  assert.equal(r.code, 2, r.stderr + r.stdout);
  assert.match(r.stderr, /^hookdrill: .*inbox .*inbox\.db.*\n$/);
  assert.doesNotMatch(r.stderr, /internal error/);
  execFileSync('mount', ['-o', 'remount,rw', disk]);
  const seen = await hookdrill(['inspect', '--inbox', inbox, '--status', 'dead', '--json']);
  assert.equal((JSON.parse(seen.stdout) as { total: number }).total, 1, 'the dead row is still dead');
});
