import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { run as send } from '../src/delivery/send.js';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { hookdrill } from './helpers/cli.js';
import { reply, startServer } from './helpers/server.js';
import { spawnHookdrill } from './helpers/spawned.js';
import { tempDir } from './helpers/tmp.js';

const SECRET = 'whsec_listen_test';

test('listen --forward-to: acknowledged at once, forwarded with retries until the app takes it', async () => {
  const inboxPath = join(tempDir(), 'inbox.db');
  // The app fails twice, then succeeds.
  const app = await startServer((_req, res, n) => reply(res, n <= 2 ? 500 : 200, n <= 2 ? 'crm unavailable' : 'ok'));
  const listen = spawnHookdrill([
    'listen',
    '--json',
    '--port',
    '0',
    '--provider',
    'stripe',
    '--secret',
    SECRET,
    '--inbox',
    inboxPath,
    '--forward-to',
    app.url,
    '--backoff-base',
    '20ms',
    '--backoff-max',
    '50ms',
  ]);
  try {
    const ready = await listen.waitFor((l) => l.event === 'ready');
    assert.equal(ready.inbox, inboxPath);
    const result = await send({ url: String(ready.url), provider: 'stripe', secrets: [SECRET], noRetry: true });
    assert.equal(result.ok, true, 'the sender is answered 200 before the app has it');
    const id = result.deliveries[0]?.deliveryId;
    const done = await listen.waitFor((l) => l.event === 'processed' && l.outcome === 'done');
    assert.equal(done.deliveryId, id);
    assert.equal(done.attempt, 3);
    const outcomes = listen.lines.filter((l) => l.event === 'processed').map((l) => l.outcome);
    assert.deepEqual(outcomes, ['retry', 'retry', 'done']);
    assert.match(String(listen.lines.find((l) => l.outcome === 'retry')?.error), /forward target answered 500: crm unavailable/);
    // The app got the raw body and the delivery's identity.
    assert.equal(app.requests.length, 3);
    assert.equal(app.requests[2]?.headers['x-hookdrill-delivery-id'], id);
    assert.equal(app.requests[2]?.headers['x-hookdrill-attempt'], '3');
    assert.equal(JSON.parse(app.requests[2]?.rawBody.toString() ?? '{}').id, id);

    listen.child.kill('SIGTERM');
    assert.equal(await listen.exit, 0);
    const stopped = listen.lines.find((l) => l.event === 'stopped') as { processed: { done: number; retried: number } } | undefined;
    assert.deepEqual(stopped?.processed, { done: 1, retried: 2, dead: 0 });
    const inbox = openSqliteInbox(inboxPath);
    assert.equal((await inbox.get({ source: 'stripe', deliveryId: id! }))?.status, 'done');
    await inbox.close();
  } finally {
    listen.child.kill('SIGKILL');
    await app.close();
  }
});

test('listen: a port in use, an unwritable inbox or a foreign file is one line and exit 2', async () => {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', r));
  const port = String((blocker.address() as { port: number }).port);
  const dir = tempDir();
  try {
    const inUse = await hookdrill(['listen', '--provider', 'stripe', '--secret', SECRET, '--port', port, '--inbox', join(dir, 'a.db')]);
    assert.equal(inUse.code, 2);
    assert.match(inUse.stderr, new RegExp(`^hookdrill: port ${port} on 127.0.0.1 is already in use\\n$`));
    const noDir = await hookdrill([
      'listen',
      '--provider',
      'stripe',
      '--secret',
      SECRET,
      '--port',
      '0',
      '--inbox',
      join(dir, 'missing', 'x.db'),
    ]);
    assert.equal(noDir.code, 2);
    assert.match(noDir.stderr, /^hookdrill: cannot open inbox .*x\.db/);
    assert.equal(noDir.stderr.trim().split('\n').length, 1);
    const noSecret = await hookdrill(['listen', '--provider', 'stripe', '--port', '0', '--inbox', join(dir, 'b.db')]);
    assert.equal(noSecret.code, 2);
  } finally {
    blocker.close();
  }
});

test('listen refuses a lease no longer than the forward timeout (a slow forward would be sent twice)', async () => {
  const r = await hookdrill([
    'listen',
    '--provider',
    'stripe',
    '--secret',
    SECRET,
    '--port',
    '0',
    '--inbox',
    join(tempDir(), 'x.db'),
    '--forward-to',
    'http://127.0.0.1:1/',
    '--lease',
    '5s',
    '--forward-timeout',
    '10s',
  ]);
  assert.equal(r.code, 2);
  assert.match(r.stderr, /--lease \(5s\) must be longer than --forward-timeout \(10s\)/);
});
