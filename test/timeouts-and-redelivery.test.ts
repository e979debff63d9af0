// Timeouts a slow receiver cannot slip past, and deliveries re-signed or redelivered as the provider would.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { providers } from '../src/providers/index.js';
import { BIN, hookdrill } from './helpers/cli.js';
import { live as liveWith } from './helpers/live.js';
import { reply, startServer } from './helpers/server.js';
import { freePort } from './helpers/ports.js';
import { tempDir } from './helpers/tmp.js';

const SECRET = 'whsec_edges';
const _SIMPLE = fileURLToPath(new URL('./receivers/simple.js', import.meta.url));
const live = (args: string[]) => liveWith(args, SECRET);

test('check against a receiver that never answers: one finding, valid cut at --timeout, and the copies not judged', async () => {
  const hang = await startServer(() => undefined);
  try {
    const p = live([
      'check',
      '--url',
      hang.url,
      '--provider',
      'stripe',
      '--only',
      'valid,duplicate,retry,concurrent-duplicates',
      '--timeout',
      '300ms',
    ]);
    await p.waitFor('out', /FAIL valid +timeout in \d+ms/, 5_000);
    assert.equal(await p.exit, 1);
    // One finding: the copies wait on a valid delivery answered, so they are not judged.
    assert.match(p.out(), /FAIL 0 passed, 1 failed, 0 warnings, \d+ skipped, 3 not judged/);
    assert.match(p.out(), /SKIP duplicate +not judged: valid deliveries get no answer \(see valid\)/);
  } finally {
    await hang.close();
  }
});

test('check prints each case as it finishes: valid is out while the next case still waits on its timeout', async () => {
  // Answers the first request, then hangs: valid passes, duplicate's copies wait out --timeout.
  let seen = 0;
  const server = await startServer((_req, res) => {
    if (seen++ === 0) reply(res, 200);
  });
  try {
    const p = live(['check', '--url', server.url, '--provider', 'stripe', '--only', 'valid,duplicate', '--timeout', '1s']);
    await p.waitFor('out', /PASS valid/, 5_000);
    assert.doesNotMatch(p.out(), /passed, .* failed/, 'the first case is out before the run ends');
    assert.equal(await p.exit, 1);
    assert.match(p.out(), /FAIL duplicate +timeout/);
  } finally {
    await server.close();
  }
});

test("replay without --provider re-signs as the rows' source, and the official verifier accepts it", async () => {
  const path = join(tempDir(), 'inbox.db');
  const inbox = openSqliteInbox(path);
  const body = Buffer.from('{"id":"evt_src","object":"event","type":"invoice.paid"}');
  await inbox.put({
    source: 'stripe',
    deliveryId: 'evt_src',
    eventType: 'invoice.paid',
    body,
    headers: {},
    receivedAt: Date.now() - 3_600_000,
  });
  await inbox.close();
  const app = await startServer((req, res) => {
    try {
      providers.stripe.verify(req.rawBody, req.headers, [SECRET]);
      reply(res, 200);
    } catch {
      reply(res, 400);
    }
  });
  try {
    const r = await hookdrill(['replay', '--inbox', path, '--id', 'evt_src', '--to', app.url, '--secret', SECRET]);
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.ok(app.requests[0]?.headers['stripe-signature']);
  } finally {
    await app.close();
  }
});

test("check --timeout longer than the provider's cannot pass a slow answer: Slack gives up after 3 s", async () => {
  const slow = await startServer(async (_req, res) => {
    await new Promise((r) => setTimeout(r, 3_300));
    reply(res, 200);
  });
  try {
    const r = await hookdrill([
      'check',
      '--url',
      slow.url,
      '--provider',
      'slack',
      '--secret',
      'slack-secret',
      '--only',
      'valid',
      '--timeout',
      '10s',
    ]);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stdout, /FAIL valid +timeout .*/);
  } finally {
    await slow.close();
  }
});

test('chaos with a provider that never retries (GitHub): what the kill cut off is redelivered once, and listen passes', async () => {
  const inbox = join(tempDir(), 'inbox.db');
  const port = await freePort();
  const r = await hookdrill([
    'chaos',
    '--receiver',
    `node ${BIN} listen --provider github --secret ${SECRET} --port ${port} --inbox ${inbox}`,
    '--url',
    `http://127.0.0.1:${port}/`,
    '--provider',
    'github',
    '--secret',
    SECRET,
    '--inbox',
    inbox,
    '--events',
    '10',
    '--rounds',
    '2',
    '--json',
  ]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  const result = JSON.parse(r.stdout) as { totals: { acknowledged: number; sent: number; refused: string[] } };
  assert.equal(result.totals.acknowledged, result.totals.sent);
  assert.deepEqual(result.totals.refused, []);
});
