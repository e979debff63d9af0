import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildProgram } from '../src/cli.js';
import { providers } from '../src/providers/index.js';
import { hookdrill } from './helpers/cli.js';
import { reply, startServer } from './helpers/server.js';
import { tempDir } from './helpers/tmp.js';

async function optionsIn(dir: string, argv: string[], env: NodeJS.ProcessEnv = {}): Promise<unknown> {
  let seen: unknown;
  const program = buildProgram({ env, cwd: dir, runF: (_name, options) => (seen = options) });
  program.configureOutput({ writeErr: () => undefined, writeOut: () => undefined });
  await program.parseAsync(['node', 'hookdrill', ...argv]);
  return seen;
}

const CONFIG = {
  provider: 'stripe',
  secretEnv: 'STRIPE_WEBHOOK_SECRET',
  url: 'http://127.0.0.1:3000/webhooks',
  receiver: 'node server.js',
  inbox: 'inbox.db',
  processed: 'node processed.js',
  skip: ['latency'],
};

test('the project file fills what the flags leave out, for check and chaos; a flag given wins', async () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'hookdrill.config.json'), JSON.stringify(CONFIG));
  const env = { STRIPE_WEBHOOK_SECRET: 'whsec_from_env' };
  assert.deepEqual(await optionsIn(dir, ['check'], env), {
    url: CONFIG.url,
    receiver: 'node server.js',
    skip: 'latency',
    inbox: 'inbox.db',
    provider: 'stripe',
    secrets: ['whsec_from_env'],
  });
  assert.deepEqual(await optionsIn(dir, ['chaos', '--receiver', 'node other.js', '--stored', 'cat ids.txt'], env), {
    fixtures: [],
    receiver: 'node other.js',
    url: CONFIG.url,
    stored: 'cat ids.txt',
    processed: 'node processed.js',
    provider: 'stripe',
    secrets: ['whsec_from_env'],
  });
  // --url elsewhere: not the receiver the file starts; --provider other than the file's: not its secret.
  assert.equal(((await optionsIn(dir, ['check', '--url', 'http://10.0.0.9/'], env)) as { receiver?: string }).receiver, undefined);
  assert.deepEqual(((await optionsIn(dir, ['check', '--provider', 'github'], env)) as { secrets: string[] }).secrets, []);
  // --secret (or HOOKDRILL_SECRET) wins over the variable the file names.
  assert.deepEqual(((await optionsIn(dir, ['check', '--secret', 'whsec_flag'], env)) as { secrets: string[] }).secrets, ['whsec_flag']);
});

test('a "hookdrill" key in package.json is a project file too; other commands ignore it', async () => {
  const dir = tempDir();
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'app', hookdrill: { provider: 'github', url: 'http://127.0.0.1:5000/' } }),
  );
  assert.deepEqual(await optionsIn(dir, ['send', '--secret', 's']), {
    fixtures: [],
    provider: 'github',
    url: 'http://127.0.0.1:5000/',
    secrets: ['s'],
    shuffle: false,
    noRetry: false,
    headers: [],
    sets: [],
  });
  assert.deepEqual(await optionsIn(dir, ['inspect', '--inbox', 'x.db']), { inbox: 'x.db' });
});

test('a bad project file is one line naming the key at fault, exit 2', async () => {
  const cases: [string, RegExp][] = [
    ['{"provider": "stripe",', /hookdrill\.config\.json: not valid JSON/],
    ['{"provder": "stripe"}', /unknown key "provder"/],
    ['{"url": 3000}', /"url" must be a non-empty string/],
    ['{"provider": "moneygram"}', /"provider" is "moneygram"; expected one of/],
    ['{"secretEnv": "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}', /"secretEnv" must be the NAME of an environment variable/],
    ['{"receiver": "npx hookdrill listen --secret whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"}', /"receiver" holds a signing secret/],
    ['{"receiver": "node server.js --secret hunter2"}', /"receiver" holds a --secret value/],
    ['{"url": "http://admin:hunter2@127.0.0.1:3000/"}', /"url" holds a password in the URL/],
    ['{"inbox": "postgres://ops@db/app?password=hunter2"}', /"inbox" holds a password/],
    ['{"provider": "stripe", "url": whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw}', /not valid JSON/],
    ['{"skip": "latency"}', /"skip" must be a list of strings/],
    ['{"inbox": "postgres://ops:hunter2@db/app"}', /"inbox" holds a password/],
    ['{"provider": "stripe", "secretEnv": "NOT_SET_ANYWHERE"}', /names NOT_SET_ANYWHERE, which is not set/],
  ];
  for (const [text, message] of cases) {
    const dir = tempDir();
    writeFileSync(join(dir, 'hookdrill.config.json'), text);
    const r = await hookdrill(['check'], {}, [], dir);
    assert.equal(r.code, 2, `${text}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, message);
    assert.doesNotMatch(r.stderr, /hunter2|MfKQ9r8/);
  }
});

test('`hookdrill send` with no flags but a count, from the project file: delivered, signed with the secret the file names', async () => {
  const app = await startServer((_req, res) => reply(res, 200, 'ok'));
  const dir = tempDir();
  try {
    writeFileSync(join(dir, 'hookdrill.config.json'), JSON.stringify({ provider: 'stripe', secretEnv: 'MY_SECRET', url: app.url }));
    const r = await hookdrill(['send', '--count', '2'], { MY_SECRET: 'whsec_project_file' }, [], dir);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(app.requests.length, 2);
    for (const req of app.requests) providers.stripe.verify(req.rawBody, req.headers, ['whsec_project_file']);
  } finally {
    await app.close();
  }
});

test('hookdrill init (not at a terminal): writes the file from flags, never over one without --force, never a password', async () => {
  const dir = tempDir();
  const args = [
    'init',
    '--provider',
    'stripe',
    '--secret-env',
    'STRIPE_WEBHOOK_SECRET',
    '--url',
    'http://127.0.0.1:3000/',
    '--skip',
    'latency',
  ];
  const first = await hookdrill(args, {}, [], dir);
  assert.equal(first.code, 0, first.stderr);
  const written = JSON.parse(readFileSync(join(dir, 'hookdrill.config.json'), 'utf8')) as Record<string, unknown>;
  assert.deepEqual(written, { provider: 'stripe', secretEnv: 'STRIPE_WEBHOOK_SECRET', url: 'http://127.0.0.1:3000/', skip: ['latency'] });
  const again = await hookdrill(args, {}, [], dir);
  assert.equal(again.code, 2);
  assert.match(again.stderr, /already there; --force replaces it/);
  assert.equal((await hookdrill([...args, '--force'], {}, [], dir)).code, 0);
  const other = tempDir();
  const leak = await hookdrill(['init', '--provider', 'stripe', '--inbox', 'postgres://ops:hunter2@db/app'], {}, [], other);
  assert.equal(leak.code, 2);
  assert.doesNotMatch(leak.stderr, /hunter2/);
  assert.equal(existsSync(join(other, 'hookdrill.config.json')), false, 'nothing written');
  const none = await hookdrill(['init', '--url', 'http://127.0.0.1:3000/'], {}, [], other);
  assert.equal(none.code, 2);
  assert.match(none.stderr, /--provider/);
  // A secret is what --secret means elsewhere: here it is named by its variable, and the secret never shown back.
  const secret = await hookdrill(['init', '--provider', 'stripe', '--secret', 'whsec_do_not_echo'], {}, [], other);
  assert.equal(secret.code, 2);
  assert.equal(secret.stderr.trim().split('\n').length, 1, secret.stderr);
  assert.match(secret.stderr, /init writes no secret: --secret-env NAME names the environment variable that holds it/);
  assert.doesNotMatch(secret.stderr, /whsec_do_not_echo|--stored/);
  assert.equal(existsSync(join(other, 'hookdrill.config.json')), false, 'nothing written');
});

test("--only on the command line is not undone by the file's skip; scenario lists without the secret", async () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'hookdrill.config.json'), JSON.stringify({ ...CONFIG, skip: ['latency'] }));
  const options = (await optionsIn(dir, ['check', '--only', 'latency'], { STRIPE_WEBHOOK_SECRET: 's' })) as Record<string, unknown>;
  assert.equal(options.only, 'latency');
  assert.equal(options.skip, undefined);
  const list = await hookdrill(['scenario'], {}, [], dir);
  assert.equal(list.code, 0, list.stderr);
  assert.match(list.stdout, /stripe\/payment-retry/);
});
