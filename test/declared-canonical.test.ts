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

// A team whose platform signs as Twilio does — a canonical string of the URL and the form's
// parameters sorted by name, not the body's bytes — declares it (issue 55): ringer, HMAC-SHA256 in
// hex. What `send` puts on the wire is held to the string computed here apart from src/, and
// `check` to Python receivers (test/receivers/webhook_receiver.py --provider ringer, on
// twilio_scheme.py): right, or signing the parameters in the order they came.
const SECRET = 'ringer-signing-key-5Qm2';

const ringer = {
  title: 'Ringer',
  signature: { scheme: 'canonical', header: 'Ringer-Signature', algorithm: 'sha256', encoding: 'hex', content: '{url}{params}' },
  id: { header: 'Ringer-Delivery', prefix: 'rd_' },
  eventType: { body: 'Kind' },
  timeout: '10s',
  retries: ['1m', '5m'],
  fixtures: 'webhooks',
  fixture: 'call.answered',
};

function project(declaration: Record<string, unknown> = ringer): string {
  const dir = tempDir();
  writeFileSync(
    join(dir, 'hookdrill.config.json'),
    JSON.stringify({ provider: 'ringer', secretEnv: 'TEAM_SECRET', providers: { ringer: declaration } }),
  );
  mkdirSync(join(dir, 'webhooks'));
  // Out of order on purpose, a value with a space and a plus: the canonical string sorts and decodes them.
  writeFileSync(
    join(dir, 'webhooks', 'call.answered.json'),
    JSON.stringify({
      hookdrill_form: { Kind: 'call.answered', CallId: 'RC0001', To: '+14155550199', From: '+14155550100', Note: 'a b+c', Area: '' },
    }),
  );
  return dir;
}

/** The canonical string as the declaration states it, written out apart from src/. */
function expected(url: string, body: string): string {
  const pairs = [...new URLSearchParams(body)].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return createHmac('sha256', SECRET)
    .update(url + pairs.map(([k, v]) => k + v).join(''))
    .digest('hex');
}

function receiver(dir: string, flaw = ''): string[] {
  const store = join(dir, `stored${flaw}.txt`);
  return [
    '--receiver',
    `${PYTHON} ${PY} serve --provider ringer --secret ${SECRET} --port "$PORT" --store ${store}${flaw ? ` --flaw ${flaw}` : ''}`,
    '--stored',
    `${PYTHON} ${PY} ids --store ${store}`,
  ];
}

test('send signs a declared canonical scheme over the URL and the form parameters sorted by name, and sends the form', async () => {
  const seen: { raw: [string, string][]; body: string }[] = [];
  const server = createServer((req, res) => {
    const raw: [string, string][] = [];
    for (let i = 0; i < req.rawHeaders.length; i += 2) raw.push([req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string]);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({ raw, body: Buffer.concat(chunks).toString('utf8') });
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/calls?team=7`;
  try {
    const r = await hookdrill(['send', '--url', url, '--no-retry'], { TEAM_SECRET: SECRET }, [], project());
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.ok(!`${r.stdout}${r.stderr}`.includes(SECRET), 'the secret is not printed');
    const got = seen[0] as { raw: [string, string][]; body: string };
    const own = got.raw.filter(([n]) => !['host', 'connection', 'content-length'].includes(n.toLowerCase()));
    assert.deepEqual(
      own.map(([n]) => n),
      ['Content-Type', 'Ringer-Signature', 'Ringer-Delivery'],
    );
    assert.equal(own[0]?.[1], 'application/x-www-form-urlencoded');
    assert.equal(own[1]?.[1], expected(url, got.body));
    assert.match(own[2]?.[1] ?? '', /^rd_[A-Za-z0-9]{24}$/);
    // The form goes out in the fixture's order: the sorting is the signature's, not the body's.
    assert.deepEqual([...new URLSearchParams(got.body).keys()], ['Kind', 'CallId', 'To', 'From', 'Note', 'Area']);
    assert.equal(new URLSearchParams(got.body).get('Note'), 'a b+c');
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});

test('check judges a receiver of a declared canonical scheme: a right one passes, one signing the parameters unsorted fails valid, told to sort them', async () => {
  const dir = project();
  const env = { TEAM_SECRET: SECRET };
  const right = await hookdrill(['check', '--url', `http://127.0.0.1:${await freePort()}/`, ...receiver(dir), '--json'], env, [], dir);
  assert.equal(right.code, 0, right.stdout.slice(0, 3000) + right.stderr);
  const cases = (JSON.parse(right.stdout) as { cases: { name: string; status: string; observed?: string }[] }).cases;
  for (const name of ['valid', 'duplicate', 'wrong-secret', 'flipped-byte', 'missing-signature', 'malformed-signature'])
    assert.equal(cases.find((c) => c.name === name)?.status, 'pass', name);
  assert.match(cases.find((c) => c.name === 'reserialized')?.observed ?? '', /signs the form's parameters as it parses them/);

  const unsorted = await hookdrill(
    ['check', '--url', `http://127.0.0.1:${await freePort()}/`, ...receiver(dir, 'twilio-unsorted'), '--only', 'valid'],
    env,
    [],
    dir,
  );
  assert.equal(unsorted.code, 1, unsorted.stdout + unsorted.stderr);
  assert.match(unsorted.stdout, /FAIL valid/);
  assert.match(unsorted.stdout, /only when the form's parameters arrive sorted by name/);
});

test('a canonical scheme declared wrong is one line naming the fault, exit 2', async () => {
  const sig = ringer.signature;
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ signature: { ...sig, content: '{url}' } }, /providers\.ringer\.signature\.content: must hold \{params\} exactly once/],
    [
      { signature: { ...sig, content: '{url}{body}' } },
      /providers\.ringer\.signature\.content: a canonical scheme signs the form's parameters/,
    ],
    [
      { signature: { ...sig, content: '{timestamp}{url}{params}' } },
      /signature\.content: may name \{url\} and \{params\} only, not \{timestamp\}/,
    ],
    [
      { signature: { ...sig, param: '{name}=' } },
      /providers\.ringer\.signature\.param: must hold \{name\} and \{value\} exactly once each/,
    ],
    [{ signature: { ...sig, key: 'whsec' } }, /providers\.ringer\.signature\.key: must be one of utf8, base64/],
    [{ signature: { ...sig, value: 'v1={signature}' } }, /providers\.ringer\.signature\.value: unknown field/],
    [
      { timestamp: { header: 'Ringer-Time' } },
      /providers\.ringer\.timestamp: a canonical scheme signs the URL and the parameters, no time/,
    ],
    [{ contentType: 'application/json' }, /providers\.ringer\.contentType: a canonical scheme signs a form's parameters/],
    [
      { signature: { ...sig, scheme: 'canonicl' } },
      /providers\.ringer\.signature\.scheme: must be one of hmac, token, bearer, basic, body, canonical/,
    ],
  ];
  for (const [change, message] of bad) {
    const r = await hookdrill(['profiles'], {}, [], project({ ...ringer, ...change }));
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});
