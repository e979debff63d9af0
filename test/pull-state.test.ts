import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { providers } from '../src/providers/index.js';
import { BIN, hookdrill } from './helpers/cli.js';
import type { CliRun } from './helpers/cli.js';
import { spawnHookdrill } from './helpers/spawned.js';
import { startStripeApi } from './helpers/stripe-api.js';
import type { StripeEvent } from './helpers/stripe-api.js';
import { tempDir } from './helpers/tmp.js';
import { until } from './helpers/until.js';

const KEY = 'sk_test_51State00000000000000000000wxyz';
const SECRET = `whsec_${Buffer.from('pull-state-test-secret-0123').toString('base64')}`;
const ENV = { STRIPE_API_KEY: KEY };

const stripeId = () => `evt_1${randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;
const event = (type: string, created: number): StripeEvent => ({ id: stripeId(), type, created, delivered: true });

function pullArgs(api: string, to: string, state: string, ...more: string[]): string[] {
  return ['pull', '--provider', 'stripe', '--api-base', api, '--to', to, '--secret', SECRET, '--state', state, '--json', ...more];
}

/** The summary line of a `pull --json` run. */
const summaryOf = (r: CliRun) => JSON.parse(r.stdout.trim().split('\n').at(-1) as string) as { delivered: number; notes: string[] };

/** A receiver that verifies Stripe's signature and keeps the ids it acknowledged, in order; `delayMs` before each answer. */
async function receiver(delayMs = 0) {
  const seen: string[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      try {
        providers.stripe.verify(body, req.headers as Record<string, string>, [SECRET]);
      } catch {
        res.writeHead(401).end();
        return;
      }
      setTimeout(() => {
        seen.push((JSON.parse(body.toString()) as { id: string }).id);
        res.writeHead(200).end();
      }, delayMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    seen,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

/** Like hookdrill(), but a run that does not end within `ms` is killed and reported as such: a hang fails, never passes quietly. */
function hookdrillWithin(ms: number, args: string[], env: Record<string, string>): Promise<CliRun & { hung: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], {
      env: { ...process.env, CI: 'true', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let hung = false;
    const timer = setTimeout(() => {
      hung = true;
      child.kill('SIGKILL');
    }, ms);
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, hung });
    });
  });
}

const oneLine = (r: CliRun, what: string) => assert.equal(r.stderr.trim().split('\n').length, 1, `${what}: one line (${r.stderr})`);

test('pull --type X, then a plain pull on the same state: refused in one line, exit 2, saying how to go on; --reset-cursor --since then delivers the 8 events the filter left out', async () => {
  const now = Math.floor(Date.now() / 1000);
  // 24 events twenty seconds apart (further apart than the overlap window), every third a
  // customer.created, the newest an invoice.paid: the filtered cursor passes all 8 customer events.
  const events = Array.from({ length: 24 }, (_, i) => event(i % 3 === 1 ? 'customer.created' : 'invoice.paid', now - 600 + i * 20));
  const customers = events.filter((e) => e.type === 'customer.created').map((e) => e.id);
  const api = await startStripeApi({ key: KEY, events });
  const target = await receiver();
  const state = join(tempDir(), 'state.json');
  try {
    const filtered = await hookdrill(pullArgs(api.url, target.url, state, '--type', 'invoice.paid', '--since', '15m'), ENV);
    assert.equal(filtered.code, 0, filtered.stderr);
    assert.equal(summaryOf(filtered).delivered, 16);

    const before = readFileSync(state, 'utf8');
    const plain = await hookdrill(pullArgs(api.url, target.url, state), ENV);
    assert.equal(plain.code, 2, `a plain pull on a filtered cursor is refused, not "OK" (${plain.stdout.slice(-300)})`);
    assert.match(
      plain.stderr,
      /^hookdrill: the state file .*state\.json keeps the cursor of a pull of --type invoice\.paid, not of every type \(no --type\): resuming would skip the events one filter left out; give another --state, or start afresh with --reset-cursor and --since TIME or --from-now\n$/,
    );
    assert.equal(readFileSync(state, 'utf8'), before, 'the state is left as it was');
    assert.ok(!customers.some((id) => target.seen.includes(id)), 'nothing of the other types was sent');

    // A superset of the filter skips as surely: refused too.
    const wider = await hookdrill(pullArgs(api.url, target.url, state, '--type', 'invoice.paid', '--type', 'customer.created'), ENV);
    assert.equal(wider.code, 2, wider.stderr);
    oneLine(wider, '--type a --type b on a cursor of --type a');

    // --since alone does not move a saved cursor: refused the same way.
    const since = await hookdrill(pullArgs(api.url, target.url, state, '--since', '15m'), ENV);
    assert.equal(since.code, 2, since.stderr);
    // The way out the line gives: --reset-cursor --since starts afresh under the new filter, and says so.
    const afresh = await hookdrill(pullArgs(api.url, target.url, state, '--reset-cursor', '--since', '15m'), ENV);
    assert.equal(afresh.code, 0, afresh.stderr);
    assert.ok(
      summaryOf(afresh).notes.some((n) => /was made with --type invoice\.paid: started afresh with every type/.test(n)),
      summaryOf(afresh).notes.join(' | '),
    );
    assert.deepEqual(
      customers.filter((id) => !target.seen.includes(id)),
      [],
      'every event the filter left out arrives',
    );
    // And the state now records no filter: a plain pull resumes from it.
    const resumed = await hookdrill(pullArgs(api.url, target.url, state), ENV);
    assert.equal(resumed.code, 0, resumed.stderr);
    assert.equal(summaryOf(resumed).delivered, 0);
  } finally {
    await target.close();
    await api.close();
  }
});

test('a second pull on a state file in use is refused in one line naming the pid that holds it; once that pull is SIGKILLed, its lock is taken over', async () => {
  const api = await startStripeApi({ key: KEY, events: [] });
  const target = await receiver();
  const dir = tempDir();
  const state = join(dir, 'state.json');
  const first = spawnHookdrill(pullArgs(api.url, target.url, state, '--follow', '--interval', '100ms'), ENV);
  try {
    await first.waitFor((l) => l.event === 'start', 15_000);
    const second = await hookdrill(pullArgs(api.url, target.url, state), ENV);
    assert.equal(second.code, 2, `a second pull is refused (${second.stdout.slice(-300)})`);
    assert.match(
      second.stderr,
      new RegExp(
        `^hookdrill: the state file .*state\\.json is in use by another pull \\(pid ${first.child.pid}, since [^)]+\\): wait for it to end, or give another --state; if no pull is running, remove .*state\\.json\\.lock\\n$`,
      ),
    );

    const during = Array.from({ length: 5 }, () => event('invoice.paid', Math.floor(Date.now() / 1000)));
    api.add(...during);
    await until(() => during.every((e) => target.seen.includes(e.id)), 'the first pull delivers what arrives');
    first.child.kill('SIGKILL');
    await first.exit;
    assert.ok(existsSync(`${state}.lock`), 'a SIGKILLed pull leaves its lock behind');

    const later = Array.from({ length: 5 }, () => event('customer.created', Math.floor(Date.now() / 1000)));
    api.add(...later);
    const third = await hookdrillWithin(20_000, pullArgs(api.url, target.url, state), ENV);
    assert.equal(third.hung, false, 'a stale lock does not block');
    assert.equal(third.code, 0, third.stderr);
    assert.deepEqual(
      later.filter((e) => !target.seen.includes(e.id)),
      [],
      'the stale lock was taken over and the events since delivered',
    );
    assert.ok(!existsSync(`${state}.lock`), 'and the lock is gone once the run ends');
  } finally {
    if (first.child.exitCode === null && first.child.signalCode === null) first.child.kill('SIGKILL');
    await first.exit;
    await target.close();
    await api.close();
  }
});

test('two pulls started at once on one backlog: no event is delivered twice; the one that finds the state in use says so, exit 2', async () => {
  const api = await startStripeApi({ key: KEY, events: [] });
  const target = await receiver(3);
  const state = join(tempDir(), 'state.json');
  try {
    const start = await hookdrill(pullArgs(api.url, target.url, state), ENV);
    assert.equal(start.code, 0, start.stderr);
    const now = Math.floor(Date.now() / 1000);
    const backlog = Array.from({ length: 300 }, (_, i) => event('invoice.paid', now + Math.floor(i / 100)));
    api.add(...backlog);
    const [a, b] = await Promise.all([
      hookdrillWithin(60_000, pullArgs(api.url, target.url, state), ENV),
      hookdrillWithin(60_000, pullArgs(api.url, target.url, state), ENV),
    ]);
    const runs = [a, b] as (CliRun & { hung: boolean })[];
    assert.ok(
      runs.every((r) => !r.hung),
      'both ended',
    );
    const twice = target.seen.length - new Set(target.seen).size;
    assert.equal(twice, 0, `no event delivered twice (${twice} were)`);
    assert.deepEqual(
      backlog.filter((e) => !target.seen.includes(e.id)),
      [],
      'every event once',
    );
    for (const r of runs) {
      if (r.code === 0) continue;
      assert.equal(r.code, 2, r.stderr);
      assert.match(r.stderr, /^hookdrill: the state file .* is in use by another pull \(pid \d+, since [^)]+\)[^\n]*\n$/);
    }
  } finally {
    await target.close();
    await api.close();
  }
});

test('a state file of the wrong shape is refused in one line naming the file and what is wrong, exit 2 (never exit 70); no NaN or Infinity reaches the API', async () => {
  const api = await startStripeApi({ key: KEY, events: [] });
  const target = await receiver();
  const dir = tempDir();
  const state = join(dir, 'state.json');
  try {
    const made = await hookdrill(pullArgs(api.url, target.url, state), ENV);
    assert.equal(made.code, 0, made.stderr);
    const { source } = JSON.parse(readFileSync(state, 'utf8')) as { source: string };
    // As an older hookdrill wrote it (version 1, no filter recorded): each one a field gone wrong.
    const now = Math.floor(Date.now() / 1000);
    const v1 = (position: string) =>
      `{"version": 1, "provider": "stripe", "source": ${JSON.stringify(source)}, "position": ${position}, "updatedAt": "2025-01-01T00:00:00Z"}`;
    const cases: [string, RegExp][] = [
      [v1('{"floor": 1, "seen": "evt_1"}'), /position\.seen is a string \("evt_1"\), not an object of id → unix seconds/],
      [v1('{"floor": -1e308, "seen": {}}'), /position\.floor is -1e\+308, not a time \(whole unix seconds, from 1970 to now\)/],
      [v1('{"floor": 1e999, "seen": {}}'), /position\.floor is Infinity, not a time/],
      [v1(`{"cursor": {"id": "evt_1", "created": "soon"}, "seen": {}}`), /position\.cursor\.created is a string \("soon"\), not a time/],
      [v1(`{"cursor": {"id": "evt_1", "created": ${now - 60}}, "seen": {"evt_1": -5}}`), /position\.seen\["evt_1"\] is -5, not a time/],
      [v1(`{"cursor": {"id": "evt_1", "created": ${now + 400 * 86_400}}, "seen": {}}`), /position\.cursor\.created is \d+, not a time/],
      [v1('{"seen": {}}'), /position has neither a cursor nor a floor: it does not say where to resume/],
      [v1('[1, 2]'), /position is a list, not an object/],
      ['[]', /is not a hookdrill pull state \(it holds a list, not an object\): move it away, or give another --state/],
    ];
    for (const [text, message] of cases) {
      writeFileSync(state, text);
      const before = api.urls.length;
      const r = await hookdrill(pullArgs(api.url, target.url, state), ENV);
      assert.equal(r.code, 2, `${text}: ${r.stderr}`);
      assert.match(r.stderr, /^hookdrill: the state file .*state\.json (is damaged: |is not a hookdrill pull state)/, text);
      assert.match(r.stderr, message, text);
      oneLine(r, text);
      assert.equal(readFileSync(state, 'utf8'), text, 'the file is left as it was');
      assert.deepEqual(api.urls.slice(before), [], `${text}: nothing asked of the API`);
    }
    // Every time that did reach the API (the first run's) was whole seconds.
    for (const u of api.urls)
      for (const [k, v] of new URL(u, 'http://x').searchParams) if (k.startsWith('created')) assert.match(v, /^\d+$/, u);

    // A sound file from before the filter was recorded is resumed, and that is said.
    writeFileSync(state, v1(`{"cursor": {"id": "evt_1", "created": ${now - 60}}, "seen": {"evt_1": ${now - 60}}}`));
    const legacy = await hookdrill(pullArgs(api.url, target.url, state), ENV);
    assert.equal(legacy.code, 0, legacy.stderr);
    assert.ok(
      summaryOf(legacy).notes.some((n) => /was written before pull recorded its --type filter: resumed as made with every type/.test(n)),
    );
    assert.equal((JSON.parse(readFileSync(state, 'utf8')) as { version: number }).version, 2, 'and rewritten with its filter');
  } finally {
    await target.close();
    await api.close();
  }
});

test('--state naming a FIFO, /dev/zero, /dev/urandom or a directory is refused at once in one line, exit 2; nothing is made beside it', async () => {
  const api = await startStripeApi({ key: KEY, events: [] });
  const dir = tempDir();
  const fifo = join(dir, 'state.fifo');
  execFileSync('mkfifo', [fifo]);
  const folder = join(dir, 'folder');
  mkdirSync(folder);
  try {
    for (const [file, message] of [
      [fifo, /is not a regular file \(a device, FIFO or socket\): give --state a file path/],
      ['/dev/zero', /is not a regular file \(a device, FIFO or socket\)/],
      ['/dev/urandom', /is not a regular file \(a device, FIFO or socket\)/],
      [folder, /is a directory: give --state a file path/],
    ] as const) {
      // Bounded: the old reading of /dev/zero grew for ever; a run still going after 5 s has failed.
      const r = await hookdrillWithin(5_000, pullArgs(api.url, 'http://127.0.0.1:9/x', file), ENV);
      assert.equal(r.hung, false, `${file}: ended by itself`);
      assert.equal(r.code, 2, `${file}: ${r.stderr}`);
      assert.match(r.stderr, new RegExp(`^hookdrill: the state file ${file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} `), file);
      assert.match(r.stderr, message, file);
      oneLine(r, file);
    }
    assert.deepEqual(readdirSync(dir).sort(), ['folder', 'state.fifo'], 'no probe, lock or temporary file beside them');
  } finally {
    await api.close();
  }
});

test('pull --type with an empty value is refused in one line, exit 2', async () => {
  const api = await startStripeApi({ key: KEY, events: [] });
  const state = join(tempDir(), 'state.json');
  try {
    for (const type of ['', ' ']) {
      const r = await hookdrill(pullArgs(api.url, 'http://127.0.0.1:9/x', state, '--type', type), ENV);
      assert.equal(r.code, 2, `--type ${JSON.stringify(type)}: ${r.stdout.slice(-200)}`);
      assert.match(
        r.stderr,
        /^hookdrill: --type "\s*": not an event type \(one word: invoice\.paid, invoice\.\*; GitHub: issues, issues\.opened\)\n$/,
      );
      assert.ok(!existsSync(state), 'refused before anything is kept');
    }
  } finally {
    await api.close();
  }
});

test('a state write refused mid-run (a directory put in its place: the rename fails) is one line, exit 2 — not a crash — and leaves no temporary file', async () => {
  const api = await startStripeApi({ key: KEY, events: [] });
  const target = await receiver();
  const dir = tempDir();
  const state = join(dir, 'state.json');
  const pull = spawnHookdrill(pullArgs(api.url, target.url, state, '--follow', '--interval', '100ms'), ENV);
  try {
    await pull.waitFor((l) => l.event === 'start', 15_000);
    rmSync(state);
    mkdirSync(join(state, 'in-the-way'), { recursive: true });
    const e = event('invoice.paid', Math.floor(Date.now() / 1000));
    api.add(e);
    const exit = await Promise.race([pull.exit, new Promise<'running'>((r) => setTimeout(() => r('running'), 15_000))]);
    assert.notEqual(exit, 'running', 'the run ended');
    assert.equal(exit, 2, pull.stderr());
    assert.match(
      pull.stderr(),
      /^hookdrill: cannot write the state file .*state\.json: EISDIR \(a directory is in its place\); the cursor stays where it was last saved, so the next run may deliver the last events again \(same ids\)\n$/,
    );
    assert.deepEqual(target.seen, [e.id], 'the event was delivered; only its cursor was not kept');
    assert.deepEqual(
      readdirSync(dir).filter((f) => f.endsWith('.tmp')),
      [],
      'no temporary file left',
    );
    assert.ok(!existsSync(`${state}.lock`), 'nor the lock');
  } finally {
    if (pull.child.exitCode === null && pull.child.signalCode === null) pull.child.kill('SIGKILL');
    await pull.exit;
    await target.close();
    await api.close();
  }
});
