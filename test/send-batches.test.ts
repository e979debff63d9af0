import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hookdrill } from './helpers/cli.js';
import { startServer, reply } from './helpers/server.js';
import { SECRET, startPython, storedIds } from './helpers/verdicts.js';
import { tempDir } from './helpers/tmp.js';

/**
 * Issue 51, item 2: send batches as the provider batches. LINE, SendGrid and HubSpot put several
 * events in one body, so a receiver that keeps the first event of a body loses the rest in
 * production; send used to post one event a body, and such a receiver kept everything it was sent.
 */

const KEYS = tempDir();
const env = { HOOKDRILL_KEYS_DIR: KEYS };

type LineBody = { events: { webhookEventId: string; type: string }[] };

test('send puts LINE events three to a body by default (count is events), --batch 1 one a body; --batch is refused where the provider sends one event a request', async () => {
  const server = await startServer((_req, res) => reply(res, 200));
  try {
    const r = await hookdrill(
      ['send', 'line/message.text', 'line/follow', '--count', '7', '--url', server.url, '--secret', SECRET.line as string],
      env,
    );
    assert.equal(r.code, 0, r.stderr);
    const bodies = server.requests.map((q) => JSON.parse(q.rawBody.toString('utf8')) as LineBody);
    assert.deepEqual(bodies.map((b) => b.events.length).sort(), [1, 3, 3]);
    const ids = bodies.flatMap((b) => b.events.map((e) => e.webhookEventId));
    assert.equal(new Set(ids).size, 7, 'each event its own id');
    assert.match(r.stdout, /7 events in 3 bodies/);
    assert.match(r.stdout, /message, follow \(3 events\)|follow, message \(3 events\)/);

    server.requests.length = 0;
    const one = await hookdrill(
      ['send', 'line/message.text', '--count', '4', '--batch', '1', '--url', server.url, '--secret', SECRET.line as string],
      env,
    );
    assert.equal(one.code, 0, one.stderr);
    assert.equal(server.requests.length, 4);

    const refused = await hookdrill(
      ['send', 'stripe/invoice.paid', '--batch', '2', '--url', server.url, '--secret', SECRET.stripe as string],
      env,
    );
    assert.equal(refused.code, 2);
    assert.match(refused.stderr, /^hookdrill: --batch: Stripe sends one event a request/);
    assert.equal(refused.stderr.trim().split('\n').length, 1);
  } finally {
    await server.close();
  }
});

test('sent as LINE batches, a Python receiver that keeps the first event of each body loses the rest; a right one keeps all six', async () => {
  for (const [flaw, kept] of [
    ['', 6],
    ['first-event-only', 2],
  ] as const) {
    const receiver = await startPython('line', flaw ? { flaw } : {});
    try {
      const r = await hookdrill(
        ['send', 'line/message.text', '--count', '6', '--url', receiver.url, '--secret', SECRET.line as string],
        env,
      );
      assert.equal(r.code, 0, r.stdout + r.stderr);
      const ids = storedIds(receiver.store);
      assert.equal(ids.length, kept, `${flaw || 'right'}: ${ids.join(' ')}`);
    } finally {
      receiver.stop();
    }
  }
});

test('send FILE takes a captured SendGrid batch (a list of events): sent as captured, each event a fresh sg_event_id on every send', async () => {
  const dir = tempDir();
  const file = join(dir, 'captured.json');
  const captured = [1, 2, 3, 4, 5].map((i) => ({
    email: `user${i}@example.com`,
    timestamp: 1_700_000_000 + i,
    event: i % 2 ? 'delivered' : 'open',
    sg_event_id: `captured-${i}`,
    sg_message_id: `message-${i}`,
  }));
  writeFileSync(file, JSON.stringify(captured));
  const server = await startServer((_req, res) => reply(res, 200));
  try {
    for (let n = 0; n < 2; n++) {
      const r = await hookdrill(['send', file, '--provider', 'sendgrid', '--url', server.url], env);
      assert.equal(r.code, 0, r.stderr);
      assert.match(r.stdout, /5 events in 1 body/);
      assert.match(r.stdout, /delivered, open \(5 events\)/);
    }
    assert.equal(server.requests.length, 2);
    const bodies = server.requests.map((q) => JSON.parse(q.rawBody.toString('utf8')) as typeof captured);
    for (const b of bodies) {
      assert.deepEqual(
        b.map((e) => e.email),
        captured.map((e) => e.email),
      );
      assert.deepEqual(
        b.map((e) => e.sg_message_id),
        captured.map((e) => e.sg_message_id),
      );
    }
    const ids = bodies.flatMap((b) => b.map((e) => e.sg_event_id));
    assert.equal(new Set(ids).size, 10, 'ten events, ten ids');
    assert.ok(!ids.some((id) => id.startsWith('captured-')), 'a captured id is never sent again as new');

    // A list without --provider: one line, exit 2, saying what a list body is for.
    const bare = await hookdrill(['send', file, '--provider', 'stripe', '--url', server.url, '--secret', SECRET.stripe as string], env);
    assert.equal(bare.code, 2);
    assert.match(bare.stderr, /must hold one JSON object \(the event body\), or with --provider sendgrid or hubspot a list of events/);
  } finally {
    await server.close();
  }
});
