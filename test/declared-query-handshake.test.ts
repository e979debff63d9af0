import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hookdrill } from './helpers/cli.js';
import { spawnHookdrill } from './helpers/spawned.js';
import { freePort } from './helpers/ports.js';
import { PYTHON } from './helpers/python.js';
import { tempDir } from './helpers/tmp.js';

// A team whose platform validates a notification URL as Microsoft Graph does (issue 55) declares
// it: before any event, a POST with `?validationToken=<token>` in the query and an empty body,
// nothing signed, answered 200 with the decoded token alone as text/plain
// (learn.microsoft.com/graph/change-notifications-delivery-webhooks). check is held to a Python
// receiver written to that declaration (test/receivers/graph_validation.py): right, it passes
// url-verification; echoing the token as JSON, still encoded, with its "+" kept, or refusing the
// unsigned validation, it fails with why.
const SECRET = 'notify-token-5Rk8Tq';
const PY = fileURLToPath(new URL('../../test/receivers/graph_validation.py', import.meta.url));

const notify = {
  title: 'Notify',
  signature: { scheme: 'token', header: 'X-Notify-Token' },
  id: { header: 'X-Notify-Id' },
  eventType: { body: 'changeType' },
  timeout: '3s',
  fixtures: 'webhooks',
  fixture: 'created',
  handshake: { name: 'endpoint validation', challenge: { query: 'validationToken' }, answer: 'text', within: '10s' },
};

function project(declared: Record<string, unknown> = notify): string {
  const dir = tempDir();
  writeFileSync(
    join(dir, 'hookdrill.config.json'),
    JSON.stringify({ provider: 'notify', secretEnv: 'TEAM_SECRET', providers: { notify: declared } }),
  );
  mkdirSync(join(dir, 'webhooks'));
  writeFileSync(join(dir, 'webhooks', 'created.json'), JSON.stringify({ changeType: 'created', resource: 'Users/8f1c', id: 7 }));
  return dir;
}

const check = async (dir: string, flaw = '') => {
  const store = join(dir, `stored${flaw}.txt`);
  const r = await hookdrill(
    [
      'check',
      '--url',
      `http://127.0.0.1:${await freePort()}/notifications`,
      '--json',
      '--only',
      'valid,wrong-secret,url-verification,forged-check',
      '--receiver',
      `${PYTHON} ${PY} serve --secret ${SECRET} --port "$PORT" --store ${store}${flaw ? ` --flaw ${flaw}` : ''}`,
      '--stored',
      `${PYTHON} ${PY} ids --store ${store}`,
    ],
    { TEAM_SECRET: SECRET },
    [],
    dir,
  );
  const cases = (JSON.parse(r.stdout) as { cases: { name: string; status: string; observed: string; diagnosis?: string }[] }).cases;
  return { r, of: (name: string) => cases.find((c) => c.name === name) };
};

test('a declared query handshake: a receiver echoing the decoded validationToken as text/plain passes url-verification; forged-check does not apply (nothing of it is signed)', async () => {
  const { r, of } = await check(project());
  for (const name of ['valid', 'wrong-secret', 'url-verification']) assert.equal(of(name)?.status, 'pass', `${name}: ${r.stdout}`);
  assert.match(of('url-verification')?.observed ?? '', /^200.*validationToken echoed decoded/);
  assert.equal(of('forged-check')?.status, 'skipped', r.stdout);
});

test('a declared query handshake: each wrong echo fails url-verification, told what Graph compares', async () => {
  for (const [flaw, why] of [
    ['json-token', /echoes endpoint validation's validationToken wrapped in JSON — Notify needs the decoded token alone/],
    ['encoded-token', /echoes endpoint validation's validationToken still URL-encoded \("Validation%3a\+Testing\+client\+a"…\)/],
    ['plus-kept', /decodes endpoint validation's validationToken but leaves each "\+" as it came \("Validation:\+Testing\+client\+app"…\)/],
    ['verify-first', /refuses Notify's endpoint validation \(401\) — it is an empty POST with \?validationToken=… and nothing signed/],
  ] as const) {
    const { r, of } = await check(project(), flaw);
    assert.equal(of('valid')?.status, 'pass', `${flaw}: ${r.stdout}`);
    const c = of('url-verification');
    assert.equal(c?.status, 'fail', `${flaw}: ${r.stdout}`);
    assert.match(c?.diagnosis ?? '', why, flaw);
  }
});

test("a handshake's own deadline: a validation answered after 4 s passes within Graph's 10 s, and fails where the declaration gives it the delivery's 3 s", async () => {
  const within = await check(project(), 'slow-validation');
  assert.equal(within.of('url-verification')?.status, 'pass', within.r.stdout);
  const { within: _, ...handshake } = notify.handshake;
  const tight = await check(project({ ...notify, handshake }), 'slow-validation');
  const c = tight.of('url-verification');
  assert.equal(c?.status, 'fail', tight.r.stdout);
  assert.match(c?.diagnosis ?? '', /does not answer Notify's endpoint validation within 3 s/);
});

test('listen answers a query validation as Graph asks — 200, text/plain, the token decoded — before verifying, and stores nothing for it', async () => {
  const dir = project();
  const listen = spawnHookdrill(
    ['listen', '--json', '--port', '0', '--provider', 'notify', '--secret', SECRET, '--inbox', join(dir, 'inbox.db'), '--no-worker'],
    {},
    [],
    dir,
  );
  try {
    const ready = await listen.waitFor((l) => l.event === 'ready', 15_000);
    const token = 'Validation: Testing client application reachability for subscription Request-Id: 25460109-0e8b-4521-8090-dd691b407ed8';
    // As a recorded validation arrived (abraunegg/onedrive docs/webhooks.md: nginx's log of Graph's POST).
    const res = await fetch(
      `${String(ready.url)}?validationToken=Validation%3a+Testing+client+application+reachability+for+subscription+Request-Id%3a+25460109-0e8b-4521-8090-dd691b407ed8`,
      { method: 'POST', headers: { 'content-type': 'text/plain; charset=utf-8' }, body: '' },
    );
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/plain\b/);
    assert.equal(await res.text(), token);
    const line = await listen.waitFor((l) => l.event === 'request' && l.result === 'challenge');
    assert.equal(line.status, 200);
    // Without the parameter, the same empty unsigned POST is a delivery like any other: refused.
    const bare = await fetch(String(ready.url), { method: 'POST', body: '' });
    assert.equal(bare.status, 401);
    // An empty parameter is no token to echo.
    const empty = await fetch(`${String(ready.url)}?validationToken=`, { method: 'POST', body: '' });
    assert.equal(empty.status, 401);
  } finally {
    listen.child.kill('SIGTERM');
    await listen.exit;
  }
});

test('a wrong query handshake declaration is one line naming the field, exit 2', async () => {
  for (const [handshake, field] of [
    [{ ...notify.handshake, challenge: { query: 'validation token' } }, /providers\.notify\.handshake\.challenge: expected a body field/],
    [
      { ...notify.handshake, challenge: { query: 'validationToken', in: 'url' } },
      /providers\.notify\.handshake\.challenge: expected a body field/,
    ],
    [{ ...notify.handshake, answer: 'json' }, /providers\.notify\.handshake\.answer: a query challenge is echoed as text/],
    [{ ...notify.handshake, within: 'soon' }, /providers\.notify\.handshake\.within: "soon" is not a duration/],
    [
      { ...notify.handshake, when: { body: 'type', value: 'validation' } },
      /providers\.notify\.handshake\.when: a query challenge is the request holding the parameter/,
    ],
  ] as const) {
    const r = await hookdrill(['send', '--url', 'http://127.0.0.1:9/'], { TEAM_SECRET: SECRET }, [], project({ ...notify, handshake }));
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, field);
  }
});
