import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildProgram } from '../src/cli.js';
import { commandPaths } from '../src/cli/registry.js';

/** Parse argv as the CLI does and return the options the command would run with — without running it. */
async function optionsFor(argv: string[], env: NodeJS.ProcessEnv = {}): Promise<{ name: string; options: unknown }> {
  let seen: { name: string; options: unknown } | undefined;
  // An empty directory: no project file under the flags (flags.test is about the flags alone).
  const program = buildProgram({ env, cwd: EMPTY, runF: (name, options) => (seen = { name, options }) });
  program.configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  await program.parseAsync(['node', 'hookdrill', ...argv]);
  assert.ok(seen, `${argv.join(' ')} ran nothing`);
  return seen;
}

const U = 'http://127.0.0.1:3000/';
const EMPTY = mkdtempSync(join(tmpdir(), 'hookdrill-flags-'));

/** flags → options, for every command: [argv, environment, the options expected]. */
const TABLE: [string[], NodeJS.ProcessEnv, unknown][] = [
  [
    [
      'send',
      'stripe/invoice.paid',
      '--url',
      U,
      '--provider',
      'stripe',
      '--secret',
      'a',
      '--secret',
      'b',
      '--no-retry',
      '--time-scale',
      '0.5',
      '--header',
      'X-A: 1',
      '--set',
      'a=1',
      '--shuffle',
      '--seed',
      '7',
      '--count',
      '3',
      '--json',
    ],
    {},
    {
      fixtures: ['stripe/invoice.paid'],
      url: U,
      provider: 'stripe',
      secrets: ['a', 'b'],
      timeScale: '0.5',
      noRetry: true,
      count: '3',
      seed: '7',
      shuffle: true,
      headers: ['X-A: 1'],
      sets: ['a=1'],
    },
  ],
  [
    [
      'send',
      '--url',
      U,
      '--retry-delays',
      '0,1m',
      '--timeout',
      '2s',
      '--profile',
      'slack',
      '--concurrency',
      '4',
      '--rate',
      '5/s',
      '--duplicates',
      '2',
      '--expect',
      '401',
      '--event',
      'push',
      '--content-type',
      'form',
    ],
    { HOOKDRILL_SECRET: 'from-env' },
    {
      fixtures: [],
      url: U,
      secrets: ['from-env'],
      profile: 'slack',
      timeout: '2s',
      retryDelays: '0,1m',
      noRetry: false,
      concurrency: '4',
      rate: '5/s',
      duplicates: '2',
      expect: '401',
      event: 'push',
      contentType: 'form',
      shuffle: false,
      headers: [],
      sets: [],
    },
  ],
  [['fixtures', '--provider', 'github'], {}, { provider: 'github' }],
  [['fixtures', 'shopify', '--grep', 'orders/'], {}, { provider: 'shopify', grep: 'orders/' }],
  [['fixtures', 'show', 'github/pull_request.opened', '--json'], {}, { name: 'github/pull_request.opened' }],
  [
    [
      'fixtures',
      'capture',
      '--inbox',
      'x.db',
      '--id',
      'evt_1',
      '--source',
      'stripe',
      '--out',
      'fx',
      '--name',
      'paid',
      '--redact',
      '--force',
      '--json',
    ],
    {},
    { inbox: 'x.db', id: 'evt_1', source: 'stripe', out: 'fx', name: 'paid', redact: true, force: true },
  ],
  [
    ['fixtures', 'capture', '--inbox', 'postgres://ops@db.internal/app', '--schema', 'webhooks', '--id', 'abc', '--out', '.'],
    {},
    { inbox: 'postgres://ops@db.internal/app?schema=webhooks', id: 'abc', out: '.', redact: false, force: false },
  ],
  [['profiles'], {}, {}],
  [['keys', 'discord'], {}, { provider: 'discord' }],
  [['keys', '--provider', 'discord', '--secret', 'k'], { HOOKDRILL_SECRET: 'from-env' }, { provider: 'discord', secrets: ['k'] }],
  // HOOKDRILL_SECRET is a receiver's public key: keys never reads it as a private one.
  [['keys', 'discord'], { HOOKDRILL_SECRET: 'from-env' }, { provider: 'discord' }],
  [['completion', 'zsh'], {}, { shell: 'zsh' }],
  [['ui', '--inbox', 'x.db', '--port', '0'], {}, { inbox: 'x.db', port: 0, secrets: [] }],
  [['ui', '--host', '::1'], {}, { inbox: 'hookdrill-inbox.db', port: 4040, host: '::1', secrets: [] }],
  [['ui', '--provider', 'stripe', '--secret', 's'], {}, { inbox: 'hookdrill-inbox.db', port: 4040, provider: 'stripe', secrets: ['s'] }],
  [
    ['import', 'a.har', 'b.jsonl', '--inbox', 'x.db', '--provider', 'github'],
    {},
    { files: ['a.har', 'b.jsonl'], inbox: 'x.db', provider: 'github' },
  ],
  [
    [
      'pull',
      '--provider',
      'stripe',
      '--to',
      U,
      '--follow',
      '--interval',
      '5s',
      '--type',
      'invoice.*',
      '--since',
      '2h',
      '--state',
      's.json',
      '--skip-failed',
      '--concurrency',
      '2',
      '--time-scale',
      '0.01',
      '--api-key-env',
      'K',
      '--api-timeout',
      '5s',
      '--api-version',
      '2025-09-30.clover',
      '--json',
    ],
    { HOOKDRILL_SECRET: 'env' },
    {
      provider: 'stripe',
      to: U,
      interval: '5s',
      since: '2h',
      state: 's.json',
      concurrency: '2',
      apiKeyEnv: 'K',
      apiTimeout: '5s',
      apiVersion: '2025-09-30.clover',
      timeScale: '0.01',
      noRetry: false,
      secrets: ['env'],
      follow: true,
      skipFailed: true,
      types: ['invoice.*'],
      env: { HOOKDRILL_SECRET: 'env' },
    },
  ],
  [
    [
      'pull',
      '--provider',
      'github',
      '--repo',
      'acme/shop',
      '--hook-id',
      '7',
      '--to-inbox',
      'postgres://h/db',
      '--schema',
      'hooks',
      '--from-now',
      '--api-base',
      'http://127.0.0.1:9/api/v3',
      '--no-retry',
    ],
    { HOOKDRILL_SECRET: 'ignored: nothing is signed for an inbox' },
    {
      provider: 'github',
      repo: 'acme/shop',
      hookId: '7',
      apiBase: 'http://127.0.0.1:9/api/v3',
      noRetry: true,
      toInbox: 'postgres://h/db?schema=hooks',
      fromNow: true,
      env: { HOOKDRILL_SECRET: 'ignored: nothing is signed for an inbox' },
    },
  ],
  [
    ['pull', '--provider', 'github', '--app', '--app-id', '12', '--to', U, '--secret', 's'],
    {},
    { provider: 'github', to: U, appId: '12', noRetry: false, secrets: ['s'], app: true, env: {} },
  ],
  [
    ['reconcile', '--provider', 'stripe', '--since', '3d', '--api-key-env', 'K', '--stored', 'cat ids', '--only-failed'],
    {},
    { provider: 'stripe', since: '3d', apiKeyEnv: 'K', stored: 'cat ids', onlyFailed: true, env: {} },
  ],
  [
    [
      'reconcile',
      '--provider',
      'github',
      '--org',
      'acme',
      '--hook-id',
      '7',
      '--since',
      '2d',
      '--inbox',
      'x.db',
      '--redeliver-to',
      U,
      '--concurrency',
      '4',
      '--dry-run',
      '--with-payloads',
    ],
    { HOOKDRILL_SECRET: 'env' },
    {
      provider: 'github',
      org: 'acme',
      hookId: '7',
      since: '2d',
      inbox: 'x.db',
      redeliverTo: U,
      concurrency: '4',
      dryRun: true,
      withPayloads: true,
      secrets: ['env'],
      env: { HOOKDRILL_SECRET: 'env' },
    },
  ],
  [
    [
      'reconcile',
      '--provider',
      'github',
      '--app',
      '--app-id',
      '12',
      '--since',
      '1d',
      '--stored',
      'true',
      '--fix',
      '--type',
      'issues',
      '--type',
      'push',
    ],
    {},
    { provider: 'github', app: true, appId: '12', since: '1d', stored: 'true', fix: true, types: ['issues', 'push'], env: {} },
  ],
  [
    ['scenario', 'stripe/payment-retry', '--url', U, '--state', 'node s.js', '--orders', 'reversed, late', '--seed', '7'],
    { HOOKDRILL_SECRET: 'env' },
    { scenario: 'stripe/payment-retry', list: false, url: U, state: 'node s.js', secrets: ['env'], orders: ['reversed', 'late'], seed: 7 },
  ],
  [
    ['init', '--provider', 'github', '--secret-env', 'GH_SECRET', '--url', U, '--skip', 'latency, replay', '--force'],
    {},
    { provider: 'github', secretEnv: 'GH_SECRET', url: U, skip: ['latency', 'replay'], force: true },
  ],
  [['demo', '--json'], {}, {}],
  [
    [
      'listen',
      '--provider',
      'stripe',
      '--port',
      '0',
      '--inbox',
      'x.db',
      '--forward-to',
      U,
      '--lease',
      '1m',
      '--no-worker',
      '--forward-original-headers',
    ],
    { HOOKDRILL_SECRET: 's' },
    {
      provider: 'stripe',
      secrets: ['s'],
      port: '0',
      inbox: 'x.db',
      forwardTo: U,
      lease: '1m',
      forwardOriginalHeaders: true,
      noWorker: true,
    },
  ],
  [
    ['listen', '--provider', 'slack', '--secret', 's', '--forward-to', U],
    { HOOKDRILL_FORWARD_SECRET: 'app' },
    { provider: 'slack', secrets: ['s'], forwardTo: U, forwardSecret: 'app', forwardOriginalHeaders: false, noWorker: false },
  ],
  [
    ['listen', '--provider', 'stripe', '--secret', 's', '--commit-batch', '8', '--commit-wait', '2ms', '--store-deadline', '1s'],
    {},
    {
      provider: 'stripe',
      secrets: ['s'],
      commitBatch: '8',
      commitWait: '2ms',
      storeDeadline: '1s',
      forwardOriginalHeaders: false,
      noWorker: false,
    },
  ],
  [
    [
      'chaos',
      'stripe/invoice.paid',
      '--receiver',
      'node r.js',
      '--url',
      U,
      '--provider',
      'stripe',
      '--secret',
      's',
      '--stored',
      'cat ids',
      '--rounds',
      '5',
      '--kill-point',
      'random',
      '--signal',
      'TERM',
      '--settle-max',
      '10s',
      '--time-scale',
      '0.1',
    ],
    {},
    {
      fixtures: ['stripe/invoice.paid'],
      receiver: 'node r.js',
      url: U,
      stored: 'cat ids',
      rounds: '5',
      killPoint: 'random',
      killSignal: 'TERM',
      settleMax: '10s',
      timeScale: '0.1',
      provider: 'stripe',
      secrets: ['s'],
    },
  ],
  [
    ['inspect', '--inbox', 'x.db', '--status', 'dead', '--status', 'pending', '--error', 'crm', '--since', '2h', '--limit', '5'],
    {},
    { inbox: 'x.db', status: ['dead', 'pending'], error: 'crm', since: '2h', limit: '5' },
  ],
  [['inspect', '--inbox', 'x.db', '--id', 'evt_1', '--body'], {}, { inbox: 'x.db', id: 'evt_1' }],
  [
    ['requeue', '--inbox', 'postgres://ops@db.internal/app?schema=a', '--schema', 'webhooks', '--status', 'dead'],
    {},
    { inbox: 'postgres://ops@db.internal/app?schema=webhooks', status: ['dead'], dryRun: false },
  ],
  [
    ['requeue', '--inbox', 'x.db', '--id', 'a', '--id', 'b', '--dry-run', '--rate', '100/s', '--keep-attempts'],
    {},
    { inbox: 'x.db', ids: ['a', 'b'], rate: '100/s', dryRun: true, keepAttempts: true },
  ],
  [
    [
      'replay',
      '--inbox',
      'x.db',
      '--to',
      U,
      '--status',
      'dead',
      '--type',
      'invoice.paid',
      '--original-headers',
      '--no-retry',
      '--limit',
      '9',
    ],
    { HOOKDRILL_SECRET: 's' },
    { inbox: 'x.db', to: U, status: ['dead'], type: 'invoice.paid', secrets: ['s'], noRetry: true, limit: '9', originalHeaders: true },
  ],
  [
    [
      'check',
      '--url',
      U,
      '--provider',
      'github',
      '--secret',
      's',
      '--only',
      'valid,retry',
      '--max-bytes',
      '1024',
      '--junit',
      'c.xml',
      '--content-type',
      'form',
    ],
    {},
    { url: U, only: 'valid,retry', maxBytes: '1024', provider: 'github', secrets: ['s'], contentType: 'form' },
  ],
  [
    ['check', '--url', U, '--provider', 'stripe', '--secret', 's', '--receiver', 'node app.js', '--ready-timeout', '20s'],
    {},
    { url: U, receiver: 'node app.js', readyTimeout: '20s', provider: 'stripe', secrets: ['s'] },
  ],
  [
    ['verify', 'request.http', '--secret', 'a', '--secret', 'b', '--at', '1700000000', '--entry', '2'],
    {},
    { file: 'request.http', at: '1700000000', entry: '2', secrets: ['a', 'b'] },
  ],
  [
    ['verify', '--ui', 'http://127.0.0.1:4040/?token=t', '--refused', 'r3', '--secret', 'a'],
    {},
    { ui: 'http://127.0.0.1:4040/?token=t', refused: 'r3', secrets: ['a'] },
  ],
];

/** The command a row runs: `fixtures`, or `fixtures capture` when the second word names a subcommand. */
function commandOf(argv: readonly string[]): string {
  const two = `${argv[0]} ${argv[1]}`;
  return commandPaths().includes(two) ? two : (argv[0] as string);
}

for (const [argv, env, expected] of TABLE) {
  test(`flags → options: hookdrill ${argv.join(' ')}`, async () => {
    const { name, options } = await optionsFor(argv, env);
    assert.equal(name, commandOf(argv));
    assert.deepEqual(options, expected);
  });
}

test('every command, and every subcommand, has a row in the table', () => {
  assert.ok(commandPaths().includes('fixtures capture'));
  assert.deepEqual(new Set(commandPaths()), new Set(TABLE.map(([argv]) => commandOf(argv))));
});

test("a command's own flags and its subcommand's do not mix", async () => {
  const parent = await optionsFor(['fixtures', '--json']);
  assert.deepEqual(parent, { name: 'fixtures', options: {} });
  // After the subcommand's word, the flags are the subcommand's: the parent's --provider is unknown there.
  await assert.rejects(
    optionsFor(['fixtures', 'capture', '--inbox', 'x.db', '--id', 'a', '--out', 'd', '--provider', 'stripe']),
    /unknown option '--provider'/,
  );
});

test('--secret wins over HOOKDRILL_SECRET; a flag a command does not declare is refused', async () => {
  const { options } = await optionsFor(['check', '--url', U, '--secret', 'flag'], { HOOKDRILL_SECRET: 'env' });
  assert.deepEqual((options as { secrets: string[] }).secrets, ['flag']);
  await assert.rejects(optionsFor(['inspect', '--inbox', 'x.db', '--dry-run']), /unknown option '--dry-run'/);
});
