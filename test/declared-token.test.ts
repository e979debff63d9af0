import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { hookdrill } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { PYTHON } from './helpers/python.js';
import { tempDir } from './helpers/tmp.js';
import { PY } from './helpers/verdicts.js';

// Teams whose platforms sign nothing declare a shared secret sent as it is (issue 55): relay a
// Bearer token (RFC 6750), postbox Basic credentials (RFC 7617). What `send` puts on the wire is
// held to those RFCs' forms, and `check` is held to Python receivers written to them
// (test/receivers/webhook_receiver.py, --provider relay / postbox), right or taking any token.
const TOKEN = 'relay-token-7f3Kq9Zt';
const CREDENTIALS = 'hooks:p4ss-w0rd';

const declarations = {
  relay: {
    title: 'Relay',
    signature: { scheme: 'bearer' },
    id: { header: 'Relay-Delivery', prefix: 'dlv_' },
    eventType: { body: 'type' },
    timeout: '10s',
    fixtures: 'webhooks',
    fixture: 'payment.succeeded',
  },
  postbox: {
    title: 'Postbox',
    signature: { scheme: 'basic' },
    id: { header: 'Postbox-Delivery' },
    eventType: { body: 'type' },
    timeout: '10s',
    fixtures: 'webhooks',
    fixture: 'payment.succeeded',
  },
};

function project(provider: string, providers: Record<string, unknown> = declarations): string {
  const dir = tempDir();
  writeFileSync(join(dir, 'hookdrill.config.json'), JSON.stringify({ provider, secretEnv: 'TEAM_SECRET', providers }));
  mkdirSync(join(dir, 'webhooks'));
  writeFileSync(
    join(dir, 'webhooks', 'payment.succeeded.json'),
    JSON.stringify({ type: 'payment.succeeded', data: { id: 'pay_1', amount: 4200, currency: 'eur' } }),
  );
  return dir;
}

const secretOf = (provider: string) => (provider === 'relay' ? TOKEN : CREDENTIALS);

function receiver(dir: string, provider: string, flaw = ''): string[] {
  const store = join(dir, `stored-${provider}${flaw}.txt`);
  return [
    '--receiver',
    `${PYTHON} ${PY} serve --provider ${provider} --secret ${secretOf(provider)} --port "$PORT" --store ${store}${flaw ? ` --flaw ${flaw}` : ''}`,
    '--stored',
    `${PYTHON} ${PY} ids --store ${store}`,
  ];
}

test('send carries exactly Authorization: Bearer <token> and Basic base64(user:password), and prints neither', async () => {
  const seen: [string, string][][] = [];
  const server = createServer((req, res) => {
    const raw: [string, string][] = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) raw.push([req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string]);
    seen.push(raw);
    req.resume();
    req.on('end', () => res.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  try {
    for (const [provider, expected, idPattern] of [
      ['relay', `Bearer ${TOKEN}`, /^dlv_[A-Za-z0-9]{24}$/],
      ['postbox', `Basic ${Buffer.from(CREDENTIALS, 'utf8').toString('base64')}`, /^[A-Za-z0-9]{24}$/],
    ] as const) {
      const dir = project(provider);
      const r = await hookdrill(['send', '--url', url, '--no-retry'], { TEAM_SECRET: secretOf(provider) }, [], dir);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.ok(!`${r.stdout}${r.stderr}`.includes(secretOf(provider)), `${provider}: the secret is not printed`);
      const got = seen.at(-1) ?? [];
      const own = got.filter(([n]) => !['host', 'connection', 'content-length'].includes(n.toLowerCase()));
      assert.deepEqual(
        own.map(([n]) => n),
        ['Content-Type', 'Authorization', `${provider === 'relay' ? 'Relay' : 'Postbox'}-Delivery`],
      );
      assert.equal(own.find(([n]) => n === 'Authorization')?.[1], expected, `${provider}: the credentials as the RFC writes them`);
      assert.match(own[2]?.[1] ?? '', idPattern);
      // The secret goes out in Authorization only.
      assert.equal(own.filter(([, v]) => v.includes(secretOf(provider)) || v.includes(expected.split(' ')[1] as string)).length, 1);
    }
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test('check judges a receiver of a declared Bearer scheme: a right one passes with the signature-only cases skipped and said, one taking any token fails wrong-secret', async () => {
  const dir = project('relay');
  const env = { TEAM_SECRET: TOKEN };
  const right = await hookdrill(
    ['check', '--url', `http://127.0.0.1:${await freePort()}/`, ...receiver(dir, 'relay'), '--json'],
    env,
    [],
    dir,
  );
  assert.equal(right.code, 0, right.stdout.slice(0, 2000) + right.stderr);
  assert.ok(!`${right.stdout}${right.stderr}`.includes(TOKEN), 'the token is not printed');
  const cases = (JSON.parse(right.stdout) as { cases: { name: string; status: string; observed?: string }[] }).cases;
  assert.deepEqual(
    cases.filter((c) => c.status === 'fail').map((c) => c.name),
    [],
  );
  const skipped = new Map(cases.filter((c) => c.status === 'skipped').map((c) => [c.name, c.observed ?? '']));
  // A token covers nothing of the request: what only a signature can be held to is skipped, and says so.
  for (const name of ['flipped-byte', 'reserialized', 'stale-timestamp', 'rotation'])
    assert.match(skipped.get(name) ?? '', /a Bearer token in Authorization, not a signature/, name);
  // What a token does answer for is judged.
  for (const name of ['wrong-secret', 'missing-signature', 'malformed-signature', 'wrong-length-signature'])
    assert.equal(cases.find((c) => c.name === name)?.status, 'pass', name);

  const anyToken = await hookdrill(
    ['check', '--url', `http://127.0.0.1:${await freePort()}/`, ...receiver(dir, 'relay', 'any-token'), '--only', 'wrong-secret'],
    env,
    [],
    dir,
  );
  assert.equal(anyToken.code, 1, anyToken.stdout + anyToken.stderr);
  assert.match(anyToken.stdout, /FAIL wrong-secret +200, but STORED/);
  assert.match(anyToken.stdout, /✗ wrong-secret: your receiver accepts a signature made with a secret it does not hold/);
});

test('check judges a receiver of declared Basic credentials: a right one passes what a token answers for, one taking any credentials fails wrong-secret', async () => {
  const dir = project('postbox');
  const env = { TEAM_SECRET: CREDENTIALS };
  const only = ['--only', 'wrong-secret,missing-signature,malformed-signature,wrong-length-signature,duplicate'];
  const right = await hookdrill(
    ['check', '--url', `http://127.0.0.1:${await freePort()}/`, ...receiver(dir, 'postbox'), ...only],
    env,
    [],
    dir,
  );
  assert.equal(right.code, 0, right.stdout + right.stderr);
  assert.ok(!`${right.stdout}${right.stderr}`.includes(CREDENTIALS), 'the credentials are not printed');
  const anyCredentials = await hookdrill(
    ['check', '--url', `http://127.0.0.1:${await freePort()}/`, ...receiver(dir, 'postbox', 'any-token'), ...only],
    env,
    [],
    dir,
  );
  assert.equal(anyCredentials.code, 1, anyCredentials.stdout + anyCredentials.stderr);
  assert.match(anyCredentials.stdout, /FAIL wrong-secret +200, but STORED/);
});

test('a token scheme declared wrong, or a secret its header cannot carry, is one line naming the fault, exit 2', async () => {
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ scheme: 'token' }, /providers\.relay\.signature\.header: a token scheme names the header its token is sent in/],
    [
      { scheme: 'bearer', algorithm: 'sha256' },
      /providers\.relay\.signature\.algorithm: goes with an HMAC; a bearer scheme sends the secret itself/,
    ],
    [{ scheme: 'oauth' }, /providers\.relay\.signature\.scheme: must be one of hmac, token, bearer, basic, body, canonical, jwt/],
  ];
  for (const [signature, message] of bad) {
    const dir = project('relay', { relay: { ...declarations.relay, signature } });
    const r = await hookdrill(['profiles'], {}, [], dir);
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
  const timed = project('relay', { relay: { ...declarations.relay, timestamp: { tolerance: '5m' } } });
  const t = await hookdrill(['profiles'], {}, [], timed);
  assert.equal(t.code, 2, t.stderr);
  assert.match(t.stderr, /providers\.relay\.timestamp: a bearer scheme signs nothing/);
  assert.equal(t.stderr.trim().split('\n').length, 1, t.stderr);

  // Basic credentials are user:password; a Bearer token holds no space. Neither is printed back.
  for (const [provider, secret, message] of [
    ['postbox', 'no-colon-here', /Basic credentials are "user:password"/],
    ['relay', 'two words', /a Bearer token holds no space/],
  ] as const) {
    const r = await hookdrill(['send', '--url', 'http://127.0.0.1:9/', '--no-retry'], { TEAM_SECRET: secret }, [], project(provider));
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.ok(!r.stderr.includes(secret), 'the secret is not printed');
  }
});
