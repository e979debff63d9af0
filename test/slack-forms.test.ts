import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { run as send } from '../src/delivery/send.js';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { providers } from '../src/providers/index.js';
import { createReceiverServer, listen } from '../src/receiver/server.js';
import { Worker } from '../src/worker/index.js';
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
  // Legacy interactivity (message attachments' buttons, dialogs), still sent to apps that use it.
  'slack/interactive_message',
  'slack/dialog_submission',
  'slack/dialog_cancellation',
  'slack/dialog_suggestion',
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
      'dialog_cancellation',
      'dialog_submission',
      'dialog_suggestion',
      'interactive_message',
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

test("Slack's ssl_check goes out unsigned, as Slack sends it; listen answers it 200 and stores nothing — and verifies anything else that says ssl_check", async () => {
  const seen: { headers: Record<string, unknown>; body: string }[] = [];
  const server = await startServer(async (req, res) => {
    seen.push({ headers: req.headers, body: req.rawBody.toString() });
    reply(res, 200);
  });
  try {
    const r = await send({ url: server.url, provider: 'slack', secrets: [SECRET], fixtures: ['slack/ssl_check'], noRetry: true });
    assert.equal(r.ok, true);
    assert.equal(seen[0]?.body, 'ssl_check=1&token=gIkuvaNzQIHg97ATvDxqgjtO');
    assert.equal(seen[0]?.headers['x-slack-signature'], undefined);
    assert.equal(seen[0]?.headers['x-slack-request-timestamp'], undefined);
    assert.equal(seen[0]?.headers['content-type'], 'application/x-www-form-urlencoded');
  } finally {
    await server.close();
  }

  const inbox = openSqliteInbox(join(tempDir(), 'inbox.db'));
  const receiver = createReceiverServer({ provider: providers.slack, secrets: [SECRET], inbox });
  const { port } = await listen(receiver, 0, '127.0.0.1');
  const post = (body: string, type = 'application/x-www-form-urlencoded') =>
    fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: { 'content-type': type }, body });
  try {
    const r = await send({
      url: `http://127.0.0.1:${port}/`,
      provider: 'slack',
      secrets: [SECRET],
      fixtures: ['slack/ssl_check'],
      noRetry: true,
    });
    assert.equal(r.deliveries[0]?.attempts[0]?.status, 200);
    // bolt's rule: a form whose ssl_check is exactly 1; anything else is verified, and refused unsigned.
    assert.equal((await post('ssl_check=0&token=x')).status, 401);
    assert.equal((await post('ssl_check=true&token=x')).status, 401);
    assert.equal((await post('{"ssl_check":"1"}', 'application/json')).status, 401);
    assert.equal((await post('ssl_check=1&payload=%7B%7D', 'application/json')).status, 401);
    assert.equal((await inbox.select({ source: 'slack' }, { limit: 10 })).length, 0, 'nothing stored');
  } finally {
    receiver.closeAllConnections();
    await new Promise((done) => receiver.close(done));
    await inbox.close();
  }
});

test("Slack's app_rate_limited notice: JSON, signed, verified by Slack's documented check, its minute fresh; check does not demand it be stored", async () => {
  const seen: { body: Record<string, unknown> }[] = [];
  const server = await startServer(async (req, res) => {
    await verifyWithOfficialCode('slack', req.rawBody, req.headers, SECRET);
    seen.push({ body: JSON.parse(req.rawBody.toString()) });
    reply(res, 200);
  });
  try {
    const before = Math.floor(Date.now() / 1000);
    const r = await send({ url: server.url, provider: 'slack', secrets: [SECRET], fixtures: ['slack/app_rate_limited'], noRetry: true });
    assert.equal(r.ok, true);
    const minute = seen[0]?.body.minute_rate_limited as number;
    assert.equal(minute % 60, 0);
    assert.ok(minute <= before + 60 && minute > before - 120, `a minute of now: ${minute}`);
    assert.equal(providers.slack.isNotice?.(seen[0]?.body as never), true);
    assert.equal(providers.slack.isNotice?.({ type: 'event_callback' }), false);
  } finally {
    await server.close();
  }
});

test('a worker reads a stored form as its sender means it — the JSON of its payload=, else its fields — never a dead row for "not JSON"', async () => {
  const inbox = openSqliteInbox(join(tempDir(), 'inbox.db'));
  const server = createReceiverServer({ provider: providers.slack, secrets: [SECRET], inbox });
  const { port } = await listen(server, 0, '127.0.0.1');
  try {
    const fixtures = ['slack/command', 'slack/block_actions', 'slack/dialog_submission', 'slack/interactive_message'];
    const r = await send({ url: `http://127.0.0.1:${port}/`, provider: 'slack', secrets: [SECRET], fixtures, noRetry: true });
    assert.equal(r.ok, true);
    const seen = new Map<string, Record<string, unknown>>();
    const worker = new Worker({
      inbox,
      maxAttempts: 1,
      handler: async (item) => {
        seen.set(item.eventType ?? '', item.json as Record<string, unknown>);
      },
    });
    await worker.drain();
    const rows = await inbox.select({ source: 'slack' }, { limit: 10 });
    assert.deepEqual(
      rows.map((row) => `${row.eventType}:${row.status}`).sort(),
      ['block_actions:done', 'command:done', 'dialog_submission:done', 'interactive_message:done'],
      rows.map((row) => row.lastError ?? '').join('; '),
    );
    assert.equal(seen.get('command')?.command, '/weather', "a command's fields");
    assert.equal(seen.get('block_actions')?.type, 'block_actions', "an interaction's payload JSON");
    assert.deepEqual((seen.get('dialog_submission')?.submission as Record<string, unknown> | undefined)?.comment, null);
  } finally {
    server.closeAllConnections();
    await new Promise((done) => server.close(done));
    await inbox.close();
  }
});
