/**
 * Key-pair providers (Discord): hookdrill signs with its own private key, made once and kept
 * 0600, and prints only the public key a receiver is configured with.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { hookdrill } from './helpers/cli.js';
import { startListenFor, stopAll } from './helpers/listen.js';
import { publicKeyOf } from './helpers/official.js';
import { tempDir } from './helpers/tmp.js';

test('keys discord prints the public key of a key it makes once (0600), the same on every run, never the private key', async () => {
  const dir = tempDir();
  const env = { HOOKDRILL_KEYS_DIR: join(dir, 'keys') };
  const first = await hookdrill(['keys', 'discord'], env);
  assert.equal(first.code, 0, first.stderr);
  const publicKey = first.stdout.split('\n')[0] ?? '';
  assert.match(publicKey, /^[0-9a-f]{64}$/);
  const [file] = readdirSync(join(dir, 'keys'));
  assert.equal(file, 'discord-ed25519.pem');
  const path = join(dir, 'keys', file as string);
  assert.equal(statSync(path).mode & 0o777, 0o600);
  const pem = readFileSync(path, 'utf8');
  const body = pem.split('\n')[1] as string;
  assert.doesNotMatch(first.stdout + first.stderr, new RegExp(body.replace(/[+/]/g, '\\$&')));
  // The same key on the next run: a receiver configured once stays configured.
  const again = await hookdrill(['keys', 'discord', '--json'], env);
  assert.equal(JSON.parse(again.stdout).publicKey, publicKey);
  assert.doesNotMatch(again.stdout, /PRIVATE|privateKey/);
});

test("keys --secret: the public key of the user's own private key (RFC 8032's test vector), and a bad key or a shared-secret provider is one line, exit 2", async () => {
  const seed = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
  const r = await hookdrill(['keys', 'discord', '--secret', seed, '--json']);
  assert.equal(r.code, 0, r.stderr);
  assert.equal(JSON.parse(r.stdout).publicKey, 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a');
  assert.doesNotMatch(r.stdout, new RegExp(seed));
  const bad = await hookdrill(['keys', 'discord', '--secret', 'not-a-key']);
  assert.equal(bad.code, 2);
  assert.equal(
    bad.stderr,
    'hookdrill: the signing key must be an Ed25519 private key: a PKCS#8 PEM, or its 32-byte seed as 64 hex characters\n',
  );
  const stripe = await hookdrill(['keys', 'stripe']);
  assert.equal(stripe.code, 2);
  assert.match(stripe.stderr, /^hookdrill: stripe signs with a shared secret, not a key pair/);
});

test("send --provider discord with no key signs with hookdrill's own; listen with no key verifies with its public half, and refuses another key's", async () => {
  const dir = tempDir();
  const env = { HOOKDRILL_KEYS_DIR: join(dir, 'keys') };
  const own = (await hookdrill(['keys', 'discord'], env)).stdout.split('\n')[0] as string;
  // listen told the public key, as a receiver would be.
  const { p, url } = await startListenFor('discord', join(dir, 'inbox.db'), own);
  try {
    const sent = await hookdrill(['send', 'discord/application_command.chat_input', '--url', url, '--json'], env);
    assert.equal(sent.code, 0, sent.stderr);
    assert.equal(JSON.parse(sent.stdout).summary.delivered, 1);
    // Signed with another private key: the receiver's public key does not verify it.
    const other = await hookdrill(
      [
        'send',
        'discord/application_command.chat_input',
        '--url',
        url,
        '--json',
        '--secret',
        '4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb',
      ],
      env,
    );
    assert.equal(other.code, 1);
    assert.equal(JSON.parse(other.stdout).summary.delivered, 0);
    assert.match(other.stdout, /"status": 401/);
    assert.notEqual(publicKeyOf('4ccd089b28ff96da9db6c346ec114e0f5b8a319f35aba624da8cf6ed4fb8a6fb'), own);
  } finally {
    await stopAll(p);
  }
});
