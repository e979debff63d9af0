// Signals and cut-off output: a summary is still printed, a verdict never falsely 0, no receiver left behind.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BIN } from './helpers/cli.js';
import { live as liveWith } from './helpers/live.js';
import { freePort } from './helpers/ports.js';
import { PYTHON } from './helpers/python.js';
import { tempDir } from './helpers/tmp.js';

const SECRET = 'whsec_edges';
const SIMPLE = fileURLToPath(new URL('./receivers/simple.js', import.meta.url));
const live = (args: string[]) => liveWith(args, SECRET);

test('send to a URL where nothing listens, piped: the scheduled retry is said at once; SIGTERM still prints the summary', async () => {
  const p = live(['send', '--provider', 'stripe', '--url', 'http://127.0.0.1:1/']);
  await p.waitFor('err', /retry evt_\w+ invoice\.paid: attempt 1 got refused .*; attempt 2 in 1m, at \d\d:\d\d:\d\d UTC/);
  p.child.kill('SIGTERM');
  assert.equal(await p.exit, 1);
  assert.match(p.out(), /✗ evt_\w+ {2}invoice\.paid {2}refused .* interrupted, expected 2xx/);
  assert.match(p.out(), /FAIL 1 event · 0 delivered .* interrupted/);
});

test('chaos interrupted with Ctrl-C: the rounds done are reported, the run is no verdict (exit 130), no receiver is left', async () => {
  const file = join(tempDir(), 'stored.txt');
  writeFileSync(file, '');
  const port = await freePort();
  const p = live([
    'chaos',
    '--receiver',
    `node ${SIMPLE} store-first ${file}`,
    '--url',
    `http://127.0.0.1:${port}/`,
    '--provider',
    'stripe',
    '--stored',
    `cat ${file}`,
    '--events',
    '5',
    '--rounds',
    '10000',
  ]);
  const deadline = Date.now() + 10_000;
  while (readFileSync(file, 'utf8').split('\n').filter(Boolean).length < 15) {
    assert.ok(Date.now() < deadline, 'chaos never got going');
    await new Promise((r) => setTimeout(r, 20));
  }
  p.child.kill('SIGINT');
  assert.equal(await p.exit, 130, p.err());
  assert.match(p.out(), /^round 1: 5 sent/m);
  assert.match(p.out(), /interrupted in round \d+ of 10000/);
  assert.match(p.out(), /^INTERRUPTED /m);
  assert.doesNotMatch(execFileSync('ps', ['-eo', 'args']).toString(), new RegExp(`simple.js store-first ${file}`));
});

test('listen stops cleanly on SIGHUP, as on SIGTERM', async () => {
  const inbox = join(tempDir(), 'inbox.db');
  const p = live(['listen', '--json', '--port', '0', '--provider', 'stripe', '--inbox', inbox]);
  await p.waitFor('out', /"event":"ready"/);
  p.child.kill('SIGHUP');
  assert.equal(await p.exit, 0, p.err());
  assert.match(p.out(), /"event":"stopped"/);
});

test('output cut short by the reader (| head -1) never exits 0: the verdict is unknown', async () => {
  const r = await new Promise<number | null>((resolve) => {
    const child = spawn('bash', [
      '-c',
      `set -o pipefail; "${process.execPath}" "${BIN}" send --provider stripe --secret ${SECRET} --url http://127.0.0.1:1/ --no-retry --count 3000 | head -1 > /dev/null`,
    ]);
    child.on('exit', (code) => resolve(code));
  });
  assert.notEqual(r, 0);
});

test('check interrupted (SIGTERM, as a CI timeout sends): what was judged is printed and in the JUnit report, the rest skipped as not judged; exit 143', async () => {
  const { PY, SECRET: SECRETS } = await import('./helpers/verdicts.js');
  const store = join(tempDir(), 'stored.txt');
  const junit = join(tempDir(), 'check.xml');
  const port = await freePort();
  const p = liveWith(
    [
      'check',
      '--provider',
      'stripe',
      '--url',
      `http://127.0.0.1:${port}/`,
      '--receiver',
      `${PYTHON} ${PY} serve --provider stripe --secret ${SECRETS.stripe} --port "$PORT" --store ${store}`,
      '--stored',
      `${PYTHON} ${PY} ids --store ${store}`,
      '--junit',
      junit,
    ],
    SECRETS.stripe as string,
  );
  await p.waitFor('out', /^PASS duplicate/m);
  p.child.kill('SIGTERM');
  assert.equal(await p.exit, 143, p.err());
  assert.match(p.out(), /^PASS valid/m);
  assert.match(p.out(), /^SKIP \S+ +not judged: interrupted/m);
  assert.match(p.out(), /^interrupted: FAIL \d+ passed, 0 failed, .* \d+ not judged/m);
  const xml = readFileSync(junit, 'utf8');
  assert.match(xml, /name="valid" time=/);
  assert.match(xml, /<skipped message="not judged: interrupted/);
});
