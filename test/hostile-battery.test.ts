import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { allProviders, declareProvider, providerNames } from '../src/providers/index.js';
import type { Provider } from '../src/providers/index.js';
import { checkKeyMaterial } from '../src/providers/key-material.js';
import { PACK_NAMES } from '../src/providers/pack.js';
import { createReceiver } from '../src/receiver/index.js';
import { UsageError } from '../src/util/errors.js';
import { hookdrill } from './helpers/cli.js';
import { spawnHookdrill } from './helpers/spawned.js';
import { tempDir } from './helpers/tmp.js';
import { ACME_DECLARATION } from './helpers/acme.js';

/**
 * The shared hostile battery (issue 54): every invariant the first providers hold, every provider
 * holds — the built-in ones, hookdrill's pack (src/providers/pack.ts) and one a project file
 * declares — so the next provider cannot arrive without them. Each input here is one a user gives by accident (an unset variable, a pasted key)
 * or an attacker plants; each is refused in one line with exit 2, before anything starts.
 */

const BLANKS = ['', ' ', '\t\n'];
const KEYS = tempDir();
const ENV = { HOOKDRILL_KEYS_DIR: KEYS };

// The declared provider: a team's own HMAC scheme with a utf8 key (the engine skipped the check for those).
const ACME = { ...ACME_DECLARATION, title: 'Acme', id: { header: 'Acme-Delivery' }, retries: ['1m'] };

function projectDir(): string {
  const dir = tempDir();
  writeFileSync(join(dir, 'hookdrill.config.json'), JSON.stringify({ providers: { acme: ACME } }));
  return dir;
}

function everyProvider(): Provider[] {
  declareProvider('acme', ACME as Parameters<typeof declareProvider>[1]);
  return allProviders();
}

test('a blank secret or key is refused for every provider, built-in and declared, whether signing or verifying', () => {
  const all = everyProvider();
  assert.ok(all.length >= providerNames.length + PACK_NAMES.length + 1, "every built-in provider, the pack's and the declared one");
  for (const p of all) {
    for (const blank of BLANKS) {
      for (const role of ['sign', 'verify'] as const) {
        assert.throws(
          () => checkKeyMaterial(p, blank, role),
          (e: unknown) => e instanceof UsageError && /empty|whitespace/.test(e.message) && e.message.startsWith(`${p.name}:`),
          `${p.name} ${role} ${JSON.stringify(blank)}`,
        );
      }
    }
  }
});

test("the library's receiver refuses to be made with a blank secret or none, for every provider; verify never passes with one", async () => {
  const inbox = await openSqliteInbox(join(tempDir(), 'inbox.db'));
  try {
    for (const p of everyProvider()) {
      for (const secrets of [[], [''], [' ']]) {
        assert.throws(() => createReceiver({ provider: p, secrets, inbox }), UsageError, `${p.name} ${JSON.stringify(secrets)}`);
      }
      // A caller who went round every gate: verify still refuses the empty key.
      const body = Buffer.from('{"type":"x"}');
      assert.throws(() => p.verify(body, {}, ['']), /no_secret|empty secret|no secret/, p.name);
    }
  } finally {
    await inbox.close();
  }
});

test('the forgery: listen with an unset secret variable does not start for any provider, so an event HMACed with the empty key is never stored', async () => {
  const dir = projectDir();
  for (const name of [...providerNames, ...PACK_NAMES, 'acme']) {
    const inbox = join(tempDir(), 'inbox.db');
    const p = spawnHookdrill(['listen', '--json', '--port', '0', '--provider', name, '--secret', '', '--inbox', inbox], ENV, [], dir);
    // The old code started: prove what that meant by posting Zoom's forgery (the audit's case).
    const ready = await Promise.race([p.waitFor((l) => l.event === 'ready', 15_000).catch(() => undefined), p.exit.then(() => undefined)]);
    if (ready) {
      let status = 0;
      if (name === 'zoom') {
        const body = JSON.stringify({ event: 'meeting.started', event_ts: Date.now(), payload: { object: { id: 1 } } });
        const ts = String(Math.floor(Date.now() / 1000));
        const sig = `v0=${createHmac('sha256', '').update(`v0:${ts}:${body}`).digest('hex')}`;
        const res = await fetch(String(ready.url), {
          method: 'POST',
          body,
          headers: { 'content-type': 'application/json', 'x-zm-signature': sig, 'x-zm-request-timestamp': ts },
        });
        status = res.status;
      }
      p.child.kill('SIGKILL');
      assert.fail(`listen --provider ${name} --secret '' started${name === 'zoom' ? ` and answered a forged event ${status}` : ''}`);
    }
    const code = await p.exit;
    assert.equal(code, 2, `${name}: ${p.stderr()}`);
    const err = p.stderr().trim();
    assert.equal(err.split('\n').length, 1, `${name}: one line: ${err}`);
    assert.match(err, /empty/, name);
  }
});

test('send, check and verify refuse a whitespace secret for every provider, in one line, exit 2', async () => {
  const dir = projectDir();
  const capture = join(dir, 'request.http');
  writeFileSync(capture, 'POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n\r\n{}');
  for (const name of [...providerNames, ...PACK_NAMES, 'acme']) {
    for (const args of [
      ['send', '--provider', name, '--secret', ' ', '--url', 'http://127.0.0.1:9/'],
      ['check', '--provider', name, '--secret', ' ', '--url', 'http://127.0.0.1:9/'],
      ['verify', capture, '--provider', name, '--secret', ' '],
    ]) {
      const r = await hookdrill(args, ENV, [], dir, 30_000);
      const what = `${args[0]} --provider ${name}`;
      assert.equal(r.code, 2, `${what}: ${r.stderr}`);
      assert.equal(r.stderr.trim().split('\n').length, 1, `${what}: one line: ${r.stderr}`);
      assert.match(r.stderr, /whitespace|empty/, what);
    }
  }
});

test('a key-pair receiver given something that is not a public key does not start (it would refuse every delivery)', async () => {
  for (const [name, key] of [
    ['discord', 'not-a-key'],
    ['discord', 'ab'.repeat(31)],
    ['sendgrid', 'not-a-key'],
    ['sendgrid', Buffer.from('not a DER key').toString('base64')],
    ['pubsub', 'not-a-key'],
    ['pubsub', '{"keys": []}'],
    ['plaid', 'not-a-key'],
  ] as const) {
    const r = await hookdrill(
      ['listen', '--provider', name, '--secret', key, '--inbox', join(tempDir(), 'i.db')],
      ENV,
      [],
      undefined,
      15_000,
    );
    assert.equal(r.code, 2, `${name} ${key}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.match(r.stderr, /public key|verification key/);
    assert.ok(!r.stderr.includes(key), 'the key given is not echoed');
  }
});

test('a bad --public-url is refused before anything is made (no inbox file left), and refused outright for a provider that signs no URL', async () => {
  const dir = projectDir();
  for (const name of [...providerNames, ...PACK_NAMES, 'acme']) {
    const inbox = join(tempDir(), 'inbox.db');
    // A key-pair provider verifies with hookdrill's own key when none is given.
    // Basic credentials (Postmark) are "user:password": a secret of their shape, so the URL is what is refused.
    const basic = allProviders().some((p) => p.name === name && p.tokenOnly === 'basic');
    const secret = ['discord', 'sendgrid', 'sns', 'pubsub', 'plaid'].includes(name)
      ? []
      : // Contentful's signing secret is exactly 64 characters: of its shape, so the URL is what is refused.
        [
          '--secret',
          basic
            ? 'hookdrill:YmFkLXVybC1zZWNyZXQ='
            : name === 'contentful'
              ? 'bad-url-secret-'.padEnd(64, '0')
              : 'whsec_YmFkLXVybC1zZWNyZXQ=',
        ];
    const bad = await hookdrill(
      ['listen', '--provider', name, ...secret, '--public-url', 'not a url', '--inbox', inbox],
      ENV,
      [],
      dir,
      15_000,
    );
    assert.equal(bad.code, 2, `${name}: ${bad.stderr}`);
    assert.match(bad.stderr, /--public-url/, name);
    assert.ok(!existsSync(inbox), `${name}: the inbox file was created`);
  }
  for (const args of [
    ['listen', '--provider', 'stripe', '--secret', 'whsec_YWJj', '--public-url', 'https://example.com/hooks', '--port', '0'],
    ['send', '--provider', 'github', '--secret', 's', '--url', 'http://127.0.0.1:9/', '--public-url', 'https://example.com/hooks'],
    ['check', '--provider', 'zoom', '--secret', 's', '--url', 'http://127.0.0.1:9/', '--public-url', 'https://example.com/hooks'],
  ]) {
    const r = await hookdrill(args, ENV, [], dir, 15_000);
    assert.equal(r.code, 2, `${args.join(' ')}: ${r.stderr}`);
    assert.match(r.stderr, /^hookdrill: --public-url: \w+ signs no URL; leave it out\n$/);
  }
});
