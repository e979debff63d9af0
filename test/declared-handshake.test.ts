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

// A team whose platform asks for a challenge before any event (issue 55) declares it: beacon signs
// Twitch's way — sha256= HMAC of message id + RFC 3339 timestamp + body, a 10-minute window — and
// posts {"type": "endpoint.verify", "challenge": …}, to be echoed as the raw value. check is held
// to a Python receiver written to that declaration (test/receivers/webhook_receiver.py, --provider
// beacon): right, it passes url-verification; echoing the challenge as JSON, it fails with why.
const SECRET = 'beacon-secret-9Hq2Lw';

const beacon = {
  title: 'Beacon',
  signature: {
    header: 'Beacon-Message-Signature',
    algorithm: 'sha256',
    encoding: 'hex',
    content: '{id}{timestamp}{body}',
    value: 'sha256={signature}',
  },
  timestamp: { header: 'Beacon-Message-Timestamp', unit: 'rfc3339', tolerance: '10m' },
  id: { header: 'Beacon-Message-Id' },
  eventType: { body: 'type' },
  timeout: '5s',
  fixtures: 'webhooks',
  fixture: 'payment.succeeded',
  handshake: { name: 'endpoint.verify', challenge: 'challenge', when: { body: 'type', value: 'endpoint.verify' }, answer: 'text' },
};

function project(declared: Record<string, unknown> = beacon): string {
  const dir = tempDir();
  writeFileSync(
    join(dir, 'hookdrill.config.json'),
    JSON.stringify({ provider: 'beacon', secretEnv: 'TEAM_SECRET', providers: { beacon: declared } }),
  );
  mkdirSync(join(dir, 'webhooks'));
  writeFileSync(
    join(dir, 'webhooks', 'payment.succeeded.json'),
    JSON.stringify({ type: 'payment.succeeded', data: { id: 'pay_1', amount: 4200 } }),
  );
  writeFileSync(join(dir, 'webhooks', 'endpoint.verify.json'), JSON.stringify({ type: 'endpoint.verify', challenge: 'c-8d1f0e2a7b' }));
  return dir;
}

function receiver(dir: string, flaw = ''): string[] {
  const store = join(dir, `stored${flaw}.txt`);
  return [
    '--receiver',
    `${PYTHON} ${PY} serve --provider beacon --secret ${SECRET} --port "$PORT" --store ${store}${flaw ? ` --flaw ${flaw}` : ''}`,
    '--stored',
    `${PYTHON} ${PY} ids --store ${store}`,
  ];
}

const check = async (dir: string, flaw = '') => {
  const r = await hookdrill(
    [
      'check',
      '--url',
      `http://127.0.0.1:${await freePort()}/`,
      '--json',
      '--only',
      'valid,wrong-secret,stale-timestamp,url-verification,forged-check',
      ...receiver(dir, flaw),
    ],
    { TEAM_SECRET: SECRET },
    [],
    dir,
  );
  const cases = (JSON.parse(r.stdout) as { cases: { name: string; status: string; observed: string; diagnosis?: string }[] }).cases;
  return { r, of: (name: string) => cases.find((c) => c.name === name) };
};

test('a declared challenge handshake: a receiver echoing the raw challenge passes url-verification, forged-check and a 10-minute window', async () => {
  const { r, of } = await check(project());
  for (const name of ['valid', 'wrong-secret', 'stale-timestamp', 'url-verification', 'forged-check'])
    assert.equal(of(name)?.status, 'pass', `${name}: ${r.stdout}`);
  assert.match(of('stale-timestamp')?.observed ?? '', /^4\d\d/);
});

test('a declared text handshake: a receiver echoing the challenge as JSON fails url-verification, told to send the raw value', async () => {
  const { r, of } = await check(project(), 'json-challenge');
  assert.equal(of('valid')?.status, 'pass', r.stdout);
  const c = of('url-verification');
  assert.equal(c?.status, 'fail', r.stdout);
  assert.match(c?.diagnosis ?? '', /echoes endpoint\.verify's challenge wrapped in JSON — Beacon needs the raw value alone/);
});

test('send carries the declared timestamp as RFC 3339 (milliseconds, Z) beside its sha256= signature', async () => {
  const dir = project();
  const seen: Record<string, string | string[] | undefined>[] = [];
  const server = createServer((req, res) => {
    seen.push(req.headers);
    req.resume();
    req.on('end', () => res.end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    const sent = await hookdrill(['send', '--url', url, '--no-retry'], { TEAM_SECRET: SECRET }, [], dir);
    assert.equal(sent.code, 0, sent.stderr);
    assert.match(String(seen[0]?.['beacon-message-timestamp']), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.match(String(seen[0]?.['beacon-message-signature']), /^sha256=[0-9a-f]{64}$/);
  } finally {
    server.close();
  }
});

test('a wrong handshake or RFC 3339 declaration is one line naming the field, exit 2', async () => {
  for (const [declared, field] of [
    [{ ...beacon, handshake: { ...beacon.handshake, answer: 'xml' } }, /providers\.beacon\.handshake\.answer: must be one of text/],
    [{ ...beacon, handshake: { ...beacon.handshake, echo: 'x' } }, /providers\.beacon\.handshake\.echo: unknown field/],
    [
      { ...beacon, handshake: { name: 'endpoint.verify', answer: 'text' } },
      /providers\.beacon\.handshake\.challenge: must be a non-empty string/,
    ],
    [
      { ...beacon, signature: { ...beacon.signature, value: 't={timestamp},sha256={signature}' }, timestamp: { unit: 'rfc3339' } },
      /providers\.beacon\.timestamp\.unit: rfc3339 goes with a header of its own/,
    ],
  ] as const) {
    const r = await hookdrill(['send', '--url', 'http://127.0.0.1:9/'], { TEAM_SECRET: SECRET }, [], project(declared));
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, field);
  }
});
