import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { postSignedStripe } from './helpers/listen.js';
import { spawnHookdrill } from './helpers/spawned.js';
import { tempDir } from './helpers/tmp.js';

/**
 * listen commits on the main thread without SQLite's own sync and syncs the WAL itself
 * (src/inbox/sqlite/wal-sync.ts). What must hold, seen from outside by strace on the real process:
 * a 200 is written to the socket only after an fdatasync of the WAL that began after the
 * delivery's commit (its write to the WAL) has returned; and once a sync has been slow, a disk
 * whose sync hangs is answered 503 within the store deadline, with /healthz answering.
 */
const SECRET = 'whsec_wal_sync_test';
const STRACE = '/usr/bin/strace';

function straceMissing(): string | undefined {
  if (existsSync(STRACE)) return undefined;
  const why = 'no strace (apt install strace)';
  if (process.env.HOOKDRILL_REQUIRE_TOOLS === '1') throw new Error(`${why} (HOOKDRILL_REQUIRE_TOOLS=1: required, not skipped)`);
  return why;
}

/** listen under strace, every sync (fdatasync, and fsync, which SQLite uses) held for delayMs before it returns. */
async function tracedListen(inbox: string, log: string, delayMs: number, ...more: string[]) {
  const wrap = [
    STRACE,
    '-f',
    '-qq',
    '-y',
    '-s',
    '16',
    '-o',
    log,
    '-e',
    'trace=pwrite64,write,writev,fdatasync,fsync',
    '-e',
    `inject=fdatasync,fsync:delay_exit=${delayMs * 1000}`,
  ];
  const p = spawnHookdrill(
    ['listen', '--json', '--port', '0', '--provider', 'stripe', '--secret', SECRET, '--inbox', inbox, ...more],
    {},
    wrap,
  );
  const ready = await p.waitFor((l) => l.event === 'ready', 30_000);
  const stop = async () => {
    process.kill(Number(ready.pid), 'SIGTERM');
    await p.exit;
  };
  return { url: String(ready.url), stop };
}

test('listen: a 200 leaves only after an fdatasync of the WAL that began after the commit has returned (strace on the real process)', async (t) => {
  const why = straceMissing();
  if (why) return t.skip(why);
  const dir = tempDir();
  const inbox = join(dir, 'inbox.db');
  const log = join(dir, 'strace.log');
  const { url, stop } = await tracedListen(inbox, log, 300, '--no-worker');
  let answered: Response;
  try {
    answered = await postSignedStripe(url, 'evt_synced', SECRET);
    assert.equal(answered.status, 200);
  } finally {
    await stop();
  }
  const row = new Database(inbox, { readonly: true }).prepare('SELECT 1 AS ok FROM deliveries WHERE delivery_id = ?').get('evt_synced');
  assert.deepEqual(row, { ok: 1 });

  // strace -f writes each call as it starts; one that blocks is split into "<unfinished ...>" and "<... resumed>".
  const lines = readFileSync(log, 'utf8').split('\n');
  const answer = lines.findIndex((l) => /write(v)?\(\d+<(TCP|socket):.*HTTP\/1\.1 200/.test(l));
  assert.ok(answer > 0, 'the 200 is in the trace');
  let commit = -1;
  for (let i = 0; i < answer; i++) if (/pwrite64\(\d+<[^>]*inbox\.db-wal>/.test(lines[i] as string)) commit = i;
  assert.ok(commit > 0, 'the commit wrote the WAL before the 200');
  const pid = (l: string) => l.split(' ')[0];
  // A sync of the WAL that starts after the commit and returns before the answer.
  const between = lines.slice(commit + 1, answer);
  const started = between.findIndex((l) => /f(data)?sync\(\d+<[^>]*inbox\.db-wal>/.test(l));
  assert.ok(started >= 0, `no fdatasync of the WAL between the commit and the 200:\n${lines.slice(commit, answer + 1).join('\n')}`);
  const start = between[started] as string;
  const returned =
    !start.includes('<unfinished') ||
    between.slice(started + 1).some((l) => pid(l) === pid(start) && /<\.\.\. f(data)?sync resumed>/.test(l));
  assert.ok(returned, `the WAL's fdatasync had not returned when the 200 was written:\n${lines.slice(commit, answer + 1).join('\n')}`);
});

test('listen: a disk whose sync hangs holds the event loop for one sync at most; then 503 within --store-deadline, and /healthz answers', async (t) => {
  const why = straceMissing();
  if (why) return t.skip(why);
  const dir = tempDir();
  // Every sync takes 3 s: far past the 500 ms deadline.
  const { url, stop } = await tracedListen(
    join(dir, 'inbox.db'),
    join(dir, 'strace.log'),
    3_000,
    '--no-worker',
    '--store-deadline',
    '500ms',
  );
  try {
    // The first sync runs in place (the disk was fast until now): it holds the loop while it waits,
    // and its delivery is answered once it is on disk — late, never early.
    const first = await postSignedStripe(url, 'evt_first', SECRET);
    assert.ok([200, 503].includes(first.status), `first: ${first.status}`);
    // From then on syncs wait off the loop: a 503 at the deadline, not after the sync.
    const sent = Date.now();
    const answer = await postSignedStripe(url, 'evt_stalled', SECRET);
    const waited = Date.now() - sent;
    assert.equal(answer.status, 503, 'not durable in time: the sender must retry');
    assert.ok(waited < 2_500, `answered after ${waited} ms: it waited for the hung sync instead of the deadline`);
    const asked = Date.now();
    const health = await fetch(`${url}healthz`);
    assert.ok(Date.now() - asked < 2_500, '/healthz answered while a sync hung');
    assert.equal(health.status, 503);
    assert.match(String(((await health.json()) as { problem?: string }).problem), /a write has waited/);
  } finally {
    await stop();
  }
});
