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
