import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { declareProvider } from '../src/providers/index.js';
import { checkKeyMaterial } from '../src/providers/key-material.js';
import { UsageError } from '../src/util/errors.js';
import { hookdrill } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { spawnHookdrill } from './helpers/spawned.js';
import { PYTHON } from './helpers/python.js';
import { tempDir } from './helpers/tmp.js';
import { until } from './helpers/until.js';

// A team whose platform authenticates its notifications as Microsoft Graph does (issue 55)
// declares it: the secret it subscribed with is the clientState of each notification of the batch
// {"value": [...]}, sent as it is, nothing signed; a notification with a wrong one is discarded
// and the request still answered 202 (learn.microsoft.com/graph/change-notifications-delivery-webhooks,
// "Process the change notification"). check is held to a Python receiver written to it
// (test/receivers/graph_scheme.py): discarding a forgery with a 202 passes wrong-secret, judged by
// its store, where a 4xx was demanded before; keeping the forgery fails it, told why.
const SECRET = 'notify-client-state-7Hq2';
const PY = fileURLToPath(new URL('../../test/receivers/graph_scheme.py', import.meta.url));

const notify = {
  title: 'Notify',
  signature: { scheme: 'field', field: 'value.*.clientState', forged: 'discard' },
  id: { body: 'value.0.resourceData.id' },
  eventType: { body: 'value.0.changeType' },
  timeout: '3s',
  retries: ['1m', '5m'],
  fixtures: 'webhooks',
  fixture: 'created',
  handshake: { name: 'endpoint validation', challenge: { query: 'validationToken' }, answer: 'text', within: '10s' },
};

// The shape of Graph's example notification of a new message (the docs' "Change notification example").
const created = {
  value: [
    {
      subscriptionId: '7f105c7d-2dc5-4530-97cd-4e7ae6534c07',
      subscriptionExpirationDateTime: '2026-12-09T18:23:45.9356913Z',
      changeType: 'created',
      resource: 'Users/8f1c9a3e-2b1d-4c5e-9f00-1a2b3c4d5e6f/Messages/AAMkAGUwNjQ4ZjIxAAA=',
      resourceData: {
        '@odata.type': '#Microsoft.Graph.Message',
        '@odata.id': 'Users/8f1c9a3e-2b1d-4c5e-9f00-1a2b3c4d5e6f/Messages/AAMkAGUwNjQ4ZjIxAAA=',
        '@odata.etag': 'W/"CQAAABYAAADkrWGo7bouTKlsgTZMr9KwAAAUWRHf"',
        id: 'AAMkAGUwNjQ4ZjIxAAA=',
      },
      tenantId: '84bd8158-6d4d-4958-8b9f-9d6445542f95',
    },
  ],
};

function project(declared: Record<string, unknown> = notify): string {
  const dir = tempDir();
  writeFileSync(
    join(dir, 'hookdrill.config.json'),
    JSON.stringify({ provider: 'notify', secretEnv: 'TEAM_SECRET', providers: { notify: declared } }),
  );
  mkdirSync(join(dir, 'webhooks'));
  writeFileSync(join(dir, 'webhooks', 'created.json'), JSON.stringify(created));
  return dir;
}

const CASES =
  'valid,wrong-secret,missing-signature,malformed-signature,wrong-length-signature,flipped-byte,url-verification,unsigned-flood';

const check = async (dir: string, flaw = '', stored = true) => {
  const store = join(dir, `stored${flaw}.txt`);
  const r = await hookdrill(
    [
      'check',
      '--url',
      `http://127.0.0.1:${await freePort()}/notifications`,
      '--json',
      '--only',
      CASES,
      '--receiver',
      `${PYTHON} ${PY} serve --secret ${SECRET} --port "$PORT" --store ${store}${flaw ? ` --flaw ${flaw}` : ''}`,
      ...(stored ? ['--stored', `${PYTHON} ${PY} ids --store ${store}`] : []),
    ],
    { TEAM_SECRET: SECRET },
    [],
    dir,
  );
  const cases = (JSON.parse(r.stdout) as { cases: { name: string; status: string; observed: string; diagnosis?: string }[] }).cases;
  return { r, of: (name: string) => cases.find((c) => c.name === name) };
};

test('a declared field scheme: a receiver that compares each clientState and discards a forgery with 202 passes every refusal, judged by its store', async () => {
  const { r, of } = await check(project());
  for (const name of [
    'valid',
    'wrong-secret',
    'missing-signature',
    'malformed-signature',
    'wrong-length-signature',
    'url-verification',
    'unsigned-flood',
  ])
    assert.equal(of(name)?.status, 'pass', `${name}: ${r.stdout}`);
  assert.match(of('wrong-secret')?.observed ?? '', /^202, nothing stored: discarded, as Notify asks/);
  assert.match(of('unsigned-flood')?.observed ?? '', /^200 answered 2xx, 0 stored: discarded/);
  // Nothing of the body is signed: a changed body under the right clientState is rightly taken.
  assert.equal(of('flipped-byte')?.status, 'skipped', r.stdout);
  assert.match(
    of('flipped-byte')?.observed ?? '',
    /sends a shared secret in value\.\*\.clientState \(a field of the body\), not a signature/,
  );
});

test('a declared field scheme: a receiver that refuses a wrong clientState with 403 passes too (nothing kept)', async () => {
  const { r, of } = await check(project(), 'refuse-403');
  for (const name of ['valid', 'wrong-secret', 'missing-signature']) assert.equal(of(name)?.status, 'pass', `${name}: ${r.stdout}`);
  assert.match(of('wrong-secret')?.observed ?? '', /^403, nothing stored/);
});

test("a declared field scheme: a receiver that never compares clientState keeps the forgery and fails wrong-secret, though its 202 is Graph's answer", async () => {
  const { r, of } = await check(project(), 'unchecked');
  assert.equal(of('valid')?.status, 'pass', r.stdout);
  const c = of('wrong-secret');
  assert.equal(c?.status, 'fail', r.stdout);
  assert.match(c?.observed ?? '', /^202, but STORED /);
  assert.match(c?.diagnosis ?? '', /keeps a forged delivery: a 2xx is right .* compare value\.\*\.clientState with your secret/);
  // The flood needs wrong-secret passed: one finding, not two.
  assert.equal(of('unsigned-flood')?.status, 'skipped', r.stdout);
  assert.equal(r.code, 1, r.stderr);
});

test('a declared field scheme with no store to look at: a 202 to a forgery is neither a pass nor a fail, and says what would tell', async () => {
  const { r, of } = await check(project(), '', false);
  const c = of('wrong-secret');
  assert.equal(c?.status, 'warn', r.stdout);
  assert.match(c?.diagnosis ?? '', /seen only in the store: give --stored or --inbox/);
});

test('a declared field scheme that refuses (the default): a 202 to a forgery is a fail, as for any scheme', async () => {
  const { signature: _, ...rest } = notify;
  const { r, of } = await check(project({ ...rest, signature: { scheme: 'field', field: 'value.*.clientState' } }));
  assert.equal(of('valid')?.status, 'pass', r.stdout);
  assert.equal(of('wrong-secret')?.status, 'fail', r.stdout);
});

test('a wrong field declaration is one line naming the field, exit 2', async () => {
  for (const [signature, field] of [
    [{ scheme: 'field', field: 'value.*' }, /providers\.notify\.signature\.field: "value\.\*" ends at the list/],
    [{ scheme: 'field', field: 'value.*.items.*.clientState' }, /providers\.notify\.signature\.field: .* at most one \*/],
    [{ scheme: 'field', field: 'value.*.clientState', forged: 'ignore' }, /providers\.notify\.signature\.forged: must be refuse/],
    [{ scheme: 'field', field: 'value.*.clientState', header: 'X-State' }, /providers\.notify\.signature\.header: unknown field/],
  ] as const) {
    const r = await hookdrill(['send', '--url', 'http://127.0.0.1:9/'], { TEAM_SECRET: SECRET }, [], project({ ...notify, signature }));
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, field);
  }
});

test("listen takes a notification whose every clientState is the secret, and refuses (401) one with a forged or missing clientState, where a sender's whole request is judged", async () => {
  const dir = project();
  const listen = spawnHookdrill(
    ['listen', '--json', '--port', '0', '--provider', 'notify', '--secret', SECRET, '--inbox', join(dir, 'inbox.db'), '--no-worker'],
    {},
    [],
    dir,
  );
  try {
    const ready = await listen.waitFor((l) => l.event === 'ready', 15_000);
    const item = created.value[0] as (typeof created.value)[0];
    const post = (items: object[]) =>
      fetch(String(ready.url), {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ value: items }),
      });
    const right = await post([{ ...item, clientState: SECRET }]);
    assert.ok(right.status >= 200 && right.status < 300, String(right.status));
    const stored = await listen.waitFor((l) => l.event === 'request' && l.status === right.status);
    // One forged item among right ones: the request as a whole is not the sender's.
    const mixed = await post([
      { ...item, clientState: SECRET },
      { ...item, clientState: 'guessed' },
    ]);
    assert.equal(mixed.status, 401);
    const missing = await post([{ ...item }]);
    assert.equal(missing.status, 401);
    assert.notEqual(stored.result, 'challenge');
  } finally {
    listen.child.kill('SIGTERM');
    await listen.exit;
  }
});

/** graph_scheme.py serving on a free port, storing the resourceData ids of the notifications whose clientState is the secret. */
async function app(store: string): Promise<{ url: string; ids: () => string[]; stop: () => void }> {
  const port = await freePort();
  const child = spawn(PYTHON, [PY, 'serve', '--secret', SECRET, '--port', String(port), '--store', store], { stdio: 'ignore' });
  const url = `http://127.0.0.1:${port}/notifications`;
  await until(
    () =>
      fetch(url, { method: 'POST', body: '{}' }).then(
        () => true,
        () => false,
      ),
    `graph_scheme.py on ${port}`,
  );
  return {
    url,
    ids: () => (existsSync(store) ? readFileSync(store, 'utf8').split('\n').filter(Boolean) : []),
    stop: () => child.kill('SIGKILL'),
  };
}

test('listen keeps a notification without its clientState (the secret), and writes it back as it forwards and replays: the app behind it, which compares clientState, stores it', async () => {
  const dir = project();
  const inbox = join(dir, 'inbox.db');
  const forwarded = await app(join(dir, 'forwarded.txt'));
  const replayed = await app(join(dir, 'replayed.txt'));
  const listen = spawnHookdrill(
    [
      'listen',
      '--json',
      '--port',
      '0',
      '--provider',
      'notify',
      '--secret-env',
      'TEAM_SECRET',
      '--inbox',
      inbox,
      '--forward-to',
      forwarded.url,
    ],
    { TEAM_SECRET: SECRET },
    [],
    dir,
  );
  try {
    const ready = await listen.waitFor((l) => l.event === 'ready', 15_000);
    const item = created.value[0] as (typeof created.value)[0];
    const res = await fetch(String(ready.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ value: [{ ...item, clientState: SECRET }] }),
    });
    assert.equal(res.status, 200, await res.text());
    const id = item.resourceData.id;
    // The app took the forward: its clientState was the secret again.
    await until(() => forwarded.ids().includes(id), 'the forward at the app');

    // What inspect prints of the inbox holds no secret, the notification itself all there.
    const body = await hookdrill(['inspect', '--inbox', inbox, '--id', id, '--body'], {}, [], dir);
    assert.equal(body.code, 0, body.stderr);
    assert.ok(!body.stdout.includes(SECRET), `the stored body holds the secret: ${body.stdout}`);
    assert.equal((JSON.parse(body.stdout) as typeof created).value[0]?.resourceData.id, id);
    const rows = await hookdrill(['inspect', '--inbox', inbox, '--json', '--id', id], {}, [], dir);
    assert.ok(!rows.stdout.includes(SECRET), rows.stdout);

    // replay signs as the sender: the secret written into each item again.
    const replay = await hookdrill(
      ['replay', '--inbox', inbox, '--to', replayed.url, '--secret-env', 'TEAM_SECRET', '--id', id],
      { TEAM_SECRET: SECRET },
      [],
      dir,
    );
    assert.equal(replay.code, 0, replay.stdout + replay.stderr);
    assert.deepEqual(replayed.ids(), [id]);
  } finally {
    listen.child.kill('SIGTERM');
    await listen.exit;
    forwarded.stop();
    replayed.stop();
  }
});

test('the hostile battery on a field scheme: a blank secret is refused signing and verifying, verify never passes with one, and listen with an unset secret does not start', async () => {
  const p = declareProvider('notify-field', notify as Parameters<typeof declareProvider>[1]);
  for (const blank of ['', ' ', '\t\n'])
    for (const role of ['sign', 'verify'] as const)
      assert.throws(
        () => checkKeyMaterial(p, blank, role),
        (e: unknown) => e instanceof UsageError && /empty|whitespace/.test(e.message),
      );
  // An item whose clientState is the empty string: a caller who went round every gate is still refused.
  const body = Buffer.from(JSON.stringify({ value: [{ ...created.value[0], clientState: '' }] }));
  assert.throws(() => p.verify(body, {}, ['']), /no_secret|empty secret|no secret/);
  const listen = spawnHookdrill(
    ['listen', '--json', '--port', '0', '--provider', 'notify', '--secret', '', '--inbox', join(tempDir(), 'i.db')],
    {},
    [],
    project(),
  );
  assert.equal(await listen.exit, 2, listen.stderr());
  assert.equal(listen.stderr().trim().split('\n').length, 1, listen.stderr());
  assert.match(listen.stderr(), /empty/);
});
