import { test } from 'node:test';
import assert from 'node:assert/strict';
import { run } from '../src/delivery/send.js';
import { UsageError } from '../src/util/errors.js';
import { providers } from '../src/providers/index.js';
import { splitBatch } from '../src/providers/contract.js';
import type { ProviderName } from '../src/providers/index.js';
import { SECRETS, verifyWithOfficialCode } from './helpers/official.js';
import { freePort } from './helpers/ports.js';
import { reply, startServer } from './helpers/server.js';

const header = (h: Record<string, string | string[] | undefined>, name: string) => {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
};

for (const name of Object.keys(providers) as ProviderName[]) {
  test(`${name}: every shipped fixture (where none ships, the default one) is accepted by the official verifier, with fresh ids`, async () => {
    const secret = SECRETS[name] as string;
    const rejected: string[] = [];
    const server = await startServer(async (req, res) => {
      try {
        // URL-bound schemes (Square, HubSpot) are verified over the URL send posted to (Twilio's JSON: with its bodySHA256).
        await verifyWithOfficialCode(name, req.rawBody, req.headers, secret, new URL(req.path, server.url).href);
        reply(res, 200);
      } catch (err) {
        rejected.push((err as Error).message);
        reply(res, 401);
      }
    });
    try {
      const { DEFAULT_FIXTURE, listShippedFixtures } = await import('../src/fixtures/index.js');
      // Slack's ssl_check goes out unsigned, as Slack sends it, and app_rate_limited is one per
      // workspace and minute, three copies one key (test/slack-forms.test.ts proves both).
      // Intercom's ping has no id ("id": null) and nothing fresh but its second: three in one second
      // are one body, so one delivery to a receiver keyed on its hash, as they would be from Intercom.
      const shipped = listShippedFixtures().filter(
        (f) =>
          f.provider === name && f.name !== 'ssl_check' && f.name !== 'app_rate_limited' && !(name === 'intercom' && f.name === 'ping'),
      );
      // Stripe's, GitHub's and Shopify's come from the catalogue (their own packages) alone.
      const fixtures = shipped.length > 0 ? shipped : [{ name: DEFAULT_FIXTURE[name] }];
      const result = await run({
        provider: name,
        url: server.url,
        secrets: [secret],
        fixtures: fixtures.map((f) => `${name}/${f.name}`),
        count: fixtures.length * 3,
        noRetry: true,
      });
      assert.deepEqual(rejected, []);
      assert.equal(result.ok, true);
      // LINE, SendGrid and HubSpot batch: three events a body.
      assert.equal(result.summary.delivered, result.batched ? Math.ceil((fixtures.length * 3) / result.batched.size) : fixtures.length * 3);
      // What the receiver dedupes on is what send reports (or, for Shopify, the event id its
      // deliveries carry beside it; in a batch, each event's own id), and no two events share it.
      const seen = server.requests.flatMap(
        (r) =>
          splitBatch(providers[name].contract, r.rawBody)?.map((e) => e.deliveryId) ?? [
            providers[name].deliveryId(r.headers, r.rawBody) ?? '',
          ],
      );
      const url = server.requests.filter((r) => r.rawBody.includes('url_verification')).length;
      assert.equal(new Set(seen.filter(Boolean)).size, fixtures.length * 3 - url);
      for (const d of result.deliveries) {
        const keys = [d.deliveryId, ...(providers[name].otherIds?.(d.deliveryId) ?? [])];
        if (d.eventType !== 'url_verification')
          assert.ok(
            keys.some((k) => seen.includes(k)),
            `${d.deliveryId} was not received`,
          );
      }
    } finally {
      await server.close();
    }
  });
}

test('github: the event name goes in X-GitHub-Event, the action stays in the body', async () => {
  const server = await startServer((_req, res) => reply(res, 200));
  try {
    const result = await run({ url: server.url, secrets: ['s'], fixtures: ['github/issues.opened'] });
    assert.equal(header(server.requests[0]?.headers ?? {}, 'x-github-event'), 'issues');
    assert.equal(result.deliveries[0]?.eventType, 'issues.opened');
    assert.equal(result.provider, 'github'); // inferred from provider/event
  } finally {
    await server.close();
  }
});

test('shopify: the topic header keeps its slash', async () => {
  const server = await startServer((_req, res) => reply(res, 200));
  try {
    await run({ url: server.url, provider: 'shopify', secrets: ['s'] });
    assert.equal(header(server.requests[0]?.headers ?? {}, 'x-shopify-topic'), 'orders/create');
    assert.ok(header(server.requests[0]?.headers ?? {}, 'x-shopify-webhook-id'));
  } finally {
    await server.close();
  }
});

test("slack: a receiver slower than the timeout gets Slack's retries, each with its retry headers", async () => {
  const server = await startServer(async (_req, res) => {
    await new Promise((r) => setTimeout(r, 500));
    if (!res.destroyed) reply(res, 200);
  });
  try {
    // A 150 ms timeout (long enough for every request to reach the receiver on a loaded machine;
    // given, so never scaled), and a schedule of 0, 1 s, 2 s at ×0.05: 0, 50 ms, 100 ms.
    const result = await run({
      url: server.url,
      provider: 'slack',
      secrets: [SECRETS.slack as string],
      timeout: '150ms',
      timeScale: 0.05,
      retryDelays: '0,1s,2s',
    });
    const d = result.deliveries[0];
    assert.ok(d);
    assert.equal(d.attempts.length, 4);
    assert.ok(d.attempts.every((a) => a.error === 'timeout' && a.reason === 'http_timeout'));
    assert.equal(d.outcome, 'exhausted');
    assert.equal(result.ok, false);
    assert.deepEqual(
      d.attempts.map((a) => a.retryHeaders),
      [undefined, ...[1, 2, 3].map((n) => ({ 'X-Slack-Retry-Num': String(n), 'X-Slack-Retry-Reason': 'http_timeout' }))],
    );
    assert.deepEqual(
      d.attempts.slice(0, 3).map((a) => a.nextDelayMs),
      [0, 50, 100],
    );
    // The receiver saw the same event four times, and the retry headers on the wire.
    const ids = server.requests.map((r) => JSON.parse(r.rawBody.toString()).event_id);
    assert.equal(new Set(ids).size, 1);
    assert.deepEqual(
      server.requests.map((r) => header(r.headers, 'x-slack-retry-num')),
      [undefined, '1', '2', '3'],
    );
  } finally {
    await server.close();
  }
});

test('stripe: failures are retried on the schedule and a later 2xx delivers', async () => {
  const server = await startServer((_req, res, n) => reply(res, n <= 2 ? 500 : 200, n <= 2 ? 'database unavailable' : 'ok'));
  try {
    const result = await run({ url: server.url, provider: 'stripe', secrets: ['whsec_x'], retryDelays: '10ms,10ms,10ms' });
    const d = result.deliveries[0];
    assert.deepEqual(
      d?.attempts.map((a) => a.status),
      [500, 500, 200],
    );
    assert.equal(d?.attempts[0]?.bodySnippet, 'database unavailable');
    assert.equal(result.ok, true);
    assert.equal(result.summary.retries, 2);
    // Each attempt is signed anew but carries the same event.
    const ids = server.requests.map((r) => JSON.parse(r.rawBody.toString()).id);
    assert.equal(new Set(ids).size, 1);
  } finally {
    await server.close();
  }
});

test('slack: X-Slack-No-Retry: 1 on an error stops the retries', async () => {
  const server = await startServer((_req, res) => reply(res, 500, 'no', { 'X-Slack-No-Retry': '1' }));
  try {
    const result = await run({ url: server.url, provider: 'slack', secrets: ['s'] });
    assert.equal(server.requests.length, 1);
    assert.equal(result.deliveries[0]?.outcome, 'stopped');
  } finally {
    await server.close();
  }
});

test('standard: 410 Gone stops at once; Retry-After on 429 replaces the scheduled delay', async () => {
  const gone = await startServer((_req, res) => reply(res, 410));
  const busy = await startServer((_req, res, n) => (n === 1 ? reply(res, 429, '', { 'Retry-After': '2' }) : reply(res, 200)));
  try {
    const secret = SECRETS.standard as string;
    const r1 = await run({ url: gone.url, provider: 'standard', secrets: [secret] });
    assert.equal(gone.requests.length, 1);
    assert.equal(r1.deliveries[0]?.outcome, 'stopped');
    const r2 = await run({ url: busy.url, provider: 'standard', secrets: [secret], timeScale: 0.01 });
    // Retry-After: 2 s at ×0.01 is 20 ms, not the schedule's 5 s ×0.01.
    assert.equal(r2.deliveries[0]?.attempts[0]?.nextDelayMs, 20);
    assert.equal(r2.ok, true);
  } finally {
    await gone.close();
    await busy.close();
  }
});

test('--expect 401: a receiver that rejects a wrong secret passes, one that accepts it fails', async () => {
  const strict = await startServer(async (req, res) => {
    try {
      await verifyWithOfficialCode('stripe', req.rawBody, req.headers, 'whsec_right');
      reply(res, 200);
    } catch {
      reply(res, 401);
    }
  });
  const lax = await startServer((_req, res) => reply(res, 200));
  try {
    const ok = await run({ url: strict.url, provider: 'stripe', secrets: ['whsec_wrong'], expect: '401' });
    assert.equal(ok.ok, true);
    assert.equal(strict.requests.length, 1, 'a met expectation ends the delivery');
    const bad = await run({ url: lax.url, provider: 'stripe', secrets: ['whsec_wrong'], expect: '4xx' });
    assert.equal(bad.ok, false);
    assert.equal(bad.summary.failed, 1);
  } finally {
    await strict.close();
    await lax.close();
  }
});

test('a refused connection is an attempt like any other, recorded with its reason', async () => {
  const port = await freePort();
  const result = await run({ url: `http://127.0.0.1:${port}/`, provider: 'github', secrets: ['s'] });
  const a = result.deliveries[0]?.attempts[0];
  assert.equal(a?.error, 'refused');
  assert.equal(a?.reason, 'connection_failed');
  assert.equal(result.ok, false);
  assert.equal(result.summary.transportErrors, 1);
});

test('--duplicates 3 sends the same event three times at once', async () => {
  // The receiver holds each request until three are in hand (or 2 s pass), and notes the most it
  // held at once: copies sent one after another could never make three.
  let inFlight = 0;
  let most = 0;
  const waiting: (() => void)[] = [];
  const server = await startServer(async (_req, res) => {
    inFlight++;
    most = Math.max(most, inFlight);
    if (inFlight >= 3) for (const go of waiting.splice(0)) go();
    else await new Promise<void>((r) => waiting.push(r) && setTimeout(r, 2_000));
    inFlight--;
    reply(res, 200);
  });
  try {
    const result = await run({ url: server.url, provider: 'stripe', secrets: ['whsec_x'], duplicates: 3, count: 2, concurrency: 1 });
    assert.equal(result.deliveries.length, 6);
    assert.equal(server.requests.length, 6);
    const byId = new Map<string, string[]>();
    for (const r of server.requests) {
      const id = JSON.parse(r.rawBody.toString()).id as string;
      byId.set(id, [...(byId.get(id) ?? []), r.rawBody.toString()]);
    }
    assert.equal(byId.size, 2);
    for (const bodies of byId.values()) {
      assert.equal(bodies.length, 3);
      assert.equal(new Set(bodies).size, 1, 'copies carry identical bytes');
    }
    // Copies were in flight together even at --concurrency 1: the receiver held all three at once.
    const first = server.requests.slice(0, 3).map((r) => JSON.parse(r.rawBody.toString()).id);
    assert.equal(new Set(first).size, 1);
    assert.equal(most, 3);
  } finally {
    await server.close();
  }
});

test('--shuffle sends events in a seeded random order; the same seed gives the same order', async () => {
  const server = await startServer((_req, res) => reply(res, 200));
  try {
    const opts = {
      url: server.url,
      provider: 'stripe',
      secrets: ['whsec_x'],
      fixtures: ['customer.created', 'invoice.paid'],
      count: 8,
      concurrency: 1,
      shuffle: true,
      seed: 7,
    };
    const a = await run(opts);
    const arrived = server.requests.map((r) => JSON.parse(r.rawBody.toString()).type as string);
    const expected = (a.order ?? []).map((seq) => (seq % 2 === 0 ? 'customer.created' : 'invoice.paid'));
    assert.deepEqual(arrived, expected);
    assert.notDeepEqual(a.order, [0, 1, 2, 3, 4, 5, 6, 7]);
    assert.deepEqual([...(a.order ?? [])].sort(), [0, 1, 2, 3, 4, 5, 6, 7]);
    const b = await run(opts);
    assert.deepEqual(b.order, a.order);
    assert.equal(a.seed, 7);
  } finally {
    await server.close();
  }
});

test('--set changes a field in what is sent; an unknown path fails before anything is sent', async () => {
  const server = await startServer((_req, res) => reply(res, 200));
  try {
    await run({
      url: server.url,
      provider: 'stripe',
      secrets: ['whsec_x'],
      sets: ['data.object.amount_paid=5000', 'data.object.customer_name=Ada'],
    });
    const body = JSON.parse(server.requests[0]?.rawBody.toString() ?? '{}');
    assert.equal(body.data.object.amount_paid, 5000);
    assert.equal(body.data.object.customer_name, 'Ada');
    await assert.rejects(
      run({ url: server.url, provider: 'stripe', secrets: ['whsec_x'], sets: ['data.object.amount_payed=1'] }),
      (err: unknown) => err instanceof UsageError && /has no "amount_payed" under data.object/.test(err.message),
    );
    assert.equal(server.requests.length, 1);
  } finally {
    await server.close();
  }
});

test('slack follows two redirects and no more; stripe treats a 3xx as a failure', async () => {
  const server = await startServer((req, res) => {
    const hop = Number(/hop=(\d+)/.exec(req.path)?.[1] ?? 0);
    const hops = Number(/hops=(\d+)/.exec(req.path)?.[1] ?? 0);
    if (hop < hops) reply(res, 307, '', { Location: `/webhooks?hops=${hops}&hop=${hop + 1}` });
    else reply(res, 200);
  });
  try {
    const base = server.url;
    const two = await run({ url: `${base}?hops=2`, provider: 'slack', secrets: ['s'], noRetry: true });
    assert.equal(two.ok, true);
    assert.equal(two.deliveries[0]?.attempts[0]?.redirects, 2);
    const three = await run({ url: `${base}?hops=3`, provider: 'slack', secrets: ['s'], noRetry: true });
    assert.equal(three.deliveries[0]?.attempts[0]?.error, 'too_many_redirects');
    const stripe = await run({ url: `${base}?hops=1`, provider: 'stripe', secrets: ['whsec_x'], noRetry: true });
    assert.equal(stripe.deliveries[0]?.attempts[0]?.status, 307);
    assert.equal(stripe.ok, false);
  } finally {
    await server.close();
  }
});

test('--header replaces a signed header whatever its case', async () => {
  const server = await startServer((_req, res) => reply(res, 200));
  try {
    await run({ url: server.url, provider: 'github', secrets: ['s'], headers: ['x-hub-signature-256: sha256=forged', 'X-Extra: 1'] });
    const h = server.requests[0]?.headers ?? {};
    assert.equal(h['x-hub-signature-256'], 'sha256=forged');
    assert.equal(h['x-extra'], '1');
  } finally {
    await server.close();
  }
});

test('--rate spaces the starts of new events', async () => {
  const server = await startServer((_req, res) => reply(res, 200));
  try {
    await run({ url: server.url, provider: 'github', secrets: ['s'], count: 5, concurrency: 5, rate: '20/s' });
    const gaps = server.requests.slice(1).map((r, i) => r.at - (server.requests[i]?.at ?? 0));
    const total = gaps.reduce((a, b) => a + b, 0);
    // 20/s is one start per 50 ms: four gaps take at least ~200 ms, however fast the machine.
    assert.ok(total >= 180, `5 events at 20/s arrived within ${total.toFixed(0)} ms`);
  } finally {
    await server.close();
  }
});

test('bad input is a UsageError naming the problem', async () => {
  const cases: [Parameters<typeof run>[0], RegExp][] = [
    [{ url: 'http://127.0.0.1:1/', provider: 'moneygram', secrets: ['s'] }, /unknown provider "moneygram"/],
    [{ url: 'http://127.0.0.1:1/', provider: 'stripe', secrets: [] }, /a secret is required/],
    [{ url: 'ftp://x/', provider: 'stripe', secrets: ['s'] }, /must be http/],
    [{ url: 'not a url', provider: 'stripe', secrets: ['s'] }, /is not a URL/],
    [{ url: 'http://127.0.0.1:1/', provider: 'stripe', secrets: ['s'], fixtures: ['nope.json'] }, /no such fixture file: nope\.json/],
    [{ url: 'http://127.0.0.1:1/', provider: 'stripe', secrets: ['s'], fixtures: ['invoice.pay'] }, /no stripe fixture "invoice\.pay"/],
    [{ url: 'http://127.0.0.1:1/', provider: 'github', secrets: ['a', 'b'] }, /github signs with one secret/],
    [{ url: 'http://127.0.0.1:1/', provider: 'standard', secrets: ['plain'] }, /whsec_/],
    [{ url: 'http://127.0.0.1:1/', provider: 'stripe', secrets: ['s'], count: '0' }, /--count 0/],
    [{ url: 'http://127.0.0.1:1/', provider: 'stripe', secrets: ['s'], timeScale: '-1' }, /--time-scale/],
    [{ url: 'http://127.0.0.1:1/', provider: 'stripe', secrets: ['s'], expect: '2yy' }, /--expect 2yy/],
    [{ url: 'http://127.0.0.1:1/', provider: 'stripe', secrets: ['s'], retryDelays: '1m,soon' }, /--retry-delays/],
    [{ url: 'http://127.0.0.1:1/', provider: 'stripe', secrets: ['s'], profile: 'fast' }, /unknown profile "fast"/],
  ];
  for (const [opts, message] of cases) {
    await assert.rejects(run(opts), (err: unknown) => err instanceof UsageError && message.test(err.message), String(message));
  }
});

test('an invalid redirect Location is a failed attempt with its reason, not a crash', async () => {
  const server = await startServer((_req, res) => reply(res, 302, '', { Location: 'http://[bad' }));
  try {
    const result = await run({ url: server.url, provider: 'slack', secrets: ['s'], count: 5, concurrency: 1, noRetry: true });
    assert.equal(result.ok, false);
    assert.ok(result.deliveries.every((d) => d.attempts[0]?.error === 'other' && /invalid Location/.test(d.attempts[0]?.detail ?? '')));
  } finally {
    await server.close();
  }
});

test('credentials in --url are sent as Basic auth and never shown', async () => {
  const server = await startServer((_req, res) => reply(res, 200));
  try {
    const result = await run({ url: server.url.replace('http://', 'http://alice:s3cr%40t@'), provider: 'github', secrets: ['s'] });
    assert.equal(server.requests[0]?.headers.authorization, `Basic ${Buffer.from('alice:s3cr@t').toString('base64')}`);
    assert.ok(!JSON.stringify(result).includes('s3cr'));
  } finally {
    await server.close();
  }
});

test('names that exist on every object are not profiles', async () => {
  for (const profile of ['constructor', '__proto__', 'toString']) {
    await assert.rejects(
      run({ url: 'http://127.0.0.1:1/', provider: 'stripe', secrets: ['s'], profile }),
      (e: unknown) => e instanceof UsageError && /unknown profile/.test(e.message),
    );
  }
});

test('a timeout longer than a Node timer can hold is honoured, and an interrupt aborts the attempt in flight', async () => {
  // The receiver never answers. --timeout 40d (never scaled) is beyond Node's 24.8-day timer
  // limit, which fires such a timer at once. The attempt must wait, until the interrupt.
  const server = await startServer(() => undefined);
  const controller = new AbortController();
  try {
    const started = performance.now();
    const pending = run({
      url: server.url,
      provider: 'stripe',
      secrets: ['s'],
      timeout: '40d',
      timeScale: '2',
      noRetry: true,
      signal: controller.signal,
    });
    await new Promise((r) => setTimeout(r, 300));
    controller.abort();
    const result = await pending;
    const [attempt] = result.deliveries[0]?.attempts ?? [];
    assert.equal(attempt?.error, 'interrupted', JSON.stringify(attempt));
    assert.equal(result.deliveries[0]?.outcome, 'interrupted');
    assert.equal(result.interrupted, true);
    assert.ok(performance.now() - started < 20_000, 'the interrupt did not wait out the timeout');
    assert.equal(result.timing.timeoutMs, 40 * 86_400_000);
  } finally {
    await server.close();
  }
});

test('a retry under --time-scale is the same event, as old as the real schedule makes it: same id, created earlier by the uncompressed wait; uncompressed, the same bytes', async () => {
  const secret = SECRETS.stripe as string;
  const bodies: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const server = await startServer(async (req, res) => {
    // constructEvent refuses a thin event by design (the catalogue test verifies those with parseEventNotification).
    if (!req.rawBody.includes('"v2.core.event"')) await verifyWithOfficialCode('stripe', req.rawBody, req.headers, secret);
    raw.push(req.rawBody.toString());
    bodies.push(JSON.parse(req.rawBody.toString()));
    reply(res, raw.length % 2 === 1 ? 500 : 200);
  });
  try {
    // Stripe's first retry is 1 minute later; at ×0.001 it comes 60 ms later, its event 60 s older.
    const r = await run({
      provider: 'stripe',
      url: server.url,
      secrets: [secret],
      fixtures: ['stripe/charge.succeeded'],
      timeScale: '0.001',
    });
    assert.equal(r.ok, true);
    assert.equal(bodies.length, 2);
    assert.equal(bodies[1]?.id, bodies[0]?.id, 'one event: the same id');
    const age = (bodies[0]?.created as number) - (bodies[1]?.created as number);
    assert.ok(age >= 59 && age <= 61, `created moved back by the real wait (60 s), not the compressed one: ${age}`);
    assert.equal(raw[1]?.replace(/"created": \d+/, ''), raw[0]?.replace(/"created": \d+/, ''), 'nothing else differs');
    // A thin event's ISO created ages too.
    bodies.length = 0;
    await run({ provider: 'stripe', url: server.url, secrets: [secret], fixtures: ['stripe/v1.charge.succeeded'], timeScale: '0.001' });
    const ms = Date.parse(bodies[0]?.created as string) - Date.parse(bodies[1]?.created as string);
    assert.ok(ms > 59_000 && ms < 60_100, `${ms}`);
    // Not compressed (explicit waits at full scale): the retry's bytes are the first attempt's.
    raw.length = 0;
    await run({ provider: 'stripe', url: server.url, secrets: [secret], fixtures: ['stripe/charge.succeeded'], retryDelays: '0.05s' });
    assert.equal(raw.length, 2);
    assert.equal(raw[1], raw[0]);
  } finally {
    await server.close();
  }
});

test('send with a wrong secret: the first refusal says, as it happens, that it is most often the secret or the provider — not after the whole schedule', async () => {
  const { hookdrill } = await import('./helpers/cli.js');
  const { startReceiver } = await import('../src/harness/receiver-process.js');
  const { python } = await import('./helpers/verdicts.js');
  const port = await freePort();
  // A Python receiver that verifies with its own secret, as users' do.
  const receiver = await startReceiver({ command: python('stripe').command, url: `http://127.0.0.1:${port}/` });
  try {
    const r = await hookdrill([
      'send',
      'stripe/invoice.paid',
      '--url',
      `http://127.0.0.1:${port}/`,
      '--secret',
      `whsec_${Buffer.from('not the receiver secret').toString('base64')}`,
      '--retry-delays',
      '20ms',
    ]);
    assert.equal(r.code, 1, r.stderr);
    // (It answers 400, as Stripe's own example receiver does to a signature it cannot verify.)
    // A refusal ends the delivery there (--retry-refused keeps the schedule), the hint under it.
    assert.match(r.stdout, /400 .*refused \(400\): not retried/);
    assert.match(
      r.stdout,
      /↳ 400 is the receiver refusing the request — most often a signature it could not verify: check --secret is the endpoint's signing secret, and --provider the sender it verifies/,
    );
  } finally {
    await receiver.stop();
  }
});

test("linear: a retry carries its own send time in the signed body, as Linear's do: an hour's retry (compressed) is accepted by @linear/sdk", async () => {
  // Linear's webhookTimestamp is when the webhook was sent, and the SDK refuses one more than a
  // minute away: a retry that re-sent the first attempt's bytes (or aged them, as a compressed
  // schedule ages an event's creation time) would be refused by a right receiver.
  const secret = SECRETS.linear as string;
  const rejected: string[] = [];
  let calls = 0;
  const server = await startServer(async (req, res) => {
    calls++;
    if (calls === 1) return reply(res, 500);
    try {
      await verifyWithOfficialCode('linear', req.rawBody, req.headers, secret);
      reply(res, 200);
    } catch (err) {
      rejected.push((err as Error).message);
      reply(res, 401);
    }
  });
  try {
    const result = await run({
      provider: 'linear',
      url: server.url,
      secrets: [secret],
      fixtures: ['linear/Issue.update'],
      retryDelays: ['1h'],
      timeScale: 0.0001,
    });
    assert.deepEqual(rejected, []);
    assert.equal(calls, 2);
    assert.equal(result.ok, true);
  } finally {
    await server.close();
  }
});
