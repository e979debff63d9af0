import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { hookdrill } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';

const stripeEvent = (id: string) => ({
  id,
  object: 'event',
  type: 'invoice.paid',
  created: 1764460800,
  data: { object: { id: `in_${id}` } },
});

test('import: a JSON array and JSON lines of Stripe events — stored pending under their own ids, bytes kept, a second import all duplicates', async () => {
  const dir = tempDir();
  const inbox = join(dir, 'inbox.db');
  writeFileSync(join(dir, 'events.json'), JSON.stringify([stripeEvent('evt_imp_1'), stripeEvent('evt_imp_2')]));
  // What `stripe listen --format JSON` prints: one event per line; evt_imp_2 appears in both files.
  writeFileSync(join(dir, 'listen.jsonl'), `${JSON.stringify(stripeEvent('evt_imp_2'))}\n${JSON.stringify(stripeEvent('evt_imp_3'))}\n\n`);
  const args = ['import', join(dir, 'events.json'), join(dir, 'listen.jsonl'), '--inbox', inbox, '--provider', 'stripe', '--json'];
  const first = await hookdrill(args);
  assert.equal(first.code, 0, first.stderr);
  assert.deepEqual((({ read, stored, duplicates }) => ({ read, stored, duplicates }))(JSON.parse(first.stdout) as Record<string, number>), {
    read: 4,
    stored: 3,
    duplicates: 1,
  });
  const again = await hookdrill(args);
  assert.equal((JSON.parse(again.stdout) as { stored: number; duplicates: number }).duplicates, 4);
  const db = openSqliteInbox(inbox, { readonly: true, create: false });
  try {
    const row = await db.get({ source: 'stripe', deliveryId: 'evt_imp_3' });
    assert.equal(row?.status, 'pending');
    assert.equal(row?.eventType, 'invoice.paid');
    assert.deepEqual(JSON.parse(String(row?.body)), stripeEvent('evt_imp_3'));
    assert.equal(row?.headers['x-hookdrill-origin'], 'import');
  } finally {
    await db.close();
  }
});

test('import: a HAR file of GitHub deliveries — raw body and headers kept (credentials dropped), keyed by X-GitHub-Delivery; one without an id skipped', async () => {
  const dir = tempDir();
  const inbox = join(dir, 'inbox.db');
  const body = '{"action":"opened","issue":{"number":7}}';
  const entry = (id: string | undefined) => ({
    // When the capture saw it arrive: the row's received time, not the import's.
    startedDateTime: '2026-11-30T03:04:05.678Z',
    request: {
      method: 'POST',
      url: 'https://example.com/hooks',
      headers: [
        { name: 'Content-Type', value: 'application/json' },
        { name: 'X-GitHub-Event', value: 'issues' },
        ...(id ? [{ name: 'X-GitHub-Delivery', value: id }] : []),
        { name: 'X-Hub-Signature-256', value: 'sha256=abc' },
        { name: 'Authorization', value: 'Bearer hunter2' },
      ],
      postData: { mimeType: 'application/json', text: body },
    },
  });
  const har = {
    log: {
      version: '1.2',
      entries: [entry('72d3162e-cc78-11e3-81ab-4c9367dc0958'), entry(undefined), { request: { method: 'GET', headers: [] } }],
    },
  };
  writeFileSync(join(dir, 'capture.har'), JSON.stringify(har));
  const r = await hookdrill(['import', join(dir, 'capture.har'), '--inbox', inbox, '--provider', 'github']);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /skipped .*capture\.har#entry 2: no github delivery id/);
  assert.match(r.stdout, /2 read · 1 stored/);
  const db = openSqliteInbox(inbox, { readonly: true, create: false });
  try {
    const row = await db.get({ source: 'github', deliveryId: '72d3162e-cc78-11e3-81ab-4c9367dc0958' });
    assert.equal(String(row?.body), body, 'the raw bytes, not a re-serialisation');
    assert.equal(row?.eventType, 'issues.opened');
    assert.equal(row?.headers['x-hub-signature-256'], 'sha256=abc');
    assert.equal(row?.headers.authorization, undefined, 'credentials are never stored');
    assert.equal(row?.receivedAt, Date.parse('2026-11-30T03:04:05.678Z'), 'received when the HAR says it arrived');
  } finally {
    await db.close();
  }
});

test('import: a file that is not JSON is one line, exit 2, and nothing is written — not even from the good file before it', async () => {
  const dir = tempDir();
  const inbox = join(dir, 'inbox.db');
  writeFileSync(join(dir, 'good.json'), JSON.stringify([stripeEvent('evt_good')]));
  writeFileSync(join(dir, 'bad.jsonl'), '{"id": "evt_x"}\nnot json at all\n');
  const r = await hookdrill(['import', join(dir, 'good.json'), join(dir, 'bad.jsonl'), '--inbox', inbox, '--provider', 'stripe']);
  assert.equal(r.code, 2);
  assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
  assert.match(r.stderr, /bad\.jsonl:2: not valid JSON/);
  assert.equal(existsSync(inbox), false, 'no inbox created, nothing half-imported');
});

const har = (entries: unknown[]) => JSON.stringify({ log: { version: '1.2', entries } });
const post = (extra: Record<string, unknown> = {}) => ({
  request: {
    method: 'POST',
    url: 'http://x/hooks',
    headers: [{ name: 'Content-Type', value: 'application/json' }],
    postData: { mimeType: 'application/json', text: JSON.stringify(stripeEvent('evt_har')) },
    ...extra,
  },
});

test('import: a malformed HAR is one line naming the entry (and header), exit 2, nothing written — never an internal error', async () => {
  const cases: [string, unknown[], RegExp][] = [
    ['a null entry', [post(), null], /#entry 2: not an object/],
    ['a header without a name', [post({ headers: [{ value: 'x' }] })], /#entry 1: header 1 has no name/],
    ['headers as an object', [post({ headers: { 'Content-Type': 'application/json' } })], /#entry 1: request\.headers is not a list/],
    ['a number as postData.text', [post({ postData: { text: 42 } })], /#entry 1: request\.postData\.text is not text/],
    ['a number as method', [post({ method: 7 })], /#entry 1: request\.method is not text/],
    [
      'an object as a header value',
      [post({ headers: [{ name: 'X-Note', value: { a: 1 } }] })],
      /#entry 1: header X-Note: its value is an object, not text/,
    ],
    [
      'ESC in a header value',
      [post({ headers: [{ name: 'X-Note', value: 'a\u001b[2Jb' }] })],
      /#entry 1: header X-Note: its value holds a control character \(0x1b\)/,
    ],
  ];
  for (const [what, entries, message] of cases) {
    const dir = tempDir();
    const inbox = join(dir, 'inbox.db');
    writeFileSync(join(dir, 'c.har'), har(entries));
    const r = await hookdrill(['import', join(dir, 'c.har'), '--inbox', inbox, '--provider', 'stripe']);
    assert.equal(r.code, 2, `${what}: ${r.stderr}`);
    assert.equal(r.stderr.trim().split('\n').length, 1, `${what}: ${r.stderr}`);
    assert.match(r.stderr, message, what);
    assert.doesNotMatch(r.stderr, /internal error/, what);
    assert.equal(existsSync(inbox), false, `${what}: nothing written`);
  }
});

test('import: JSON nested 100,000 deep is stored as its bytes from JSON lines, and refused by place (exit 2) from an array that must be rewritten', async () => {
  const dir = tempDir();
  const inbox = join(dir, 'inbox.db');
  const deep = `{"id":"evt_deep","object":"event","type":"invoice.paid","data":${'['.repeat(100_000)}${']'.repeat(100_000)}}`;
  writeFileSync(join(dir, 'deep.jsonl'), `${deep}\n`);
  const lines = await hookdrill(['import', join(dir, 'deep.jsonl'), '--inbox', inbox, '--provider', 'stripe']);
  assert.equal(lines.code, 0, lines.stderr);
  const db = openSqliteInbox(inbox);
  assert.equal((await db.get({ source: 'stripe', deliveryId: 'evt_deep' }))?.body?.toString(), deep, 'the line, byte for byte');
  await db.close();
  writeFileSync(join(dir, 'deep.json'), `[${deep}]`);
  const array = await hookdrill(['import', join(dir, 'deep.json'), '--inbox', join(dir, 'other.db'), '--provider', 'stripe']);
  assert.equal(array.code, 2, array.stderr);
  assert.match(array.stderr, /deep\.json#1: nested too deep to be written as JSON/);
});

test('import: text that is not UTF-8 is refused by line (exit 2), never stored with replacement characters', async () => {
  const dir = tempDir();
  const inbox = join(dir, 'inbox.db');
  const good = Buffer.from(`${JSON.stringify(stripeEvent('evt_a'))}\n`);
  const bad = Buffer.concat([
    Buffer.from('{"id":"evt_b","object":"event","type":"invoice.paid","note":"'),
    Buffer.from([0xff, 0xfe]),
    Buffer.from('"}\n'),
  ]);
  writeFileSync(join(dir, 'latin.jsonl'), Buffer.concat([good, bad]));
  const r = await hookdrill(['import', join(dir, 'latin.jsonl'), '--inbox', inbox, '--provider', 'stripe']);
  assert.equal(r.code, 2, r.stderr);
  assert.match(r.stderr, /latin\.jsonl:2: not valid UTF-8: a body must be stored as the bytes it was/);
  assert.equal(existsSync(inbox), false);
});

test('import: nothing imported is not a success — every capture skipped, or none at all, exits 1 and says so', async () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'noids.jsonl'), '{"object":"event"}\n{"object":"event"}\n');
  const r = await hookdrill(['import', join(dir, 'noids.jsonl'), '--inbox', join(dir, 'a.db'), '--provider', 'stripe']);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.match(r.stdout, /nothing imported: every capture was skipped/);
  writeFileSync(join(dir, 'gets.har'), har([{ request: { method: 'GET', url: 'http://x/', headers: [] } }]));
  const g = await hookdrill(['import', join(dir, 'gets.har'), '--inbox', join(dir, 'b.db'), '--provider', 'stripe']);
  assert.equal(g.code, 1, g.stdout + g.stderr);
  assert.match(g.stdout, /nothing imported: the files hold no capture/);
});

test('import interrupted (SIGINT): each batch before it is written whole, nothing after, and it says how many — a second run finishes the rest', async () => {
  const { spawn } = await import('node:child_process');
  const { BIN } = await import('./helpers/cli.js');
  const dir = tempDir();
  const inbox = join(dir, 'inbox.db');
  const n = 300_000;
  const file = join(dir, 'many.jsonl');
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(JSON.stringify(stripeEvent(`evt_${i}`)));
  writeFileSync(file, `${parts.join('\n')}\n`);
  const child = spawn(process.execPath, [BIN, 'import', file, '--inbox', inbox, '--provider', 'stripe', '--json'], {
    env: { ...process.env, CI: 'true' },
  });
  let out = '';
  let err = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (err += c.toString()));
  // Once the inbox file exists, the writing has begun: interrupt it.
  const { until } = await import('./helpers/until.js');
  await until(() => existsSync(inbox), 'the import to start writing', 30_000);
  child.kill('SIGINT');
  const code = await new Promise<number | null>((r) => child.on('exit', r));
  assert.equal(code, 1, err);
  assert.match(err, /interrupted; stopping and reporting/);
  const result = JSON.parse(out) as { interrupted?: { done: number }; stored: number };
  assert.ok(result.interrupted, out);
  assert.ok(result.stored < n, `it stopped early (${result.stored})`);
  assert.equal(result.stored % 500, 0, 'whole batches only');
  const db = openSqliteInbox(inbox);
  assert.equal((await db.stats()).counts.pending, result.stored, 'what it said it wrote is what is there');
  await db.close();
  const again = await hookdrill(['import', file, '--inbox', inbox, '--provider', 'stripe', '--json']);
  assert.equal(again.code, 0, again.stderr);
  const second = JSON.parse(again.stdout) as { stored: number; duplicates: number };
  assert.deepEqual([second.stored + result.stored, second.duplicates], [n, result.stored]);
});
