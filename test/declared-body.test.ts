import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { hookdrill } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { PYTHON } from './helpers/python.js';
import { tempDir } from './helpers/tmp.js';
import { PY } from './helpers/verdicts.js';

// A team whose platform writes its signature into the body declares it (issue 55): parcel signs
// "auth.timestamp.auth.nonce.data.id" and writes the base64 HMAC at auth.signature, as Mailgun
// does its own fields. What `send` puts on the wire is held to an HMAC computed here, and `check`
// to a Python receiver written to that rule (test/receivers/webhook_receiver.py, --provider parcel).
const SECRET = 'parcel-signing-key-9Tq2';

const parcel = {
  title: 'Parcel',
  signature: {
    scheme: 'body',
    field: 'auth.signature',
    algorithm: 'sha256',
    encoding: 'base64',
    content: '{body.auth.timestamp}.{body.auth.nonce}.{body.data.id}',
    timestamp: 'auth.timestamp',
    token: 'auth.nonce',
    tokenLength: 32,
  },
  id: { body: 'data.id' },
  eventType: { body: 'type' },
  timeout: '10s',
  retries: ['1m'],
  fixtures: 'webhooks',
  fixture: 'parcel.shipped',
};

function project(declared: Record<string, unknown> = parcel): string {
  const dir = tempDir();
  writeFileSync(
    join(dir, 'hookdrill.config.json'),
    JSON.stringify({ provider: 'parcel', secretEnv: 'TEAM_SECRET', providers: { parcel: declared } }),
  );
  mkdirSync(join(dir, 'webhooks'));
  writeFileSync(
    join(dir, 'webhooks', 'parcel.shipped.json'),
    JSON.stringify({ type: 'parcel.shipped', data: { id: 'prc_1', carrier: 'dhl', weight: 1200 } }),
  );
  return dir;
}

test('send writes a declared signature into the body: the HMAC of the named fields at auth.signature, no header carrying it, the secret not printed', async () => {
  const seen: { headers: [string, string][]; body: Buffer }[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    const headers: [string, string][] = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) headers.push([req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string]);
    req.on('data', (c: Buffer) => chunks.push(c));
    // The first attempt refused: its retry must carry the same signature (the delivery's, not the attempt's).
    req.on('end', () => {
      seen.push({ headers, body: Buffer.concat(chunks) });
      res.statusCode = seen.length === 1 ? 500 : 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  try {
    const r = await hookdrill(['send', '--url', url, '--time-scale', '0.001'], { TEAM_SECRET: SECRET }, [], project());
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.ok(!`${r.stdout}${r.stderr}`.includes(SECRET), 'the secret is not printed');
    assert.equal(seen.length, 2);
    const [first, retry] = seen as [(typeof seen)[0], (typeof seen)[0]];
    assert.deepEqual(
      first.headers.map(([n]) => n).filter((n) => !['host', 'connection', 'content-length'].includes(n.toLowerCase())),
      ['Content-Type'],
      'the signature travels in the body only',
    );
    const body = JSON.parse(first.body.toString('utf8')) as {
      type: string;
      data: { id: string };
      auth: { timestamp: string; nonce: string; signature: string };
    };
    assert.equal(body.type, 'parcel.shipped');
    assert.match(body.auth.timestamp, /^\d{10}$/);
    assert.ok(Math.abs(Number(body.auth.timestamp) - Date.now() / 1000) < 60);
    assert.match(body.auth.nonce, /^[0-9a-f]{32}$/);
    const expected = createHmac('sha256', SECRET).update(`${body.auth.timestamp}.${body.auth.nonce}.${body.data.id}`).digest('base64');
    assert.equal(body.auth.signature, expected);
    assert.deepEqual(retry.body, first.body, 'a retry carries the first attempt’s signature, timestamp and nonce');
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test('check judges a receiver of a declared body scheme: a right one passes, what the signature does not cover skipped and said', async () => {
  const dir = project();
  const store = join(dir, 'stored.txt');
  const r = await hookdrill(
    [
      'check',
      '--url',
      `http://127.0.0.1:${await freePort()}/`,
      '--receiver',
      `${PYTHON} ${PY} serve --provider parcel --secret ${SECRET} --port "$PORT" --store ${store}`,
      '--stored',
      `${PYTHON} ${PY} ids --store ${store}`,
      '--json',
    ],
    { TEAM_SECRET: SECRET },
    [],
    dir,
  );
  assert.equal(r.code, 0, r.stdout.slice(0, 3000) + r.stderr);
  const cases = (JSON.parse(r.stdout) as { cases: { name: string; status: string; observed?: string }[] }).cases;
  assert.deepEqual(
    cases.filter((c) => c.status === 'fail' || c.status === 'warn').map((c) => c.name),
    [],
  );
  for (const name of [
    'valid',
    'duplicate',
    'wrong-secret',
    'missing-signature',
    'malformed-signature',
    'wrong-length-signature',
    'late-retry',
  ])
    assert.equal(cases.find((c) => c.name === name)?.status, 'pass', name);
  const skipped = new Map(cases.filter((c) => c.status === 'skipped').map((c) => [c.name, c.observed ?? '']));
  for (const name of ['flipped-byte', 'reserialized'])
    assert.match(skipped.get(name) ?? '', /covers auth\.timestamp and auth\.nonce and data\.id, not the rest of the body/, name);
});

test('a body scheme declared wrong is one line naming the fault, exit 2', async () => {
  const sig = parcel.signature;
  const bad: [Record<string, unknown>, RegExp][] = [
    [
      { signature: { ...sig, content: '{body}' } },
      /providers\.parcel\.signature\.content: signs the whole \{body\}: that is an HMAC scheme/,
    ],
    [{ signature: { ...sig, content: '{body.auth.timestamp}{id}' } }, /providers\.parcel\.signature\.content: may name body fields only/],
    [
      { signature: { ...sig, content: '{body.auth.timestamp}{body.auth.signature}' } },
      /signature\.content: signs auth\.signature, where the signature itself is written/,
    ],
    [
      { signature: { ...sig, content: '{body.auth.timestamp}' } },
      /providers\.parcel\.signature\.token: is written at signing but not signed/,
    ],
    [
      { signature: { ...sig, content: '{body.data.id}', timestamp: undefined, token: undefined, tokenLength: undefined } },
      /providers\.parcel\.signature\.content: signs only fields of the event/,
    ],
    [{ signature: { ...sig, field: 'auth..signature' } }, /providers\.parcel\.signature\.field: must be a dotted path/],
    [{ signature: { ...sig, header: 'X-Sig' } }, /providers\.parcel\.signature\.header: unknown field/],
    [{ timestamp: { tolerance: '5m' } }, /providers\.parcel\.timestamp: a body scheme writes its timestamp into the body/],
    [{ id: { body: 'auth.nonce' } }, /providers\.parcel\.id\.body: is auth\.nonce, which the signing writes anew/],
  ];
  for (const [change, message] of bad) {
    const r = await hookdrill(['profiles'], {}, [], project({ ...parcel, ...change }));
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});
