/**
 * hookdrill's pack (src/providers/pack.ts, issue 55): declarations shipped for nine senders a plain
 * HMAC of the body describes, known to every command by name as a built-in provider is. Table-driven,
 * one row a sender: a Python receiver written to the sender's docs (test/receivers/pack_scheme.py,
 * apart from the declarations) passes check; one wrong in the way its scheme invites fails with
 * the right diagnosis; where the sender publishes a library (Mux, Coinbase Commerce), it judges
 * send's requests and, as a receiver, passes check.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import Mux from '@mux/mux-node';
import { run as send } from '../src/delivery/send.js';
import { PACK_NAMES } from '../src/providers/pack.js';
import { hookdrill } from './helpers/cli.js';
import { spawnHookdrill } from './helpers/spawned.js';
import { startServer } from './helpers/server.js';
import { tempDir } from './helpers/tmp.js';
import { SECRET, checkReceiver, explain, named, official, python } from './helpers/verdicts.js';

/** coinbase-commerce-node: CommonJS, without types. */
const coinbase = createRequire(import.meta.url)('coinbase-commerce-node') as {
  Webhook: { verifyEventBody(raw: string, signature: string, secret: string): { id: string; type: string } };
};

/** Each sender, and the receiver wrong in the way its scheme invites: its flaw, the case it fails, what check says. */
const ROWS: { sender: string; flaw: string; fails: string; says: RegExp }[] = [
  // Bitbucket's docs: "Pass the raw body" — a framework's parsed body dumped again is not it.
  { sender: 'bitbucket', flaw: 'reserialize-json', fails: 'reserialized', says: /re-serialised copy of the JSON, not the raw bytes/ },
  // PagerDuty sends one v1= per active secret while one is rotated; "if at least one matches".
  { sender: 'pagerduty', flaw: 'first-v1-only', fails: 'rotation', says: /refuses a valid signature when X-PagerDuty-Signature holds two/ },
  // The SDK refuses a t older than 300 s: a receiver with no window takes a replay.
  { sender: 'mux', flaw: 'accepts-stale', fails: 'stale-timestamp', says: /accepts a signature 6 minutes old/ },
  { sender: 'vercel', flaw: 'reserialize-json', fails: 'reserialized', says: /re-serialised copy of the JSON/ },
  // Calendly's sample refuses a t older than 3 minutes.
  { sender: 'calendly', flaw: 'accepts-stale', fails: 'stale-timestamp', says: /accepts a signature \d+ minutes old/ },
  { sender: 'typeform', flaw: 'reserialize-json', fails: 'reserialized', says: /re-serialised copy of the JSON/ },
  // Sentry's own docs sample signs JSON.stringify(request.body), a copy parsed and written again.
  { sender: 'sentry', flaw: 'reserialize-json', fails: 'reserialized', says: /re-serialised copy of the JSON/ },
  // Coinbase retries for days: a receiver that stores every request keeps each retry again.
  { sender: 'coinbase', flaw: 'no-dedupe', fails: 'duplicate', says: /stores a copy of a delivery it already holds/ },
  { sender: 'notion', flaw: 'no-dedupe', fails: 'duplicate', says: /stores a copy of a delivery it already holds/ },
];

test('the pack is every row here, and profiles lists each sender as the pack declares it', async () => {
  assert.deepEqual(
    ROWS.map((r) => r.sender),
    [...PACK_NAMES],
  );
  const r = await hookdrill(['profiles'], {}, [], tempDir());
  assert.equal(r.code, 0, r.stderr);
  for (const name of PACK_NAMES)
    assert.match(r.stdout, new RegExp(`^${name} \\(default for ${name}\\)\\n[^\\n]*\\n[^\\n]*declared in hookdrill's pack`, 'm'), name);
});

test("a project file's own declaration of a pack sender wins (its retries), and profiles names the file", async () => {
  const dir = tempDir();
  writeFileSync(
    join(dir, 'hookdrill.config.json'),
    JSON.stringify({
      providers: {
        bitbucket: {
          signature: { header: 'X-Hub-Signature', algorithm: 'sha256', encoding: 'hex', content: '{body}', value: 'sha256={signature}' },
          eventType: { header: 'X-Event-Key' },
          timeout: '10s',
          retries: ['1m'],
        },
      },
    }),
  );
  const r = await hookdrill(['profiles', 'bitbucket'], {}, [], dir);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /declared in hookdrill\.config\.json\): 10s timeout; retries after 1m/);
  const all = await hookdrill(['profiles'], {}, [], dir);
  assert.equal((all.stdout.match(/^bitbucket \(default for bitbucket\)$/gm) ?? []).length, 1, 'listed once');
});

test('a project file may name a pack sender as its provider, as it names a built-in one', async () => {
  const dir = tempDir();
  writeFileSync(join(dir, 'hookdrill.config.json'), JSON.stringify({ provider: 'pagerduty' }));
  const r = await hookdrill(['fixtures', 'show', 'pagerduty/incident.triggered'], {}, [], dir);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /^X-PagerDuty-Signature: /m);
});

test("hookdrill's own listen verifies and stores what send signs for a pack sender; another secret is refused", async () => {
  const dir = tempDir();
  const secret = SECRET.notion as string;
  const listen = spawnHookdrill(
    ['listen', '--json', '--port', '0', '--provider', 'notion', '--secret', secret, '--inbox', join(dir, 'inbox.db'), '--no-worker'],
    {},
    [],
    dir,
  );
  try {
    const ready = await listen.waitFor((l) => l.event === 'ready', 15_000);
    const sent = await hookdrill(
      ['send', '--provider', 'notion', '--secret', secret, '--url', String(ready.url), '--json', 'page.created', 'comment.created'],
      {},
      [],
      dir,
    );
    assert.equal(sent.code, 0, sent.stdout + sent.stderr);
    await listen.waitFor(() => listen.lines.filter((x) => x.result === 'stored').length === 2);
    const forged = await hookdrill(
      ['send', '--provider', 'notion', '--secret', 'secret_not_the_verification_token', '--url', String(ready.url), '--no-retry'],
      {},
      [],
      dir,
    );
    assert.equal(forged.code, 1, forged.stdout + forged.stderr);
    assert.equal(listen.lines.filter((x) => x.result === 'stored').length, 2, 'nothing more stored');
  } finally {
    listen.child.kill('SIGTERM');
    await listen.exit;
  }
});

for (const row of ROWS) {
  test(`${row.sender}: a receiver written to its docs passes check; one with ${row.flaw} fails ${row.fails}`, async () => {
    // Sentry's 1 s timeout makes latency (p99 under half of it) and unsigned-flood (each answered
    // within it) measures of this shared, loaded machine more than of the receiver: judged by
    // `hookdrill check` itself, left out here, where speed is not asserted.
    const more = row.sender === 'sentry' ? { skip: ['latency', 'unsigned-flood'] } : {};
    const right = await checkReceiver(row.sender, python(row.sender), more);
    const wrong = await checkReceiver(row.sender, python(row.sender, row.flaw), more);
    assert.deepEqual(named(right, 'fail'), [], explain(right));
    assert.equal(right.ok, true, explain(right));
    assert.ok(named(wrong, 'fail').includes(row.fails), explain(wrong));
    const failed = wrong.cases.find((c) => c.name === row.fails);
    assert.match(failed?.diagnosis ?? '', row.says, explain(wrong));
  });
}

/** send's requests to a real server, each judged by the sender's own library. */
async function sentAndJudged(sender: string, judge: (raw: Buffer, headers: Record<string, string>) => unknown): Promise<unknown[]> {
  // The request arrives either way; the judge's verdict (the event, or what it threw) is what is held.
  const verdicts: unknown[] = [];
  const server = await startServer(async (req, res) => {
    try {
      verdicts.push(await judge(req.rawBody, req.headers as Record<string, string>));
      res.writeHead(200).end();
    } catch (err) {
      verdicts.push(err);
      res.writeHead(400).end();
    }
  });
  try {
    await send({ provider: sender, secrets: [SECRET[sender] as string], url: server.url, noRetry: true });
  } finally {
    await server.close();
  }
  return verdicts;
}

test("Mux's own library (@mux/mux-node webhooks.unwrap) takes send's request, refuses it under another secret, and as a receiver passes check", async () => {
  const mux = new Mux({ tokenId: 'hookdrill', tokenSecret: 'hookdrill' });
  const [event] = await sentAndJudged('mux', (raw, h) => mux.webhooks.unwrap(raw.toString('utf8'), h, SECRET.mux));
  assert.equal((event as { type?: string }).type, 'video.asset.ready', String(event));
  const [refused] = await sentAndJudged('mux', (raw, h) => mux.webhooks.unwrap(raw.toString('utf8'), h, 'not-the-signing-secret'));
  assert.ok(refused instanceof Error, 'another secret is refused');
  const r = await checkReceiver('mux', official('mux'));
  assert.deepEqual(named(r, 'fail'), [], explain(r));
});

test("Coinbase Commerce's own library (coinbase-commerce-node Webhook.verifyEventBody) takes send's request, refuses it under another secret, and as a receiver passes check", async () => {
  const [event] = await sentAndJudged('coinbase', (raw, h) =>
    coinbase.Webhook.verifyEventBody(raw.toString('utf8'), h['x-cc-webhook-signature'] ?? '', SECRET.coinbase as string),
  );
  assert.equal((event as { type?: string }).type, 'charge:confirmed', String(event));
  const [refused] = await sentAndJudged('coinbase', (raw, h) =>
    coinbase.Webhook.verifyEventBody(raw.toString('utf8'), h['x-cc-webhook-signature'] ?? '', 'another-shared-secret'),
  );
  assert.ok(refused instanceof Error, 'another secret is refused');
  const r = await checkReceiver('coinbase', official('coinbase'));
  assert.deepEqual(named(r, 'fail'), [], explain(r));
});
