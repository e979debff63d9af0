/**
 * check --route NAME (issue 56, item 4): the service a listen route forwards to, judged as a
 * receiver of listen's forwards — at the route's target URL, re-signed as listen re-signs (the
 * receive entry's secret), with X-Hookdrill-Source, -Delivery-Id and -Attempt, only the event types
 * the route takes, held to listen's forward timeout; what listen answers itself is skipped, saying
 * so. The targets are the Python receiver (test/receivers/webhook_receiver.py), right or wrong in
 * one way, started by check itself; the project file is a team's, with receive and routes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hookdrill } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { PYTHON } from './helpers/python.js';
import { tempDir } from './helpers/tmp.js';
import { OFFICIAL, PY } from './helpers/verdicts.js';
import type { CheckResult } from '../src/check/run.js';

const ENV = { GITHUB_WEBHOOK_SECRET: 'ci-route-github-secret-7Hq', STRIPE_WEBHOOK_SECRET: 'whsec_checkroute_billing_4Ze' };

/** A project dir whose hookdrill.config.json receives GitHub and Stripe and routes them to two services (and drops the rest). */
async function project(): Promise<{ dir: string; ci: number; billing: number }> {
  const dir = tempDir('hookdrill-check-route-');
  const [ci, billing] = [await freePort(), await freePort()];
  const config = {
    receive: {
      github: { path: '/github', secretEnv: 'GITHUB_WEBHOOK_SECRET' },
      stripe: { path: '/stripe', secretEnv: 'STRIPE_WEBHOOK_SECRET' },
    },
    routes: [
      { name: 'ci', provider: 'github', events: ['workflow_run', 'check_suite'], to: `http://127.0.0.1:${ci}/ci` },
      { name: 'billing', provider: 'stripe', events: 'invoice.*', to: `http://127.0.0.1:${billing}/billing` },
      { name: 'archive', provider: '*', events: '*', to: 'drop' },
    ],
  };
  writeFileSync(join(dir, 'hookdrill.config.json'), JSON.stringify(config, null, 2));
  return { dir, ci, billing };
}

/** The Python target on $PORT, verifying with the variable's secret (as a service behind listen holds it), dumping each request. */
function target(dir: string, provider: string, variable: keyof typeof ENV, flaw = '') {
  const store = join(dir, `${provider}${flaw}.txt`);
  const dump = join(dir, `dump-${provider}${flaw}`);
  mkdirSync(dump);
  return {
    dump,
    args: [
      '--receiver',
      `${PYTHON} ${PY} serve --provider ${provider} --secret "$${variable}" --port "$PORT" --store ${store} --dump ${dump}${flaw ? ` --flaw ${flaw}` : ''}`,
      '--stored',
      `${PYTHON} ${PY} ids --store ${store}`,
    ],
  };
}

/** Every request the target got, as its head's headers (lower-case names). */
function requestsAt(dump: string): Record<string, string>[] {
  return readdirSync(dump).map((f) => {
    const head = readFileSync(join(dump, f), 'latin1').split('\r\n\r\n')[0] ?? '';
    return Object.fromEntries(
      head
        .split('\r\n')
        .slice(1)
        .map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
    );
  });
}

const GUARD_MS = 240_000;
const parsed = (stdout: string) => JSON.parse(stdout) as CheckResult;
const byName = (r: CheckResult, name: string) => r.cases.find((c) => c.name === name);

test('a right CI service passes check --route ci: sent only workflow_run and check_suite, re-signed and marked as listen forwards, held to listen 10 s', async () => {
  const { dir, ci } = await project();
  const t = target(dir, 'github', 'GITHUB_WEBHOOK_SECRET');
  const run = await hookdrill(['check', '--route', 'ci', ...t.args, '--json'], ENV, [], dir, GUARD_MS);
  assert.equal(run.code, 0, run.stderr + run.stdout.slice(0, 3000));
  // The receive entry's secret signs every request, and is in no output.
  assert.doesNotMatch(run.stdout + run.stderr, new RegExp(ENV.GITHUB_WEBHOOK_SECRET));
  const r = parsed(run.stdout);
  assert.equal(r.ok, true);
  assert.equal(r.route, 'ci');
  assert.equal(r.provider, 'github');
  assert.equal(r.url, `http://127.0.0.1:${ci}/ci`);
  // The verifying cases ran: a target must verify what reaches its port.
  for (const name of ['valid', 'duplicate', 'wrong-secret', 'missing-signature', 'unsigned-flood'])
    assert.equal(byName(r, name)?.status, 'pass', name);
  // Held to listen's forward timeout (10 s, half of it for p99), not GitHub's 10 s by coincidence alone: said in the limit.
  assert.match(byName(r, 'latency')?.observed ?? '', /limit 5000ms/);
  // listen answers what never reaches the target: said so.
  assert.match(byName(r, 'slow-client')?.observed ?? '', /^route ci: listen's forwarder sends each request whole/);
  const seen = requestsAt(t.dump);
  assert.ok(seen.length > 50, `${seen.length} requests`);
  // Every request is of a type the route takes, and carries what listen's forward adds.
  const events = new Set(seen.map((h) => h['x-github-event']));
  assert.deepEqual(
    [...events].filter((e) => e !== 'workflow_run' && e !== 'check_suite'),
    [],
  );
  assert.ok(events.has('workflow_run') && events.has('check_suite'), [...events].join(','));
  for (const h of seen) {
    assert.equal(h['x-hookdrill-source'], 'github');
    assert.match(h['x-hookdrill-attempt'] ?? '', /^[1-9]\d*$/);
  }
  // The delivery id listen forwards under is the delivery's own, and a copy sent again is its next attempt.
  const valid = seen.filter((h) => h['x-hookdrill-delivery-id'] !== undefined && h['x-hookdrill-delivery-id'] === h['x-github-delivery']);
  assert.ok(valid.length > 0);
  assert.ok(seen.some((h) => h['x-hookdrill-attempt'] === '2'));
});

test('the billing service gets Stripe invoice.* events only, signed with the receive secret', async () => {
  const { dir } = await project();
  const t = target(dir, 'stripe', 'STRIPE_WEBHOOK_SECRET');
  const run = await hookdrill(
    ['check', '--route', 'billing', ...t.args, '--only', 'valid,duplicate,other-types,wrong-secret,stale-timestamp', '--json'],
    ENV,
    [],
    dir,
    GUARD_MS,
  );
  assert.equal(run.code, 0, run.stderr + run.stdout.slice(0, 3000));
  const r = parsed(run.stdout);
  assert.equal(r.counts.fail, 0);
  assert.equal(byName(r, 'other-types')?.status, 'pass');
  const bodies = readdirSync(t.dump).map((f) => readFileSync(join(t.dump, f), 'utf8').split('\r\n\r\n').slice(1).join('\r\n\r\n'));
  const types = new Set(bodies.map((b) => (JSON.parse(b) as { type?: string }).type));
  assert.ok(types.size > 1, [...types].join(','));
  for (const type of types) assert.match(type ?? '', /^invoice\./);
});

test("services on the providers' official libraries (@octokit/webhooks-methods' verify, stripe's constructEvent) pass check --route: listen's forwards verify as the provider's deliveries do", async () => {
  const { dir } = await project();
  for (const [route, provider, variable] of [
    ['ci', 'github', 'GITHUB_WEBHOOK_SECRET'],
    ['billing', 'stripe', 'STRIPE_WEBHOOK_SECRET'],
  ] as const) {
    const store = join(dir, `official-${provider}.txt`);
    const run = await hookdrill(
      [
        'check',
        '--route',
        route,
        '--receiver',
        `node ${OFFICIAL} ${provider} "$${variable}" ${store}`,
        '--stored',
        `cat ${store} 2>/dev/null || true`,
        '--json',
      ],
      ENV,
      [],
      dir,
      GUARD_MS,
    );
    assert.equal(run.code, 0, `${route}: ${run.stderr}${run.stdout.slice(0, 3000)}`);
    const r = parsed(run.stdout);
    assert.equal(r.route, route);
    assert.equal(byName(r, 'valid')?.status, 'pass');
    assert.equal(byName(r, 'wrong-secret')?.status, 'pass');
  }
});

test('a service that trusts X-Hookdrill-Source instead of verifying fails wrong-secret and missing-signature through its route', async () => {
  const { dir } = await project();
  const t = target(dir, 'github', 'GITHUB_WEBHOOK_SECRET', 'trusts-listen');
  const run = await hookdrill(
    ['check', '--route', 'ci', ...t.args, '--only', 'valid,wrong-secret,missing-signature', '--json'],
    ENV,
    [],
    dir,
    GUARD_MS,
  );
  assert.equal(run.code, 1, run.stderr + run.stdout.slice(0, 3000));
  const r = parsed(run.stdout);
  assert.equal(byName(r, 'valid')?.status, 'pass');
  assert.equal(byName(r, 'wrong-secret')?.status, 'fail');
  assert.match(byName(r, 'wrong-secret')?.observed ?? '', /^200.*STORED/);
  // A forgery is one finding (wrong-secret); the others wait on it.
  assert.equal(byName(r, 'missing-signature')?.status, 'skipped');
  assert.equal(byName(r, 'missing-signature')?.notJudged, 'wrong-secret');
});

test('a service that does not dedupe fails duplicate through its route', async () => {
  const { dir } = await project();
  const t = target(dir, 'github', 'GITHUB_WEBHOOK_SECRET', 'no-dedupe');
  const run = await hookdrill(['check', '--route', 'ci', ...t.args, '--only', 'valid,duplicate', '--json'], ENV, [], dir, GUARD_MS);
  assert.equal(run.code, 1, run.stderr + run.stdout.slice(0, 3000));
  const r = parsed(run.stdout);
  assert.equal(byName(r, 'valid')?.status, 'pass');
  assert.equal(byName(r, 'duplicate')?.status, 'fail');
  assert.match(byName(r, 'duplicate')?.diagnosis ?? '', /stores a copy of a delivery it already holds/);
});

test('a route to drop or hold, an unknown route, no project file, or --url beside --route: one line, exit 2', async () => {
  const { dir } = await project();
  const cases: [string[], string, RegExp][] = [
    [
      ['--route', 'archive'],
      dir,
      /^hookdrill: check --route archive: the route drops its events \("to": "drop"\): it forwards to no service, so there is none to check\n$/,
    ],
    [
      ['--route', 'nope'],
      dir,
      /^hookdrill: check --route nope: hookdrill.config.json has no route of that name \(routes: ci, billing, archive\)\n$/,
    ],
    [['--route', 'ci'], tempDir(), /^hookdrill: check --route ci: no routes to read/],
    [
      ['--route', 'ci', '--url', 'http://127.0.0.1:9/'],
      dir,
      /^hookdrill: check --route ci: the route names the URL to check; leave --url out\n$/,
    ],
  ];
  for (const [args, cwd, said] of cases) {
    const run = await hookdrill(['check', ...args], ENV, [], cwd, GUARD_MS);
    assert.equal(run.code, 2, `${args.join(' ')}: ${run.stderr}`);
    assert.match(run.stderr, said);
    assert.doesNotMatch(run.stderr, /\bat .*\.js:\d+/);
    assert.doesNotMatch(run.stderr, /ci-route-github-secret/);
  }
});

test("check --route judges a Twilio service on listen's forwards of Event Streams JSON: posted with the target's own bodySHA256, so a right one passes json-body-hash and one that never hashes the body fails it", async () => {
  const dir = tempDir('hookdrill-check-route-twilio-');
  const port = await freePort();
  const secret = 'twilio-route-auth-token-0123456789';
  writeFileSync(
    join(dir, 'hookdrill.config.json'),
    JSON.stringify({
      receive: { twilio: { path: '/twilio', secretEnv: 'TWILIO_AUTH_TOKEN', publicUrl: 'https://hooks.example.com/twilio' } },
      routes: [{ name: 'messaging', provider: 'twilio', events: '*', to: `http://127.0.0.1:${port}/messaging` }],
    }),
  );
  const env = { TWILIO_AUTH_TOKEN: secret };
  const run = async (flaw: string) => {
    const store = join(dir, `twilio${flaw}.txt`);
    const r = await hookdrill(
      [
        'check',
        '--route',
        'messaging',
        '--only',
        'valid,json-body-hash',
        '--receiver',
        `${PYTHON} ${PY} serve --provider twilio --secret "$TWILIO_AUTH_TOKEN" --port "$PORT" --store ${store}${flaw ? ` --flaw ${flaw}` : ''}`,
        '--stored',
        `${PYTHON} ${PY} ids --store ${store}`,
        '--json',
      ],
      env,
      [],
      dir,
      GUARD_MS,
    );
    return { r, c: byName(parsed(r.stdout), 'json-body-hash') };
  };
  const right = await run('');
  assert.equal(right.c?.status, 'pass', right.r.stdout.slice(0, 3000) + right.r.stderr);
  const wrong = await run('json-no-bodysha');
  assert.equal(wrong.c?.status, 'fail', wrong.r.stdout.slice(0, 3000));
  assert.match(wrong.c?.diagnosis ?? '', /never hashes the body/);
});
