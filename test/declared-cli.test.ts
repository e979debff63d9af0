import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildProgram } from '../src/cli.js';
import { allProviders, getProvider } from '../src/providers/index.js';
import { hookdrill } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { spawnHookdrill } from './helpers/spawned.js';
import { PY } from './helpers/verdicts.js';
import { PYTHON } from './helpers/python.js';
import { tempDir } from './helpers/tmp.js';
import { ACME_DECLARATION } from './helpers/acme.js';

// A team whose own platform sends webhooks declares its scheme in the project file, and gets send,
// listen, check and chaos for it. The receivers are Python's (test/receivers/webhook_receiver.py,
// --provider acme), written to the scheme as the team's docs would state it, right or wrong.
const SECRET = 'acme-signing-secret';
const ACME = {
  ...ACME_DECLARATION,
  headers: { 'User-Agent': 'Acme-Webhooks/2.1' },
  fixtures: 'webhooks',
  fixture: 'payment.succeeded',
};

function project(declaration: unknown = ACME): string {
  const dir = tempDir();
  writeFileSync(
    join(dir, 'hookdrill.config.json'),
    JSON.stringify({ provider: 'acme', secretEnv: 'ACME_SECRET', providers: { acme: declaration } }),
  );
  mkdirSync(join(dir, 'webhooks'));
  writeFileSync(
    join(dir, 'webhooks', 'payment.succeeded.json'),
    JSON.stringify({ type: 'payment.succeeded', data: { id: 'pay_1', amount: 4200, currency: 'eur', customer: 'Zoë Ørsted' } }, null, 2),
  );
  writeFileSync(join(dir, 'webhooks', 'payment.refunded.json'), JSON.stringify({ type: 'payment.refunded', data: { id: 'pay_1' } }));
  return dir;
}

const env = { ACME_SECRET: SECRET };

function receiver(dir: string, flaw = ''): string[] {
  const store = join(dir, `stored${flaw}.txt`);
  return [
    '--receiver',
    `${PYTHON} ${PY} serve --provider acme --secret ${SECRET} --port "$PORT" --store ${store}${flaw ? ` --flaw ${flaw}` : ''}`,
    '--stored',
    `${PYTHON} ${PY} ids --store ${store}`,
  ];
}

test('a provider declared in the project file: profiles and fixtures list it, listen verifies what send signs, a wrong secret is refused', async () => {
  const dir = project();
  const profiles = await hookdrill(['profiles'], {}, [], dir);
  assert.equal(profiles.code, 0, profiles.stderr);
  assert.match(profiles.stdout, /Acme Payments \(declared in hookdrill\.config\.json\): 10s timeout; retries after 30s, 5m, 1h/);
  const fixtures = await hookdrill(['fixtures', 'acme'], {}, [], dir);
  assert.equal(fixtures.code, 0, fixtures.stderr);
  assert.match(fixtures.stdout, /acme\/payment\.refunded\nacme\/payment\.succeeded\n/);
  assert.match(fixtures.stdout, /acme: 2 \(from webhooks\/, declared in hookdrill\.config\.json\)/);

  const inbox = join(dir, 'inbox.db');
  const listen = spawnHookdrill(
    ['listen', '--json', '--port', '0', '--provider', 'acme', '--secret', SECRET, '--inbox', inbox, '--no-worker'],
    {},
    [],
    dir,
  );
  try {
    const ready = await listen.waitFor((l) => l.event === 'ready', 15_000);
    const sent = await hookdrill(['send', 'payment.succeeded', 'payment.refunded', '--url', String(ready.url), '--json'], env, [], dir);
    assert.equal(sent.code, 0, sent.stdout + sent.stderr);
    const result = JSON.parse(sent.stdout) as { provider: string; deliveries: { deliveryId: string; eventType: string }[] };
    assert.equal(result.provider, 'acme');
    await listen.waitFor((l) => l.event === 'request' && listen.lines.filter((x) => x.result === 'stored').length === 2);
    const stored = listen.lines.filter((l) => l.result === 'stored');
    assert.deepEqual(
      stored.map((l) => [l.deliveryId, l.eventType]),
      result.deliveries.map((d) => [d.deliveryId, d.eventType]),
      'keyed by the Acme-Delivery header, typed by the body',
    );
    const wrong = await hookdrill(['send', '--url', String(ready.url), '--secret', 'not-it', '--no-retry'], {}, [], dir);
    assert.equal(wrong.code, 1);
    const refused = await listen.waitFor((l) => l.event === 'request' && l.result === 'rejected');
    assert.match(String(refused.reason), /Acme-Signature does not match the body for any secret/);
  } finally {
    listen.child.kill('SIGTERM');
    await listen.exit;
  }
});

test('check judges a receiver of a declared scheme: a right one passes, one without a timestamp check fails stale-timestamp; chaos passes the right one', async () => {
  const dir = project();
  const right = await hookdrill(['check', '--url', `http://127.0.0.1:${await freePort()}/`, ...receiver(dir), '--json'], env, [], dir);
  assert.equal(right.code, 0, right.stdout.slice(0, 2000) + right.stderr);
  const cases = (JSON.parse(right.stdout) as { cases: { name: string; status: string }[] }).cases;
  assert.deepEqual(
    cases.filter((c) => c.status === 'fail'),
    [],
  );
  // What the scheme has not (one signature, no endpoint check, no forms, no time of its own in the
  // fixture for a late retry to age) is skipped; the rest is judged.
  assert.deepEqual(
    cases.filter((c) => c.status === 'skipped').map((c) => c.name),
    [
      'batch',
      'redelivered',
      'answer',
      'late-retry',
      'empty-batch',
      'forged-check',
      'related',
      'subscription-confirmation',
      'forged-confirmation',
      'forged-certificate',
      // Its secret is no field of each event of a batch (Graph's clientState, issue 55).
      'forged-item',
      // An HMAC scheme sends no JWT: its claims are not judged.
      'wrong-audience',
      'expired-token',
      'future-token',
      'wrong-issuer',
      'forged-kid',
      'alg-none',
      'alg-hs256',
      'rotation',
      'other-schemes',
      'legacy-signature',
      'url-verification',
      'ping',
      'probe-401',
      'form-encoded',
      'first-seen-retry',
      // Twilio's JSON bodies, signed through bodySHA256 in the URL (issue 55).
      'json-body-hash',
    ],
  );

  const stale = await hookdrill(
    ['check', '--url', `http://127.0.0.1:${await freePort()}/`, ...receiver(dir, 'accepts-stale')],
    env,
    [],
    dir,
  );
  assert.equal(stale.code, 1, stale.stdout + stale.stderr);
  assert.match(stale.stdout, /✗ stale-timestamp: your receiver accepts a signature 6 minutes old/);

  const chaos = await hookdrill(['chaos', '--url', `http://127.0.0.1:${await freePort()}/`, ...receiver(dir), '--json'], env, [], dir);
  assert.equal(chaos.code, 0, chaos.stdout.slice(0, 2000) + chaos.stderr);
  const verdict = JSON.parse(chaos.stdout) as { ok: boolean; provider: string; rounds: { lost: unknown[] }[] };
  assert.equal(verdict.provider, 'acme');
  assert.equal(verdict.ok, true);
});

test("a declared window wider than 6 minutes: check's timestamp cases sign outside it, so a right two-sided receiver passes both and one that keeps no future side fails", async () => {
  // The team's docs: timestamps more than 10 minutes from now, either way, are refused.
  const dir = project({ ...ACME, timestamp: { tolerance: '10m' } });
  const run = async (flaw = '') => {
    const r = await hookdrill(
      [
        'check',
        '--url',
        `http://127.0.0.1:${await freePort()}/`,
        '--only',
        'valid,stale-timestamp,future-timestamp',
        '--json',
        ...receiver(dir, flaw).map((a) => a.replace(' serve ', ' serve --tolerance 600 ')),
      ],
      env,
      [],
      dir,
    );
    return JSON.parse(r.stdout) as { cases: { name: string; status: string; diagnosis?: string }[] };
  };
  const right = await run();
  assert.deepEqual(
    right.cases.filter((c) => c.status !== 'skipped').map((c) => [c.name, c.status]),
    [
      ['valid', 'pass'],
      ['stale-timestamp', 'pass'],
      ['future-timestamp', 'pass'],
    ],
    JSON.stringify(right.cases),
  );
  const oneSided = await run('future-accepted');
  const future = oneSided.cases.find((c) => c.name === 'future-timestamp');
  assert.equal(future?.status, 'fail', JSON.stringify(oneSided.cases));
  assert.match(future?.diagnosis ?? '', /11 minutes in the future.*both sides of the 10-minute window/);
});

test('a declaration at fault is one line naming its field, exit 2, for every command that takes the provider', async () => {
  const dir = project({ ...ACME, signature: { ...ACME.signature, algorithm: 'md5' } });
  for (const args of [
    ['send', '--url', 'http://127.0.0.1:1/'],
    ['listen', '--provider', 'acme', '--secret', 's', '--port', '0'],
  ]) {
    const r = await hookdrill(args, env, [], dir, 20_000);
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /hookdrill\.config\.json: providers\.acme\.signature\.algorithm: must be one of sha1, sha256, sha512/);
  }
  const builtin = project();
  writeFileSync(join(builtin, 'hookdrill.config.json'), JSON.stringify({ providers: { stripe: ACME } }));
  const r = await hookdrill(['send', '--provider', 'stripe', '--url', 'http://127.0.0.1:1/', '--secret', 's'], {}, [], builtin);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /providers\.stripe: stripe is built in; give the provider a name of its own/);
  // A credential in a fixed header is refused: the file is committed and shared.
  writeFileSync(
    join(builtin, 'hookdrill.config.json'),
    JSON.stringify({ providers: { acme: { ...ACME, headers: { Authorization: 'Bearer abc.def' } } } }),
  );
  // profiles and fixtures list every provider: one missing for a fault in its declaration is said, not left out.
  for (const command of ['profiles', 'fixtures']) {
    const listed = await hookdrill([command], {}, [], builtin);
    assert.equal(listed.code, 2, listed.stdout);
    assert.match(
      listed.stderr,
      /^hookdrill: hookdrill\.config\.json: providers\.acme\.headers\.Authorization holds a credential; leave it out \(the file is shared\)\n$/,
    );
    assert.doesNotMatch(listed.stderr, /abc\.def/);
  }
});

test("one process, three project files (a test suite's, the library's): each read replaces the last — its providers, or its fault", () => {
  const bad = project({ ...ACME, timeout: 'soon' });
  const good = project();
  const none = tempDir();
  buildProgram({ cwd: bad });
  assert.throws(() => allProviders(), /providers\.acme\.timeout: "soon" is not a duration/);
  buildProgram({ cwd: good });
  assert.equal(getProvider('acme').title, 'Acme Payments', 'the fault of the file before is gone');
  assert.ok(allProviders().some((p) => (p.name as string) === 'acme'));
  buildProgram({ cwd: none });
  assert.throws(() => getProvider('acme'), /unknown provider "acme"/, 'nor do its providers stay');
});

test('a declared fixtures folder that is not there is one line naming providers.acme.fixtures and the path, exit 2 — not "acme: 0"', async () => {
  const dir = project({ ...ACME, fixtures: 'hooks' });
  for (const args of [['fixtures'], ['fixtures', '--provider', 'acme'], ['send', '--url', 'http://127.0.0.1:1/']]) {
    const r = await hookdrill(args, env, [], dir, 20_000);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stdout}${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /^hookdrill: hookdrill\.config\.json: providers\.acme\.fixtures: no folder .*\/hooks\b/, args.join(' '));
  }
  // A file where the folder should be is no better.
  writeFileSync(join(dir, 'hooks'), '{}');
  const file = await hookdrill(['fixtures'], env, [], dir, 20_000);
  assert.equal(file.code, 2, file.stdout);
  assert.match(file.stderr, /providers\.acme\.fixtures: .*\/hooks is not a folder/);
});
