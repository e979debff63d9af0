/**
 * Key-pair providers (Discord): hookdrill signs with its own private key, made once and kept
 * 0600, and prints only the public key a receiver is configured with.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import { createPublicKey, generateKeyPairSync } from 'node:crypto';
import { once } from 'node:events';
import {
  chmodSync,
  chownSync,
  closeSync,
  constants,
  lstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { BIN, hookdrill } from './helpers/cli.js';
import type { CliRun } from './helpers/cli.js';
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

const BARRIER = fileURLToPath(new URL('./helpers/barrier.js', import.meta.url));

/** The public key (64 hex) of the Ed25519 private key a key file holds: what a process should have printed. */
function publicKeyOfFile(file: string): string {
  const der = createPublicKey(readFileSync(file, 'utf8')).export({ type: 'spki', format: 'der' });
  return der.subarray(der.length - 32).toString('hex');
}

/** A private key file as hookdrill keeps one (0600, the user's), and its public key. */
function plantKey(file: string): string {
  const pem = generateKeyPairSync('ed25519').privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  writeFileSync(file, pem, { mode: 0o600 });
  return pem;
}

/**
 * `count` processes of `hookdrill keys discord` released at once, past their start-up, toward a
 * fresh keys directory (see helpers/barrier.ts).
 */
async function keysAtOnce(keys: string, count: number): Promise<CliRun[]> {
  const barrier = tempDir();
  execFileSync('mkfifo', [join(barrier, 'go')]);
  const env = { HOOKDRILL_KEYS_DIR: keys, HOOKDRILL_TEST_BARRIER: barrier };
  const runs = Promise.all(
    Array.from({ length: count }, () => hookdrill(['keys', 'discord'], env, ['--import', BARRIER], undefined, 60_000)),
  );
  while (readdirSync(barrier).filter((f) => f.startsWith('ready-')).length < count) await delay(20);
  // Held open until every process is done: one still on its way to the FIFO is released too.
  const go = openSync(join(barrier, 'go'), constants.O_WRONLY);
  try {
    return await runs;
  } finally {
    closeSync(go);
  }
}

test('keys discord run at once in a fresh directory: every process prints the one key the file holds', async () => {
  // Five fresh directories, six processes each: the last writer used to win, and the others had
  // printed (and would sign with) a key no file held.
  for (let trial = 0; trial < 5; trial++) {
    const keys = join(tempDir(), 'keys');
    const runs = await keysAtOnce(keys, 6);
    for (const r of runs) assert.equal(r.code, 0, r.stderr);
    const held = publicKeyOfFile(join(keys, 'discord-ed25519.pem'));
    assert.deepEqual(
      runs.map((r) => r.stdout.split('\n')[0]),
      runs.map(() => held),
    );
    // No temporary files left behind.
    assert.deepEqual(readdirSync(keys), ['discord-ed25519.pem']);
  }
});

/** A `keys discord` whose key file or directory is refused: one line naming it, exit 2, no key printed. */
async function refused(env: Record<string, string>, named: string, why: RegExp): Promise<void> {
  const r = await hookdrill(['keys', 'discord'], env, [], undefined, 30_000);
  assert.equal(r.code, 2, `${r.code} ${r.stdout} ${r.stderr}`);
  assert.equal(r.stdout, '');
  assert.equal(r.stderr.split('\n').length, 2, r.stderr);
  assert.ok(r.stderr.startsWith('hookdrill: ') && r.stderr.includes(named), r.stderr);
  assert.match(r.stderr, why);
  assert.doesNotMatch(r.stderr, /PRIVATE KEY|\n\s+at /);
}

test("a key file that is not the user's alone is refused, as OpenSSH refuses one: another user's, one others can read, a symlink", async () => {
  const dir = tempDir();
  const keys = join(dir, 'keys');
  mkdirSync(keys, { mode: 0o700 });
  const env = { HOOKDRILL_KEYS_DIR: keys };
  const file = join(keys, 'discord-ed25519.pem');
  // Another user's key, planted where hookdrill looks (nobody's, as tests run as root).
  plantKey(file);
  chownSync(file, 65534, 65534);
  await refused(env, file, /owned by uid 65534.*rm /);
  // The user's own, but readable by others: chmod 600 fixes it.
  rmSync(file);
  plantKey(file);
  chmodSync(file, 0o644);
  await refused(env, file, /mode 0644.*chmod 600 /);
  chmodSync(file, 0o600);
  assert.equal((await hookdrill(['keys', 'discord'], env)).code, 0);
  // A symlink, even to a key of the user's own.
  rmSync(file);
  const elsewhere = join(dir, 'elsewhere.pem');
  plantKey(elsewhere);
  symlinkSync(elsewhere, file);
  await refused(env, file, /symlink/);
});

test('a keys directory others could write to, owned by another user, or a symlink is refused', async () => {
  const dir = tempDir();
  const keys = join(dir, 'keys');
  mkdirSync(keys);
  chmodSync(keys, 0o777);
  await refused({ HOOKDRILL_KEYS_DIR: keys }, keys, /writable by group or others.*chmod 700 /);
  chmodSync(keys, 0o700);
  chownSync(keys, 65534, 65534);
  await refused({ HOOKDRILL_KEYS_DIR: keys }, keys, /owned by uid 65534/);
  chownSync(keys, 0, 0);
  const link = join(dir, 'link');
  symlinkSync(keys, link);
  await refused({ HOOKDRILL_KEYS_DIR: link }, link, /symlink/);
  // Nothing was made in any of them.
  assert.deepEqual(readdirSync(keys), []);
});

test('a symlink planted on the temporary file name is not followed: the file it points at is untouched', async () => {
  const dir = tempDir();
  const keys = join(dir, 'keys');
  mkdirSync(keys, { mode: 0o700 });
  const victim = join(dir, 'victim');
  writeFileSync(victim, 'precious\n');
  const file = join(keys, 'discord-ed25519.pem');
  const { HOOKDRILL_SECRET: _drop, ...inherited } = process.env;
  const child = spawn(process.execPath, [BIN, 'keys', 'discord'], {
    env: { ...inherited, CI: 'true', HOOKDRILL_KEYS_DIR: keys },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  // The name a temporary file once had (the key file's, the pid, .tmp), planted while the child is
  // still loading: what an attacker sharing the directory could guess.
  symlinkSync(victim, `${file}.${child.pid}.tmp`);
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const [code] = (await once(child, 'close')) as [number | null];
  assert.equal(code, 0, stderr);
  assert.equal(readFileSync(victim, 'utf8'), 'precious\n');
  assert.ok(lstatSync(file).isFile());
});

test('special files as a key file or keys directory are one line and exit 2: a FIFO, /dev/zero, a directory, a file as the directory, /proc', async () => {
  const dir = tempDir();
  const keysWith = (name: string) => {
    const keys = join(dir, name);
    mkdirSync(keys, { mode: 0o700 });
    return { keys, file: join(keys, 'discord-ed25519.pem') };
  };
  const fifo = keysWith('fifo');
  execFileSync('mkfifo', [fifo.file]);
  chmodSync(fifo.file, 0o600);
  const zero = keysWith('zero');
  symlinkSync('/dev/zero', zero.file);
  const directory = keysWith('directory');
  mkdirSync(directory.file, { mode: 0o700 });
  const big = keysWith('big');
  writeFileSync(big.file, `${'-'.repeat(100 * 1024)}\n`, { mode: 0o600 });
  const notDir = join(dir, 'a-file');
  writeFileSync(notDir, 'not a directory\n');
  // A guard, not a timing assertion: a hang is killed (code null) and fails the exit-code check.
  await Promise.all([
    refused({ HOOKDRILL_KEYS_DIR: fifo.keys }, fifo.file, /not a regular file/),
    refused({ HOOKDRILL_KEYS_DIR: zero.keys }, zero.file, /symlink/),
    refused({ HOOKDRILL_KEYS_DIR: directory.keys }, directory.file, /not a regular file/),
    refused({ HOOKDRILL_KEYS_DIR: big.keys }, big.file, /too large/),
    refused({ HOOKDRILL_KEYS_DIR: notDir }, notDir, /not a directory/),
    refused({ HOOKDRILL_KEYS_DIR: '/proc/hookdrill-none/keys' }, '/proc/hookdrill-none', /cannot/),
  ]);
  // send reads the same file: a FIFO there no longer blocks it forever.
  const sent = await hookdrill(
    ['send', 'discord/application_command.chat_input', '--url', 'http://127.0.0.1:9/'],
    { HOOKDRILL_KEYS_DIR: fifo.keys },
    [],
    undefined,
    30_000,
  );
  assert.equal(sent.code, 2, sent.stderr);
  assert.match(sent.stderr, /^hookdrill: .*not a regular file.*\n$/);
});

test('a key file that holds no key of its kind is one line naming it, not a complaint about --secret', async () => {
  const keys = join(tempDir(), 'keys');
  mkdirSync(keys, { mode: 0o700 });
  const file = join(keys, 'discord-ed25519.pem');
  writeFileSync(file, 'not a key\n', { mode: 0o600 });
  await refused({ HOOKDRILL_KEYS_DIR: keys }, file, /does not hold an Ed25519 private key.*rm /);
});

test('keys with a provider named twice, differently, is one line and exit 2; named twice alike is fine', async () => {
  const env = { HOOKDRILL_KEYS_DIR: join(tempDir(), 'keys') };
  const r = await hookdrill(['keys', 'discord', '--provider', 'sendgrid'], env);
  assert.equal(r.code, 2);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^hookdrill: .*discord.*sendgrid.*\n$/);
  const same = await hookdrill(['keys', 'discord', '--provider', 'discord', '--json'], env);
  assert.equal(same.code, 0, same.stderr);
  assert.equal(JSON.parse(same.stdout).provider, 'discord');
});
