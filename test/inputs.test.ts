import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, symlinkSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { BIN, hookdrill as inDir } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';

/**
 * Inputs that are not what they seem — a device, a FIFO, a file too big to hold — are refused in
 * one line, or (JSON lines) read in bounded memory. The old code hung on these, so every run is
 * killed after 10 s: a hang is a failure here, never a stuck suite.
 */
interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
  killed: boolean;
}

function run(argv: string[], timeoutMs = 10_000): Promise<Run> {
  return new Promise((resolve, reject) => {
    const { HOOKDRILL_SECRET: _drop, ...env } = process.env;
    const [cmd, ...args] = argv as [string, ...string[]];
    const child = spawn(cmd, args, { env: { ...env, CI: 'true' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, timeoutMs);
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, killed });
    });
  });
}

const hookdrill = (args: string[], timeoutMs?: number) => run([process.execPath, BIN, ...args], timeoutMs);

function refused(r: Run, pattern: RegExp, what: string): void {
  assert.equal(r.killed, false, `${what}: still running after 10 s (killed)`);
  assert.equal(r.code, 2, `${what}: ${r.stderr}`);
  assert.equal(r.stderr.trim().split('\n').length, 1, `${what}: expected one line, got:\n${r.stderr}`);
  assert.match(r.stderr, pattern, what);
  assert.doesNotMatch(r.stderr, /\n\s+at |internal error/, what);
}

const event = (id: string, pad = 0) =>
  JSON.stringify({ id, object: 'event', type: 'invoice.paid', data: { object: { id: 'in_1', note: 'x'.repeat(pad) } } });

test('a FIFO, /dev/zero or /dev/urandom as import input or send --ca: one line, exit 2, at once', async () => {
  const dir = tempDir();
  const fifo = join(dir, 'captures.jsonl');
  execFileSync('mkfifo', [fifo]);
  for (const input of [fifo, '/dev/zero', '/dev/urandom']) {
    const inbox = join(dir, 'inbox.db');
    refused(
      await hookdrill(['import', input, '--inbox', inbox, '--provider', 'stripe']),
      /is not a regular file \(a device, FIFO or socket\): give a HAR file, a JSON array of events, or JSON lines/,
      `import ${input}`,
    );
    assert.equal(existsSync(inbox), false, `import ${input}: nothing written`);
    refused(
      await hookdrill(['send', 'stripe/invoice.paid', '--url', 'https://127.0.0.1:9/hooks', '--secret', 'whsec_test', '--ca', input]),
      /--ca .* is not a regular file \(a device, FIFO or socket\): give --ca a PEM certificate file/,
      `send --ca ${input}`,
    );
  }
});

test('a FIFO or a device as the capture verify judges, or as hookdrill.config.json (a committed symlink): one line, exit 2, at once', async () => {
  const dir = tempDir();
  const fifo = join(dir, 'request.http');
  execFileSync('mkfifo', [fifo]);
  for (const input of [fifo, '/dev/zero']) {
    refused(
      await hookdrill(['verify', input, '--secret', 'whsec_test']),
      /capture .* is not a regular file \(a device, FIFO or socket\): give a raw HTTP request or a HAR file/,
      `verify ${input}`,
    );
  }
  // Every command reads the project file where it starts; git commits a symlink to /dev/zero as readily as a file.
  for (const [name, make] of [
    ['a FIFO', (file: string) => execFileSync('mkfifo', [file])],
    ['a symlink to /dev/zero', (file: string) => symlinkSync('/dev/zero', file)],
  ] as const) {
    const project = tempDir();
    make(join(project, 'hookdrill.config.json'));
    for (const args of [['fixtures'], ['send', 'stripe/invoice.paid', '--url', 'http://127.0.0.1:9/', '--secret', 'whsec_test']]) {
      const r = await inDir(args, {}, [], project, 10_000);
      refused(
        { ...r, killed: r.code === null },
        /hookdrill\.config\.json is not a regular file \(a device, FIFO or socket\)/,
        `${name} as the project file, ${args[0]}`,
      );
    }
  }
});

test('a HAR file or JSON lines starting with a UTF-8 BOM (as Fiddler writes) imports', async () => {
  const dir = tempDir();
  const entry = (id: string) => ({
    startedDateTime: '2026-01-01T00:00:00.000Z',
    request: {
      method: 'POST',
      url: 'http://x/hooks',
      headers: [{ name: 'Content-Type', value: 'application/json' }],
      postData: { mimeType: 'application/json', text: event(id) },
    },
  });
  writeFileSync(join(dir, 'fiddler.har'), `\uFEFF${JSON.stringify({ log: { version: '1.2', entries: [entry('evt_bom_har')] } })}`);
  writeFileSync(join(dir, 'bom.jsonl'), `\uFEFF${event('evt_bom_line')}\n`);
  const inbox = join(dir, 'inbox.db');
  for (const file of ['fiddler.har', 'bom.jsonl']) {
    const r = await hookdrill(['import', join(dir, file), '--inbox', inbox, '--provider', 'stripe', '--json']);
    assert.equal(r.killed, false);
    assert.equal(r.code, 0, `${file}: ${r.stderr}`);
    assert.equal((JSON.parse(r.stdout) as { stored: number }).stored, 1, file);
  }
  const db = openSqliteInbox(inbox);
  try {
    // The line is stored as its bytes, without the BOM.
    assert.equal((await db.get({ source: 'stripe', deliveryId: 'evt_bom_line' }))?.body?.toString(), event('evt_bom_line'));
    assert.ok(await db.get({ source: 'stripe', deliveryId: 'evt_bom_har' }));
  } finally {
    await db.close();
  }
});

test('a HAR file or a JSON array over 256 MiB is refused by size in one line, unread', async () => {
  const dir = tempDir();
  for (const [name, head] of [
    ['huge.har', '{"log":{"version":"1.2","entries":['],
    ['huge.json', '['],
  ] as const) {
    const file = join(dir, name);
    writeFileSync(file, head);
    truncateSync(file, 600 * 1024 * 1024); // sparse: no disk
    refused(
      await hookdrill(['import', file, '--inbox', join(dir, 'inbox.db'), '--provider', 'stripe']),
      /: 600 MiB, over the 256 MiB import reads of a (HAR file|JSON array) .*convert it to JSON lines .* or split it/,
      name,
    );
  }
});

const TIME = '/usr/bin/time';

// GNU time reports the child's peak RSS; .ci/run installs it, and there its absence is a failure.
const timeMissing = (): string | false => {
  if (existsSync(TIME)) return false;
  if (process.env.HOOKDRILL_REQUIRE_TOOLS === '1') throw new Error(`${TIME} is missing (HOOKDRILL_REQUIRE_TOOLS=1: required, not skipped)`);
  return `${TIME} is missing`;
};

test('JSON lines are read line by line: 200 MB imports with peak RSS well under the file size', {
  skip: timeMissing(),
}, async () => {
  const dir = tempDir();
  const file = join(dir, 'big.jsonl');
  // 20,000 lines of 10 KB; 50 delivery ids, so the inbox stays small (the rest are duplicates).
  const lines = 20_000;
  const fd = openSync(file, 'w');
  let bytes = 0;
  for (let i = 0; i < lines; i += 100) {
    const chunk = Array.from({ length: 100 }, (_, j) => `${event(`evt_${(i + j) % 50}`, 10_000)}\n`).join('');
    writeSync(fd, chunk);
    bytes += Buffer.byteLength(chunk);
  }
  closeSync(fd);
  const r = await run(
    [TIME, '-v', process.execPath, BIN, 'import', file, '--inbox', join(dir, 'inbox.db'), '--provider', 'stripe', '--json'],
    120_000,
  );
  assert.equal(r.killed, false, 'finished');
  assert.equal(r.code, 0, r.stderr);
  const result = JSON.parse(r.stdout) as { read: number; stored: number; duplicates: number };
  assert.equal(result.read, lines);
  assert.equal(result.stored + result.duplicates, lines);
  const kib = Number(/Maximum resident set size \(kbytes\): (\d+)/.exec(r.stderr)?.[1]);
  assert.ok(Number.isFinite(kib) && kib > 0, r.stderr);
  const peak = kib * 1024;
  const bound = bytes / 2 + 150 * 1024 * 1024;
  assert.ok(
    peak < bound,
    `peak RSS ${Math.round(peak / 1024 / 1024)} MB for a ${Math.round(bytes / 1024 / 1024)} MB file (bound ${Math.round(bound / 1024 / 1024)} MB)`,
  );
});
