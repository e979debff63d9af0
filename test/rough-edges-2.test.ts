import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer as createHttps } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { providers } from '../src/providers/index.js';
import { BIN, hookdrill } from './helpers/cli.js';
import { reply, startServer } from './helpers/server.js';
import { freePort } from './helpers/ports.js';
import { tempDir } from './helpers/tmp.js';

const SECRET = 'whsec_rough_two';
const SIMPLE = fileURLToPath(new URL('./receivers/simple.js', import.meta.url));

/** A hookdrill process whose output is read as it comes; waitFor throws, with what it saw, when the text never comes. */
function live(args: string[]) {
  const child: ChildProcess = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, CI: 'true', HOOKDRILL_SECRET: SECRET },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return {
    child,
    exit,
    out: () => stdout,
    err: () => stderr,
    async waitFor(where: 'out' | 'err', pattern: RegExp, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(where === 'out' ? stdout : stderr)) {
        if (Date.now() > deadline) throw new Error(`never saw ${pattern}; stdout: ${stdout} stderr: ${stderr}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

test('send to a URL where nothing listens, piped: the scheduled retry is said at once; SIGTERM still prints the summary', async () => {
  const p = live(['send', '--provider', 'stripe', '--url', 'http://127.0.0.1:1/']);
  await p.waitFor('err', /retry evt_\w+ invoice\.paid: attempt 1 got refused .*; attempt 2 in 1m, at \d\d:\d\d:\d\d UTC/);
  p.child.kill('SIGTERM');
  assert.equal(await p.exit, 1);
  assert.match(p.out(), /✗ evt_\w+ {2}invoice\.paid {2}refused .* interrupted, expected 2xx/);
  assert.match(p.out(), /FAIL 1 event · 0 delivered .* interrupted/);
});

test('chaos interrupted with Ctrl-C: the rounds done are reported, the run does not pass, no receiver is left', async () => {
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
  assert.equal(await p.exit, 1, p.err());
  assert.match(p.out(), /^round 1: 5 sent/m);
  assert.match(p.out(), /interrupted after \d+ of 10000 rounds/);
  assert.match(p.out(), /^FAIL /m);
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

test('check against a receiver that never answers: each case printed as it finishes, each attempt cut at --timeout', async () => {
  const hang = await startServer(() => undefined);
  try {
    const p = live([
      'check',
      '--url',
      hang.url,
      '--provider',
      'stripe',
      '--only',
      'valid,duplicate,retry,concurrent-duplicates',
      '--timeout',
      '300ms',
    ]);
    await p.waitFor('out', /FAIL valid +timeout/, 5_000);
    assert.doesNotMatch(p.out(), /passed, .* failed/, 'the first case is out before the run ends');
    assert.equal(await p.exit, 1);
    assert.match(p.out(), /FAIL 0 passed, 4 failed/);
  } finally {
    await hang.close();
  }
});

test('inspect cuts long cells (a 200 KB id) to the terminal; --json keeps them whole', async () => {
  const path = join(tempDir(), 'inbox.db');
  const inbox = openSqliteInbox(path);
  const longId = `evt_${'x'.repeat(200_000)}`;
  for (const id of [longId, ...Array.from({ length: 99 }, (_, i) => `evt_${i}`)]) {
    await inbox.put({
      source: 'stripe',
      deliveryId: id,
      eventType: 'invoice.paid',
      body: Buffer.from('{}'),
      headers: {},
      receivedAt: Date.now(),
    });
  }
  await inbox.close();
  const text = await hookdrill(['inspect', '--inbox', path, '--status', 'pending', '--limit', '100']);
  assert.equal(text.code, 0, text.stderr);
  assert.ok(text.stdout.length < 30_000, `${text.stdout.length} bytes for 100 rows`);
  assert.match(text.stdout, /evt_x{30,}…/);
  const json = await hookdrill(['inspect', '--inbox', path, '--status', 'pending', '--limit', '100', '--json']);
  assert.ok(json.stdout.includes(longId));
});

test("replay without --provider re-signs as the rows' source, and the official verifier accepts it", async () => {
  const path = join(tempDir(), 'inbox.db');
  const inbox = openSqliteInbox(path);
  const body = Buffer.from('{"id":"evt_src","object":"event","type":"invoice.paid"}');
  await inbox.put({
    source: 'stripe',
    deliveryId: 'evt_src',
    eventType: 'invoice.paid',
    body,
    headers: {},
    receivedAt: Date.now() - 3_600_000,
  });
  await inbox.close();
  const app = await startServer((req, res) => {
    try {
      providers.stripe.verify(req.rawBody, req.headers, [SECRET]);
      reply(res, 200);
    } catch {
      reply(res, 400);
    }
  });
  try {
    const r = await hookdrill(['replay', '--inbox', path, '--id', 'evt_src', '--to', app.url, '--secret', SECRET]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.ok(app.requests[0]?.headers['stripe-signature']);
  } finally {
    await app.close();
  }
});

test('--verbose shows what was sent and what came back; --json keeps the answer of a 2xx too', async () => {
  const app = await startServer((_req, res) => reply(res, 200, '{"received":true}'));
  try {
    const v = await hookdrill(['send', '--provider', 'stripe', '--secret', SECRET, '--url', app.url, '--verbose']);
    assert.equal(v.code, 0, v.stderr);
    assert.match(v.stderr, /^> POST http:\/\/127\.0\.0\.1:\d+\/webhooks {2}\(evt_\w+, attempt 1\)$/m);
    assert.match(v.stderr, /^> Stripe-Signature: t=\d+,v1=[0-9a-f]{64}$/m);
    assert.match(v.stderr, /^< 200$/m);
    assert.match(v.stderr, /^< \{"received":true\}$/m);
    const j = await hookdrill(['send', '--provider', 'stripe', '--secret', SECRET, '--url', app.url, '--json']);
    const result = JSON.parse(j.stdout) as { deliveries: { attempts: { bodySnippet?: string }[] }[] };
    assert.equal(result.deliveries[0]?.attempts[0]?.bodySnippet, '{"received":true}');
  } finally {
    await app.close();
  }
});

test('a receiver behind a self-signed certificate: refused by default, accepted with --ca or --insecure', async () => {
  const dir = tempDir();
  const key = join(dir, 'key.pem');
  const cert = join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ],
    { stdio: 'ignore' },
  );
  const server = createHttps({ key: readFileSync(key), cert: readFileSync(cert) }, (req, res) => {
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const base = ['send', '--provider', 'stripe', '--secret', SECRET, '--url', url, '--no-retry'];
  try {
    const plain = await hookdrill(base);
    assert.equal(plain.code, 1);
    assert.match(plain.stdout, /tls/);
    assert.equal((await hookdrill([...base, '--ca', cert])).code, 0);
    assert.equal((await hookdrill([...base, '--insecure'])).code, 0);
    const bad = await hookdrill([...base, '--ca', join(dir, 'missing.pem')]);
    assert.equal(bad.code, 2);
    assert.match(bad.stderr, /--ca .*missing\.pem: cannot read it \(ENOENT\)/);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  }
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

test("check --timeout longer than the provider's cannot pass a slow answer: Slack gives up after 3 s", async () => {
  const slow = await startServer(async (_req, res) => {
    await new Promise((r) => setTimeout(r, 3_300));
    reply(res, 200);
  });
  try {
    const r = await hookdrill([
      'check',
      '--url',
      slow.url,
      '--provider',
      'slack',
      '--secret',
      'slack-secret',
      '--only',
      'valid',
      '--timeout',
      '10s',
    ]);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stdout, /FAIL valid +timeout .*/);
  } finally {
    await slow.close();
  }
});

test('chaos with a provider that never retries (GitHub): what the kill cut off is redelivered once, and listen passes', async () => {
  const inbox = join(tempDir(), 'inbox.db');
  const port = await freePort();
  const r = await hookdrill([
    'chaos',
    '--receiver',
    `node ${BIN} listen --provider github --secret ${SECRET} --port ${port} --inbox ${inbox}`,
    '--url',
    `http://127.0.0.1:${port}/`,
    '--provider',
    'github',
    '--secret',
    SECRET,
    '--inbox',
    inbox,
    '--events',
    '10',
    '--rounds',
    '2',
    '--json',
  ]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const result = JSON.parse(r.stdout) as { totals: { acknowledged: number; sent: number; refused: string[] } };
  assert.equal(result.totals.acknowledged, result.totals.sent);
  assert.deepEqual(result.totals.refused, []);
});

test('--verbose never shows a credential; a bad URL never shows its password, whatever it holds', async () => {
  const app = await startServer((_req, res) => {
    res.setHeader('set-cookie', 'session=server-secret');
    reply(res, 200);
  });
  try {
    const v = await hookdrill([
      'send',
      '--provider',
      'stripe',
      '--secret',
      SECRET,
      '--url',
      app.url.replace('http://', 'http://alice:pw-in-url@'),
      '--header',
      'Cookie: session=client-secret',
      '--verbose',
    ]);
    assert.equal(v.code, 0, v.stderr);
    assert.match(v.stderr, /^> Cookie: \*\*\*$/m);
    assert.match(v.stderr, /^< set-cookie: \*\*\*$/m);
    assert.match(v.stderr, /^> POST http:\/\/alice:\*\*\*@127\.0\.0\.1/m);
    assert.doesNotMatch(v.stderr, /client-secret|server-secret|pw-in-url/);
  } finally {
    await app.close();
  }
  for (const url of ['http://alice:hun/ter2@[bad', 'http://alice:p@ss@[bad']) {
    const r = await hookdrill(['send', '--provider', 'stripe', '--secret', SECRET, '--url', url]);
    assert.equal(r.code, 2);
    assert.doesNotMatch(r.stderr, /ter2|ss@|hun/);
  }
});
