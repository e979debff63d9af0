import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { run as send } from '../src/delivery/send.js';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { providers } from '../src/providers/index.js';
import { createReceiverServer, listen } from '../src/receiver/server.js';
import { verifyWithOfficialCode } from './helpers/official.js';
import { startServer, reply } from './helpers/server.js';
import { tempDir } from './helpers/tmp.js';

const SECRET = '8f742231b10e8888abcd99yyyzzz85a5';
const FORMS = [
  'slack/command',
  'slack/block_actions',
  'slack/view_submission',
  'slack/view_closed',
  'slack/shortcut',
  'slack/message_action',
  'slack/block_suggestion',
];

test("Slack's slash command and interactions go out form-encoded, signed over the raw form bytes, and verify by Slack's documented check", async () => {
  const seen: { type: string | undefined; body: string }[] = [];
  const server = await startServer(async (req, res) => {
    await verifyWithOfficialCode('slack', req.rawBody, req.headers, SECRET);
    seen.push({ type: req.headers['content-type'], body: req.rawBody.toString() });
    reply(res, 200);
  });
  try {
    const r = await send({ url: server.url, provider: 'slack', secrets: [SECRET], fixtures: FORMS, noRetry: true });
    assert.equal(r.ok, true, JSON.stringify(r.deliveries.map((d) => d.attempts)));
    assert.equal(seen.length, FORMS.length);
    for (const s of seen) assert.equal(s.type, 'application/x-www-form-urlencoded');
    assert.match(seen[0]?.body ?? '', /^token=.*&command=%2Fweather&/);
    assert.ok(seen.slice(1).every((s) => s.body.startsWith('payload=%7B')));
  } finally {
    await server.close();
  }
});

test('listen verifies, stores and dedupes form requests, keyed by their trigger_id (one without: by its payload)', async () => {
  const path = join(tempDir(), 'inbox.db');
  const inbox = openSqliteInbox(path);
  const server = createReceiverServer({ provider: providers.slack, secrets: [SECRET], inbox });
  const { port } = await listen(server, 0, '127.0.0.1');
  try {
    const r = await send({
      url: `http://127.0.0.1:${port}/`,
      provider: 'slack',
      secrets: [SECRET],
      fixtures: FORMS,
      duplicates: '2',
      noRetry: true,
    });
    assert.equal(r.ok, true);
    const rows = await inbox.select({ source: 'slack' }, { limit: 100 });
    assert.equal(rows.length, FORMS.length, 'each stored once, its duplicate acknowledged');
    const types = rows.map((row) => row.eventType).sort();
    assert.deepEqual(types, [
      'block_actions',
      'block_suggestion',
      'command',
      'message_action',
      'shortcut',
      'view_closed',
      'view_submission',
    ]);
    // What send reports is what listen stored: chaos and check can find each one.
    assert.deepEqual(rows.map((row) => row.deliveryId).sort(), [...new Set(r.deliveries.map((d) => d.deliveryId))].sort());
    const command = rows.find((row) => row.eventType === 'command');
    assert.match(command?.deliveryId ?? '', /^\d+\.\d{10}\.[0-9a-f]{32}$/, 'a fresh trigger_id');
  } finally {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
    await inbox.close();
  }
});
