import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { run as check } from '../src/check/run.js';
import { CASE_NAMES } from '../src/check/cases/index.js';
import { MULTIBYTE_BODY_BYTES, straddling } from '../src/check/cases/common.js';
import { resolveFixtures, compileFixture } from '../src/fixtures/index.js';
import { UsageError } from '../src/util/errors.js';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import type { Inbox } from '../src/inbox/index.js';
import { providers } from '../src/providers/index.js';
import { createReceiverServer, listen } from '../src/receiver/server.js';
import { tempDir } from './helpers/tmp.js';

const SECRET = 'whsec_check_test';
// Above check's large-body case (4 MiB, a valid delivery every receiver must take).
const MAX_BYTES = 8 * 1024 * 1024;
const provider = providers.stripe;

type Flaw = 'dup500' | 'store-before-verify' | 'accepts-stale' | 'no-body-limit' | 'reserialized-verify';

/** A receiver like hookdrill's, broken in exactly one way. */
function broken(flaw: Flaw, inbox: Inbox) {
  return async (req: IncomingMessage, res: ServerResponse) => {
    const limit = flaw === 'no-body-limit' ? Infinity : MAX_BYTES;
    if (Number(req.headers['content-length'] ?? 0) > limit) {
      res.writeHead(413, { connection: 'close' }).end();
      res.on('finish', () => req.socket.destroy());
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    const id = provider.deliveryId(req.headers, raw) ?? createHash('sha256').update(raw).digest('hex');
    const put = () => inbox.put({ source: 'stripe', deliveryId: id, eventType: undefined, body: raw, headers: {}, receivedAt: Date.now() });
    if (flaw === 'store-before-verify') await put();
    let signed = raw;
    if (flaw === 'reserialized-verify') {
      try {
        // Written again as Stripe writes it (pretty, two spaces): real bodies still match, so only
        // the reserialized case (a body written another way) can find it out.
        signed = Buffer.from(JSON.stringify(JSON.parse(raw.toString()), null, 2));
      } catch {
        /* not JSON: verify the bytes */
      }
    }
    try {
      provider.verify(signed, req.headers, [SECRET], { toleranceSec: flaw === 'accepts-stale' ? 10 ** 9 : 300 });
    } catch {
      res.writeHead(401).end();
      return;
    }
    const { inserted } = await put();
    res.writeHead(!inserted && flaw === 'dup500' ? 500 : 200).end();
  };
}

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => Promise<void>) {
  const server = createServer((req, res) => void handler(req, res).catch(() => res.writeHead(500).end()));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(r);
      }),
  };
}

const failed = (r: Awaited<ReturnType<typeof check>>) => r.cases.filter((c) => c.status === 'fail').map((c) => c.name);

test("hookdrill's own receiver passes every case", async () => {
  const path = join(tempDir(), 'inbox.db');
  const inbox = openSqliteInbox(path);
  const server = createReceiverServer({ provider, secrets: [SECRET], inbox, maxBytes: MAX_BYTES });
  const { port } = await listen(server, 0, '127.0.0.1');
  try {
    const r = await check({ url: `http://127.0.0.1:${port}/`, provider: 'stripe', secrets: [SECRET], inbox: path, maxBytes: MAX_BYTES });
    assert.deepEqual(failed(r), [], JSON.stringify(r.cases.filter((c) => c.status !== 'pass')));
    // Every case but those of contracts Stripe's is not (batches, an empty Verify, a signed endpoint
    // check), GitHub's legacy signature, Slack's own three (its endpoint check, its forms, its retry headers) and Discord's two
    // (its PING, its probe) runs, and passes.
    const skipped = [
      'batch',
      'redelivered',
      'answer',
      'empty-batch',
      'forged-check',
      // SNS's handshake and its certificate host (issue 55).
      'subscription-confirmation',
      'forged-confirmation',
      'forged-certificate',
      // Graph's clientState in each notification of a batch (issue 55).
      'forged-item',
      // Stripe sends no JWT: its claims' cases are Pub/Sub push's.
      'wrong-audience',
      'expired-token',
      'future-token',
      'wrong-issuer',
      'forged-kid',
      'alg-none',
      'alg-hs256',
      'legacy-signature',
      'url-verification',
      'ping',
      'probe-401',
      'form-encoded',
      'first-seen-retry',
      // Twilio's JSON bodies, signed through bodySHA256 in the URL (issue 55).
      'json-body-hash',
    ];
    assert.deepEqual(
      r.cases.filter((c) => c.status === 'skipped').map((c) => c.name),
      skipped,
    );
    assert.equal(r.counts.pass, CASE_NAMES.length - skipped.length);
    assert.equal(r.ok, true);
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await inbox.close();
  }
});

const expected: Record<Flaw, string[]> = {
  // One defect, one finding: the cases that depend on it are not judged.
  dup500: ['duplicate'],
  'store-before-verify': ['wrong-secret'],
  // Stripe's own verifier accepts a future timestamp: only the stale one fails (issue 21).
  'accepts-stale': ['stale-timestamp'],
  // No cap of its own (behind a proxy the cap lives there): hardening, a warning, no failure (issue 53).
  'no-body-limit': [],
  // Stripe's own pretty bodies survive its re-serialising (every case writes bodies as Stripe
  // does); only a body written another way finds it out.
  'reserialized-verify': ['reserialized'],
};

for (const flaw of Object.keys(expected) as Flaw[]) {
  test(`a receiver that ${flaw.replace(/-/g, ' ')} fails exactly its cases`, async () => {
    const path = join(tempDir(), 'inbox.db');
    const inbox = openSqliteInbox(path);
    const server = await serve(broken(flaw, inbox));
    try {
      const r = await check({ url: server.url, provider: 'stripe', secrets: [SECRET], inbox: path, maxBytes: MAX_BYTES });
      assert.deepEqual(failed(r), expected[flaw], JSON.stringify(r.cases.filter((c) => c.status === 'fail')));
      assert.equal(r.ok, expected[flaw].length === 0);
      if (flaw === 'no-body-limit') assert.equal(r.cases.find((c) => c.name === 'oversized-body')?.status, 'warn');
    } finally {
      await server.close();
      await inbox.close();
    }
  });
}

test('a Shopify receiver that rejects malformed JSON gets a warning (a Stripe one passes: constructEvent refuses it too); --only and --skip; bad names', async () => {
  const path = join(tempDir(), 'inbox.db');
  const inbox = openSqliteInbox(path);
  const strict = createReceiverServer({ provider: providers.shopify, secrets: [SECRET], inbox });
  const inner = strict.listeners('request')[0] as (req: IncomingMessage, res: ServerResponse) => void;
  const server = await serve(async (req, res) => {
    // A receiver that parses before it stores, and refuses what it cannot parse.
    if (req.headers['content-length'] && Number(req.headers['content-length']) < 1024 * 1024) {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const raw = Buffer.concat(chunks);
      try {
        JSON.parse(raw.toString());
      } catch {
        res.writeHead(400).end();
        return;
      }
      const { Readable } = await import('node:stream');
      const replayed = Object.assign(Readable.from([raw]), {
        headers: req.headers,
        method: req.method,
        url: req.url,
        socket: req.socket,
      }) as unknown as IncomingMessage;
      inner(replayed, res);
      return;
    }
    inner(req, res);
  });
  try {
    // With the inbox: listen keys Shopify's deliveries on X-Shopify-Event-Id, check finds them under
    // the webhook id it sent and that id's event id (store-probe's aliases), so valid is a pass.
    const r = await check({ url: server.url, provider: 'shopify', secrets: [SECRET], inbox: path, only: 'valid,malformed-json' });
    assert.match(r.cases.find((c) => c.name === 'valid')?.observed ?? '', /, stored$/);
    assert.deepEqual(
      r.cases.filter((c) => c.status !== 'skipped').map((c) => [c.name, c.status]),
      [
        ['valid', 'pass'],
        ['malformed-json', 'warn'],
      ],
    );
    assert.equal(r.ok, true, 'a warning does not fail the run');
    // A selection that leaves nothing to run is bad input, never "PASS 0 passed".
    for (const sel of [{ only: 'valid', skip: 'valid' }, { only: '' }, { only: ',' }, { skip: CASE_NAMES.join(',') }]) {
      await assert.rejects(
        check({ url: server.url, provider: 'stripe', secrets: [SECRET], ...sel }),
        (e: unknown) => e instanceof UsageError,
        JSON.stringify(sel),
      );
    }
    await assert.rejects(
      check({ url: server.url, provider: 'stripe', secrets: [SECRET], only: 'valid,sql-injection' }),
      (e: unknown) => e instanceof UsageError && /--only sql-injection: no such case/.test(e.message),
    );
  } finally {
    await server.close();
    await inbox.close();
  }
});

test('github has no timestamp: the timestamp cases are skipped with the reason', async () => {
  const path = join(tempDir(), 'inbox.db');
  const inbox = openSqliteInbox(path);
  const server = createReceiverServer({ provider: providers.github, secrets: [SECRET], inbox });
  const { port } = await listen(server, 0, '127.0.0.1');
  try {
    const r = await check({
      url: `http://127.0.0.1:${port}/`,
      provider: 'github',
      secrets: [SECRET],
      inbox: path,
      only: 'valid,stale-timestamp,future-timestamp',
    });
    const stale = r.cases.find((c) => c.name === 'stale-timestamp');
    assert.equal(stale?.status, 'skipped');
    assert.match(stale?.observed ?? '', /signs no timestamp/);
    assert.equal(r.cases.find((c) => c.name === 'valid')?.status, 'pass');
  } finally {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    await inbox.close();
  }
});

test('check where nothing listens: one line naming it, exit 2, and a JUnit report of one error, not a failure per case', async () => {
  const { hookdrill } = await import('./helpers/cli.js');
  const { readFileSync } = await import('node:fs');
  const junit = join(tempDir(), 'check.xml');
  const r = await hookdrill(['check', '--url', 'http://127.0.0.1:1/', '--provider', 'stripe', '--secret', SECRET, '--junit', junit]);
  assert.equal(r.code, 2, r.stderr);
  assert.equal(
    r.stderr.trim(),
    'hookdrill: nothing listens at 127.0.0.1:1 (connection refused): is the receiver running, and is the port in --url right?',
  );
  const xml = readFileSync(junit, 'utf8');
  assert.match(xml, /tests="1" failures="0" errors="1"/);
  assert.match(xml, /<error message="nothing listens at 127\.0\.0\.1:1 \(connection refused\)/);
  assert.doesNotMatch(xml, /<failure/);
});

test('a receiver that deduplicates on the signature, not the delivery id, fails duplicate once, the other copies not judged (and judged when asked for alone)', async () => {
  const { appendFileSync, writeFileSync } = await import('node:fs');
  const file = join(tempDir(), 'stored.txt');
  writeFileSync(file, '');
  const seen = new Set<string>();
  const server = await serve(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const raw = Buffer.concat(chunks);
    try {
      provider.verify(raw, req.headers, [SECRET]);
    } catch {
      res.writeHead(401).end();
      return;
    }
    // "Seen this signature? Then it is a duplicate": true only of copies signed in the same second.
    const signature = String(req.headers['stripe-signature']);
    if (!seen.has(signature)) {
      seen.add(signature);
      appendFileSync(file, `${provider.deliveryId(req.headers, raw)}\n`);
    }
    res.writeHead(200).end();
  });
  try {
    const r = await check({
      url: server.url,
      provider: 'stripe',
      secrets: [SECRET],
      stored: `cat ${file}`,
      only: 'valid,duplicate,retry,concurrent-duplicates',
    });
    // One finding: the copies after it are the same defect, not judged again.
    assert.deepEqual(failed(r), ['duplicate'], JSON.stringify(r.cases));
    assert.match(r.cases.find((c) => c.name === 'duplicate')?.diagnosis ?? '', /stores a copy of a delivery it already holds \(2 times\)/);
    for (const name of ['retry', 'concurrent-duplicates'])
      assert.equal(r.cases.find((c) => c.name === name)?.observed, 'not judged: duplicate failed');
    // Asked for on their own, they are judged, and find the same defect.
    const alone = await check({
      url: server.url,
      provider: 'stripe',
      secrets: [SECRET],
      stored: `cat ${file}`,
      only: 'retry,concurrent-duplicates',
    });
    assert.deepEqual(failed(alone), ['retry', 'concurrent-duplicates'], JSON.stringify(alone.cases));
    assert.match(alone.cases.find((c) => c.name === 'retry')?.observed ?? '', /200, then 200 to the retry, stored 2 times/);
  } finally {
    await server.close();
  }
});

test("a Slack retry carries X-Slack-Retry-Num, as Slack's own retries do", async () => {
  const retryNums: (string | undefined)[] = [];
  const server = await serve(async (req, res) => {
    req.resume();
    retryNums.push(req.headers['x-slack-retry-num'] as string | undefined);
    res.writeHead(200).end();
  });
  try {
    const r = await check({ url: server.url, provider: 'slack', secrets: ['slack-signing-secret'], only: 'retry' });
    assert.equal(r.cases.find((c) => c.name === 'retry')?.status, 'pass');
    assert.deepEqual(retryNums, [undefined, '1']);
  } finally {
    await server.close();
  }
});

test('a selection that runs nothing for this provider is refused too (GitHub signs no timestamp)', async () => {
  await assert.rejects(
    check({ url: 'http://127.0.0.1:1/', provider: 'github', secrets: [SECRET], only: 'stale-timestamp,future-timestamp' }),
    (e: unknown) => e instanceof UsageError && /no case left to run \(not in --only; GitHub signs no timestamp\)/.test(e.message),
  );
});

test("multibyte-body: a 4-byte character across every 1 KiB of the body, every piece but the last ending inside one, the body the provider's own JSON", () => {
  for (const name of ['stripe', 'github', 'slack', 'svix', 'shopify'] as const) {
    const p = providers[name];
    const [fixture] = resolveFixtures([], name);
    const e = compileFixture(p, fixture!, []).make(Date.now());
    const { body, pieces } = straddling(p, e, MULTIBYTE_BODY_BYTES, 1024);
    // A UTF-8 continuation byte (10xxxxxx) right after each cut: the character began before it.
    const continues = (at: number) => ((body[at] as number) & 0xc0) === 0x80;
    // From the first cut inside the text field to the last (the envelope before it is the event's own).
    const text = body.indexOf('"hookdrill_text"') + 24;
    const end = body.lastIndexOf('"');
    let cuts = 0;
    for (let cut = Math.ceil(text / 1024) * 1024; cut < end - 2; cut += 1024, cuts++)
      assert.ok(continues(cut), `${name}: byte ${cut} starts a character`);
    // Every KiB boundary of the text is checked above; the event before it takes up to ~12 KiB
    // (Shopify's orders/create), so the 60 KiB body holds at least 45 of them.
    assert.ok(cuts >= 45 && cuts >= Math.floor((MULTIBYTE_BODY_BYTES - text) / 1024) - 1, `${name}: ${cuts} cuts`);
    assert.ok(pieces.length > 10, `${name}: ${pieces.length} pieces`);
    assert.ok(Buffer.concat(pieces).equals(body), name);
    let at = 0;
    for (const piece of pieces.slice(0, -1)) {
      at += piece.length;
      if (at > text) assert.ok(continues(at), `${name}: a piece ends between characters at ${at}`);
    }
    // Still the event it was, written as the provider writes its bodies.
    const parsed = JSON.parse(body.toString('utf8'));
    assert.equal(parsed.hookdrill_text.length > 10_000, true);
    const { hookdrill_text: _, ...rest } = parsed;
    assert.deepEqual(rest, JSON.parse(e.rawBody.toString('utf8')), name);
    if (p.serialize) assert.equal(body.toString('utf8'), p.serialize(parsed), `${name}: serialised as the provider does`);
  }
});
