import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { verifyRequest } from '@contentful/node-apps-toolkit';
import { declareProvider } from '../src/providers/index.js';
import { hookdrill } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { PYTHON } from './helpers/python.js';
import { startServer } from './helpers/server.js';
import { tempDir } from './helpers/tmp.js';
import { PY } from './helpers/verdicts.js';

// A team whose platform signs as Contentful does — the method, the path posted to, the headers a
// header of its own lists, and the body (issue 55) — declares it on the canonical scheme's request
// form: folio, with Contentful's own header names and an id header of its own (Folio-Delivery,
// signed among the listed ones). What `send` puts on the wire is judged by Contentful's own
// verifier, @contentful/node-apps-toolkit's verifyRequest, and `check` by Python receivers
// (webhook_receiver.py --provider folio, on contentful_scheme.py): right, or signing the body
// alone, or taking no time, or verifying over the path a proxy rewrote.
// The toolkit takes a 64-character secret (its SecretValidator), as Contentful's signing secrets are.
const SECRET = 'folio_signing_secret_'.padEnd(64, '0123456789abcdef');

const folio = {
  title: 'Folio',
  signature: {
    scheme: 'canonical',
    header: 'X-Contentful-Signature',
    algorithm: 'sha256',
    encoding: 'hex',
    content: '{method}\n{path}\n{headers}\n{body}',
    signedHeaders: 'X-Contentful-Signed-Headers',
  },
  timestamp: { header: 'X-Contentful-Timestamp', unit: 'ms', tolerance: '30s' },
  id: { header: 'Folio-Delivery', prefix: 'fd_' },
  eventType: { header: 'X-Contentful-Topic' },
  timeout: '30s',
  retries: ['1m', '5m'],
  fixtures: 'webhooks',
  fixture: 'Entry.publish',
};

function project(declaration: Record<string, unknown> = folio): string {
  const dir = tempDir();
  writeFileSync(
    join(dir, 'hookdrill.config.json'),
    JSON.stringify({ provider: 'folio', secretEnv: 'TEAM_SECRET', providers: { folio: declaration } }),
  );
  mkdirSync(join(dir, 'webhooks'));
  writeFileSync(
    join(dir, 'webhooks', 'Entry.publish.json'),
    JSON.stringify({ sys: { id: '5KsDBWseXY6QegucYAoacS', type: 'Entry', version: 3 }, fields: { title: { 'en-US': 'Hello, World!' } } }),
  );
  return dir;
}

/** The request's headers as the toolkit takes them: a string each. */
function stringHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

function receiver(dir: string, flaw = '', publicUrl = ''): string[] {
  const store = join(dir, `stored${flaw}${publicUrl ? '-proxied' : ''}.txt`);
  const own = `${flaw ? ` --flaw ${flaw}` : ''}${publicUrl ? ` --public-url ${publicUrl}` : ''}`;
  return [
    '--receiver',
    `${PYTHON} ${PY} serve --provider folio --secret ${SECRET} --port "$PORT" --store ${store}${own}`,
    '--stored',
    `${PYTHON} ${PY} ids --store ${store}`,
  ];
}

test("send signs a declared request form over the method, the path with its query, the listed headers and the body: Contentful's verifyRequest accepts it", async () => {
  const server = await startServer((_req, res) => {
    res.end();
  });
  try {
    const path = '/hooks/cms?space=a b&env=master';
    const r = await hookdrill(
      ['send', '--url', `http://127.0.0.1:${server.port}${path}`, '--no-retry'],
      { TEAM_SECRET: SECRET },
      [],
      project(),
    );
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.ok(!`${r.stdout}${r.stderr}`.includes(SECRET), 'the secret is not printed');
    const got = server.requests[0];
    assert.ok(got, 'one request');
    const h = got.headers;
    assert.equal(h['x-contentful-signed-headers'], 'folio-delivery,x-contentful-signed-headers,x-contentful-timestamp,x-contentful-topic');
    assert.match(String(h['x-contentful-timestamp']), /^\d{13}$/);
    assert.equal(h['x-contentful-topic'], 'Entry.publish');
    assert.match(String(h['folio-delivery']), /^fd_/);
    const request = { method: 'POST' as const, path: got.path, headers: stringHeaders(h), body: got.rawBody.toString('utf8') };
    assert.equal(verifyRequest(SECRET, request), true, 'verifyRequest accepts what send signed');
    // Each part is bound: another path, a signed header changed, another body, another secret.
    assert.equal(verifyRequest(SECRET, { ...request, path: '/hooks/cms' }), false, 'the query is signed');
    assert.equal(verifyRequest(SECRET, { ...request, headers: { ...request.headers, 'x-contentful-topic': 'Entry.delete' } }), false);
    assert.equal(verifyRequest(SECRET, { ...request, body: request.body.replace('Hello', 'Hallo') }), false);
    assert.equal(verifyRequest(SECRET.replace('f', 'g'), request), false);
  } finally {
    await server.close();
  }
});

test("hookdrill's own verify (listen's) holds the request form as the toolkit does: a signed header changed is refused, an unsigned one is not; the path, the time, the list", () => {
  const p = declareProvider('folio', folio as Parameters<typeof declareProvider>[1]);
  const url = 'https://cms.example.com/webhooks/folio?space=a%20b';
  const body = Buffer.from('{"sys":{"id":"e1","type":"Entry"}}');
  const now = Date.parse('2026-12-07T01:00:00Z');
  const sent = p.sign(body, [SECRET], { nowMs: now, deliveryId: 'fd_1', eventType: 'Entry.publish', url });
  const headers = Object.fromEntries(Object.entries(sent).map(([k, v]) => [k.toLowerCase(), v]));
  const verify = (h: Record<string, string>, o: { url?: string; nowMs?: number } = {}) =>
    p.verify(body, h, [SECRET], { url, nowMs: now + 1000, ...o });
  assert.doesNotThrow(() => verify(headers));
  const asToolkit = { method: 'POST' as const, path: '/webhooks/folio?space=a%20b', headers, body: body.toString('utf8') };
  assert.equal(verifyRequest(SECRET, asToolkit, 0), true, 'the toolkit agrees');
  assert.doesNotThrow(() => verify({ ...headers, 'user-agent': 'changed in transit' }), 'a header not listed is not signed');
  assert.throws(() => verify({ ...headers, 'x-contentful-topic': 'Entry.delete' }), /does not match/);
  assert.throws(() => verify({ ...headers, 'folio-delivery': 'fd_2' }), /does not match/);
  // Dropping a header from the list leaves it unsigned, and the list itself is signed: refused.
  const shorter = { ...headers, 'x-contentful-signed-headers': 'x-contentful-signed-headers,x-contentful-timestamp' };
  assert.throws(() => verify(shorter), /does not match/);
  assert.throws(() => verify(headers, { url: 'https://cms.example.com/webhooks/folio' }), /does not match/);
  assert.throws(() => verify(headers, { nowMs: now + 30_000 }), /30s old, beyond the 30s tolerance/);
  assert.throws(() => verify(headers, { nowMs: now - 31_000 }), /in the future/);
  const { 'x-contentful-signed-headers': _, ...unlisted } = headers;
  assert.throws(() => verify(unlisted), /missing X-Contentful-Signed-Headers/);
});

test('check judges a receiver of a declared request form: a right one passes, and each wrong one fails the case its flaw invites', async () => {
  const dir = project();
  const env = { TEAM_SECRET: SECRET };
  const run = async (flaw: string, extra: string[] = [], publicUrl = '') =>
    hookdrill(
      ['check', '--url', `http://127.0.0.1:${await freePort()}/cms/hook`, ...receiver(dir, flaw, publicUrl), '--json', ...extra],
      env,
      [],
      dir,
    );
  const cases = (r: { stdout: string }) =>
    (JSON.parse(r.stdout) as { cases: { name: string; status: string; diagnosis?: string }[] }).cases;
  const failed = (r: { stdout: string }) =>
    cases(r)
      .filter((c) => c.status === 'fail')
      .map((c) => c.name);
  const why = (r: { stdout: string; stderr: string }) =>
    r.stdout.startsWith('{')
      ? cases(r)
          .filter((c) => c.status === 'fail')
          .map((c) => `${c.name}: ${c.diagnosis ?? ''}`)
          .join('\n')
      : r.stdout + r.stderr;

  const right = await run('');
  assert.equal(right.code, 0, why(right));
  for (const name of ['valid', 'duplicate', 'wrong-secret', 'flipped-byte', 'stale-timestamp', 'missing-signature', 'malformed-signature'])
    assert.equal(cases(right).find((c) => c.name === name)?.status, 'pass', name);

  const bodyOnly = await run('signed-headers-ignored');
  assert.equal(bodyOnly.code, 1, why(bodyOnly));
  assert.ok(failed(bodyOnly).includes('valid'), failed(bodyOnly).join(', '));

  const noTime = await run('accepts-stale');
  assert.equal(noTime.code, 1, why(noTime));
  assert.deepEqual(failed(noTime), ['stale-timestamp']);

  // Behind a proxy: the sender posts to https://cms.example.com/webhooks/folio, the proxy
  // forwards to /cms/hook. A receiver verifying over the path it was given fails valid.
  const PUBLIC = 'https://cms.example.com/webhooks/folio';
  const publicUrl = ['--public-url', PUBLIC, '--only', 'valid'];
  const proxied = await run('', publicUrl, PUBLIC);
  assert.equal(proxied.code, 0, why(proxied));
  const rewritten = await run('url-from-host', publicUrl, PUBLIC);
  assert.equal(rewritten.code, 1, why(rewritten));
  assert.deepEqual(failed(rewritten), ['valid']);
});

test('a request form declared wrong is one line naming the fault, exit 2', async () => {
  const sig = folio.signature;
  const bad: [Record<string, unknown>, RegExp][] = [
    [{ signature: { ...sig, content: '{method}\n{path}\n{headers}' } }, /providers\.folio\.signature\.content: must hold \{body\} once/],
    [{ signature: { ...sig, content: '{method}\n{path}\n{body}' } }, /providers\.folio\.signature\.content: must hold \{headers\} once/],
    [
      { signature: { ...sig, content: '{url}\n{headers}\n{body}' } },
      /signature\.content: a request's canonical string may name \{method\}, \{path\}, \{headers\} and \{body\} only, not \{url\}/,
    ],
    [{ signature: { ...sig, signedHeaders: undefined } }, /providers\.folio\.signature\.signedHeaders: name the header that lists/],
    [
      { signature: { ...sig, headerPair: '{name}=' } },
      /providers\.folio\.signature\.headerPair: must hold \{name\} and \{value\} exactly once each/,
    ],
    [{ signature: { ...sig, headerJoin: '' } }, /providers\.folio\.signature\.headerJoin: must be a non-empty string/],
    [{ signature: { ...sig, param: '{name}{value}' } }, /providers\.folio\.signature\.param: unknown field/],
    [
      { timestamp: { header: 'X-Contentful-Timestamp', unit: 'rfc3339' } },
      /providers\.folio\.timestamp\.unit: a signed header of the request form is Unix s or ms/,
    ],
  ];
  for (const [change, message] of bad) {
    const r = await hookdrill(['profiles'], {}, [], project({ ...folio, ...change }));
    assert.equal(r.code, 2, r.stdout + r.stderr);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  }
});
