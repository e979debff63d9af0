// What crosses the wire and what is shown of it: --verbose, credentials masked, TLS trust, long cells cut to the terminal.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer as createHttps } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { hookdrill } from './helpers/cli.js';
import { live as liveWith } from './helpers/live.js';
import { reply, startServer } from './helpers/server.js';
import { tempDir } from './helpers/tmp.js';

const SECRET = 'whsec_edges';
const _SIMPLE = fileURLToPath(new URL('./receivers/simple.js', import.meta.url));
const _live = (args: string[]) => liveWith(args, SECRET);

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

test('--verbose shows what was sent and what came back; --json keeps the answer of a 2xx too', async () => {
  const app = await startServer((_req, res) => reply(res, 200, '{"received":true}'));
  try {
    const v = await hookdrill(['send', '--provider', 'stripe', '--secret', SECRET, '--url', app.url, '--verbose']);
    assert.equal(v.code, 0, v.stderr);
    assert.match(v.stderr, /^> POST http:\/\/127\.0\.0\.1:\d+\/webhooks {2}\(evt_\w+, attempt 1\)$/m);
    assert.match(v.stderr, /^> Stripe-Signature: t=\d+,v1=[0-9a-f]{64},v0=[0-9a-f]{64}$/m);
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
