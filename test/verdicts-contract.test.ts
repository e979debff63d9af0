import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { getProvider } from '../src/providers/index.js';
import { run as check } from '../src/check/run.js';
import { run as chaos } from '../src/chaos/run.js';
import { freePort } from './helpers/ports.js';
import { SECRET, checkReceiver, explain, named, official as official_, python } from './helpers/verdicts.js';
import { spawnHookdrill } from './helpers/spawned.js';
import { tempDir } from './helpers/tmp.js';

const KEYS = tempDir();
// hookdrill's own SendGrid key, the same for this process and the listen it starts.
process.env.HOOKDRILL_KEYS_DIR = KEYS;
import { pythonLibMissing } from './helpers/python.js';

/**
 * Issue 51: each provider judged as it delivers (its contract, providers/contract.ts), by Python
 * receivers right or wrong in exactly one way. Each failed on the old code: it judged every
 * provider as if it sent one event a request, re-sent everything, and sent its checks only signed.
 */

for (const provider of ['line', 'sendgrid', 'hubspot']) {
  test(`${provider} batches events: a receiver that stores each passes batch, one that keeps the first fails it, named so`, {
    skip: pythonLibMissing(provider),
  }, async () => {
    const right = await checkReceiver(provider, python(provider), { only: 'valid,batch' });
    assert.deepEqual(named(right, 'fail'), [], explain(right));
    assert.equal(right.cases.find((c) => c.name === 'batch')?.status, 'pass', explain(right));
    const wrong = await checkReceiver(provider, python(provider, 'first-event-only'), { only: 'valid,batch' });
    assert.deepEqual(named(wrong, 'fail'), ['batch'], explain(wrong));
    assert.match(
      wrong.cases.find((c) => c.name === 'batch')?.diagnosis ?? '',
      /keeps only the first event of a batch and drops the other 2/,
    );
  });
}

test("LINE's Verify (a signed body with no events) must get 200: a receiver that refuses it fails empty-batch", async () => {
  const right = await checkReceiver('line', python('line'), { only: 'valid,empty-batch,forged-check' });
  assert.deepEqual(named(right, 'fail'), [], explain(right));
  assert.equal(right.cases.find((c) => c.name === 'empty-batch')?.status, 'pass');
  const wrong = await checkReceiver('line', python('line', 'refuse-empty'), { only: 'valid,empty-batch' });
  assert.deepEqual(named(wrong, 'fail'), ['empty-batch'], explain(wrong));
  assert.match(wrong.cases.find((c) => c.name === 'empty-batch')?.diagnosis ?? '', /Verify/);
});

test('Zoom: a receiver that answers url_validation before verifying it is a signing oracle, shown with the forged event it then accepts', async () => {
  const right = await checkReceiver('zoom', python('zoom'), { only: 'valid,url-verification,forged-check' });
  assert.deepEqual(named(right, 'fail'), [], explain(right));
  assert.equal(right.cases.find((c) => c.name === 'forged-check')?.status, 'pass');
  const wrong = await checkReceiver('zoom', python('zoom', 'challenge-unverified'), { only: 'valid,url-verification,forged-check' });
  assert.deepEqual(named(wrong, 'fail'), ['forged-check'], explain(wrong));
  assert.match(
    wrong.cases.find((c) => c.name === 'forged-check')?.diagnosis ?? '',
    /anyone can have it sign their own data .*the forged event posted with it got 200/,
  );
});

test("Slack: a receiver that echoes url_verification's challenge unverified is warned (it gives nothing away), never passed silently", async () => {
  const wrong = await checkReceiver('slack', python('slack', 'challenge-unverified'), { only: 'valid,forged-check' });
  assert.deepEqual(named(wrong, 'fail'), [], explain(wrong));
  assert.deepEqual(named(wrong, 'warn'), ['forged-check'], explain(wrong));
});

test('Discord never sends an interaction twice: a receiver that bounds replays by the signed timestamp, with no dedupe table, passes', {
  skip: pythonLibMissing('discord'),
}, async () => {
  const r = await checkReceiver('discord', python('discord', 'no-dedupe'));
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  for (const name of ['duplicate', 'retry', 'concurrent-duplicates']) {
    const c = r.cases.find((x) => x.name === name);
    assert.equal(c?.status, 'skipped', name);
    assert.match(c?.observed ?? '', /Discord never sends a request twice/, name);
  }
});

for (const provider of ['line', 'sendgrid', 'hubspot'] as const) {
  test(`listen --provider ${provider} stores each event of a batch under its own id; a body repeating some and adding one stores the new one; check's batch case passes against it`, async () => {
    const dir = tempDir();
    const inbox = join(dir, 'inbox.db');
    const secret = provider === 'sendgrid' ? [] : ['--secret', SECRET[provider] as string];
    const more = provider === 'hubspot' ? ['--public-url', 'https://hooks.example.com/'] : [];
    const p = spawnHookdrill(
      ['listen', '--json', '--port', '0', '--provider', provider, ...secret, '--inbox', inbox, '--no-worker', ...more],
      {
        HOOKDRILL_KEYS_DIR: KEYS,
      },
    );
    try {
      const ready = await p.waitFor((l) => l.event === 'ready', 15_000);
      const listenUrl = String(ready.url);
      const prov = getProvider(provider);
      const signer = provider === 'sendgrid' ? (prov.ownKey?.() ?? '') : (SECRET[provider] as string);
      const events = [0, 1, 2, 3].map((i) => eventOf(provider, `evt-${i}-${Date.now()}`));
      const post = async (list: unknown[]) => {
        const body = Buffer.from(JSON.stringify(provider === 'line' ? { destination: 'U1', events: list } : list));
        const headers = prov.sign(body, [signer], {
          nowMs: Date.now(),
          deliveryId: 'x',
          eventType: 'x',
          url: 'https://hooks.example.com/',
        });
        const res = await fetch(listenUrl, { method: 'POST', body, headers });
        return { status: res.status, body: (await res.json()) as { stored?: number; duplicates?: number } };
      };
      const first = await post(events.slice(0, 3));
      assert.equal(first.status, 200);
      assert.deepEqual([first.body.stored, first.body.duplicates], [3, 0]);
      const again = await post(events.slice(1, 4));
      assert.deepEqual(
        [again.body.stored, again.body.duplicates],
        [1, 2],
        'the new event of a body holding two redelivered ones is stored',
      );
      const db = openSqliteInbox(inbox, { readonly: true, create: false });
      try {
        for (const e of events) assert.ok(await db.get({ source: provider, deliveryId: idOf(provider, e) }), `${idOf(provider, e)} stored`);
      } finally {
        await db.close();
      }
      // check's batch case, judged against listen itself by its inbox.
      const r = await check({
        url: listenUrl,
        provider,
        secrets: [signer],
        inbox,
        only: 'valid,batch',
        ...(provider === 'hubspot' ? { publicUrl: 'https://hooks.example.com/' } : {}),
      });
      assert.deepEqual(named(r, 'fail'), [], explain(r));
      assert.equal(r.cases.find((c) => c.name === 'batch')?.status, 'pass', explain(r));
    } finally {
      p.child.kill('SIGTERM');
      await p.exit;
    }
  });
}

function eventOf(provider: string, id: string): Record<string, unknown> {
  if (provider === 'line')
    return { type: 'follow', webhookEventId: id, timestamp: Date.now(), mode: 'active', deliveryContext: { isRedelivery: false } };
  if (provider === 'sendgrid') return { email: 'a@example.com', event: 'delivered', sg_event_id: id, timestamp: 1 };
  return { eventId: Number(id.replace(/\D/g, '').slice(0, 12)), subscriptionType: 'contact.creation', objectId: 1 };
}

function idOf(provider: string, e: Record<string, unknown>): string {
  return String(provider === 'line' ? e.webhookEventId : provider === 'sendgrid' ? e.sg_event_id : e.eventId);
}

for (const provider of ['line', 'hubspot'] as const) {
  test(`${provider} marks a redelivery in its body: a receiver that drops redeliveries fails redelivered, a right one passes`, async () => {
    const right = await checkReceiver(provider, python(provider), { only: 'valid,duplicate,retry,redelivered' });
    assert.deepEqual(named(right, 'fail'), [], explain(right));
    assert.equal(right.cases.find((c) => c.name === 'redelivered')?.status, 'pass', explain(right));
    const wrong = await checkReceiver(provider, python(provider, 'drops-redeliveries'), { only: 'valid,redelivered' });
    assert.deepEqual(named(wrong, 'fail'), ['redelivered'], explain(wrong));
    assert.match(wrong.cases.find((c) => c.name === 'redelivered')?.diagnosis ?? '', /answers a redelivery 2xx and drops it/);
  });
}

test("HubSpot's retry counts attemptNumber up: a receiver that dedupes on the body's hash stores the retry again and fails retry", async () => {
  const r = await checkReceiver('hubspot', python('hubspot', 'dedupe-by-body-hash'), { only: 'valid,duplicate,retry' });
  assert.ok(named(r, 'fail').includes('retry'), explain(r));
});

test('send marks a retry as the provider does: LINE sets isRedelivery, HubSpot counts attemptNumber', async () => {
  const seen: Buffer[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push(Buffer.concat(chunks));
      res.writeHead(seen.length < 3 ? 500 : 200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  try {
    const { run } = await import('../src/delivery/send.js');
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    for (const provider of ['line', 'hubspot']) {
      seen.length = 0;
      await run({ url, provider, secrets: [SECRET[provider] as string], retryDelays: '10ms,10ms' });
      const markers = seen.map((b) => {
        const body = JSON.parse(b.toString()) as { events?: { deliveryContext?: { isRedelivery?: boolean } }[] } & {
          attemptNumber?: number;
        }[];
        return provider === 'line'
          ? body.events?.[0]?.deliveryContext?.isRedelivery
          : (body as { attemptNumber?: number }[])[0]?.attemptNumber;
      });
      assert.deepEqual(markers, provider === 'line' ? [false, true, true] : [0, 1, 2], provider);
    }
  } finally {
    server.close();
  }
});

test('Discord wants an interaction response: a receiver answering 200 "ok" fails answer; a deferred one passes, as listen --provider discord answers', {
  skip: pythonLibMissing('discord'),
}, async () => {
  const right = await checkReceiver('discord', python('discord'), { only: 'valid,answer' });
  assert.deepEqual(named(right, 'fail'), [], explain(right));
  assert.equal(right.cases.find((c) => c.name === 'answer')?.status, 'pass', explain(right));
  const wrong = await checkReceiver('discord', python('discord', 'answer-ok'), { only: 'valid,answer' });
  assert.deepEqual(named(wrong, 'fail'), ['answer'], explain(wrong));
  assert.match(wrong.cases.find((c) => c.name === 'answer')?.diagnosis ?? '', /This interaction failed/);
  // The right type with nothing in it: Discord refuses an empty message as it refuses "ok".
  const empty = await checkReceiver('discord', python('discord', 'answer-empty-message'), { only: 'valid,answer' });
  assert.deepEqual(named(empty, 'fail'), ['answer'], explain(empty));
  assert.match(empty.cases.find((c) => c.name === 'answer')?.diagnosis ?? '', /Cannot send an empty message/);
  // listen in front of a bot: the deferred form, never {"ok":true}.
  const p = spawnHookdrill(['listen', '--json', '--port', '0', '--provider', 'discord', '--inbox', join(tempDir(), 'd.db'), '--no-worker']);
  try {
    const ready = await p.waitFor((l) => l.event === 'ready', 15_000);
    const r = await check({
      url: String(ready.url),
      provider: 'discord',
      secrets: [getProvider('discord').ownKey?.() ?? ''],
      only: 'valid,answer',
    });
    assert.deepEqual(named(r, 'fail'), [], explain(r));
    assert.equal(r.cases.find((c) => c.name === 'answer')?.status, 'pass', explain(r));
  } finally {
    p.child.kill('SIGTERM');
    await p.exit;
  }
});

test("chaos follows the contract: Discord never re-sends an interaction, so what a kill cut off is said to be lost on Discord's side, not re-sent to give the receiver a second chance", {
  skip: pythonLibMissing('discord'),
}, async () => {
  // Slow answers (200 ms): when the kill comes right after the first 200, others are in flight.
  const r = python('discord', '', '--answer-after 0.2');
  const port = await freePort();
  const result = await chaos({
    receiver: r.command,
    url: `http://127.0.0.1:${port}/`,
    provider: 'discord',
    secrets: [SECRET.discord as string],
    stored: r.stored,
    rounds: 1,
    events: 8,
  });
  assert.equal(result.totals.duplicatesSent, 0, 'no copies of acknowledged interactions: Discord sends none');
  assert.deepEqual(result.problems, [], result.problems.join('\n'));
  assert.equal(result.ok, true);
  assert.ok(
    result.notes.some((n) =>
      /in flight at a kill and never answered: Discord never sends a request again .* a fact of the provider, not a finding/.test(n),
    ),
    JSON.stringify(result.notes),
  );
});

test('HubSpot signs its URL with %3A %2F %3F … decoded (its v3 docs): a receiver that decodes passes valid on such a URL, one that hashes the URL as it arrived fails', async () => {
  const publicUrl = 'https://hooks.example.com/hub%3Aspot/hooks?portal=%2F1%2C2';
  const right = await checkReceiver('hubspot', python('hubspot', '', `--public-url '${publicUrl}'`), { only: 'valid', publicUrl });
  assert.deepEqual(named(right, 'fail'), [], explain(right));
  const official = await checkReceiver('hubspot', official_('hubspot', { PUBLIC_URL: publicUrl }), { only: 'valid', publicUrl });
  assert.deepEqual(named(official, 'fail'), [], explain(official));
  const wrong = await checkReceiver('hubspot', python('hubspot', 'no-url-decode', `--public-url '${publicUrl}'`), {
    only: 'valid',
    publicUrl,
  });
  assert.deepEqual(named(wrong, 'fail'), ['valid'], explain(wrong));
});

for (const provider of ['stripe', 'paddle'] as const) {
  test(`${provider}'s last retry comes days late with the event's own time unchanged: a receiver that refuses old events fails late-retry, a right one passes`, async () => {
    const right = await checkReceiver(provider, python(provider), { only: 'valid,late-retry' });
    assert.deepEqual(named(right, 'fail'), [], explain(right));
    assert.equal(right.cases.find((c) => c.name === 'late-retry')?.status, 'pass', explain(right));
    const wrong = await checkReceiver(provider, python(provider, 'refuse-old-events'), { only: 'valid,late-retry' });
    assert.deepEqual(named(wrong, 'fail'), ['late-retry'], explain(wrong));
    assert.match(wrong.cases.find((c) => c.name === 'late-retry')?.diagnosis ?? '', /refuses an event whose own time is .* old/);
  });
}

test('deliveries about one thing (a create then an update, one message twice) must all be kept: a receiver that dedupes on the thing fails related, for every provider whose contract sends them', async () => {
  const providers = ['stripe', 'github', 'slack', 'shopify', 'svix', 'paddle', 'workos', 'square', 'line', 'hubspot', 'zoom', 'linear'];
  if (!pythonLibMissing('sendgrid')) providers.push('sendgrid');
  for (const provider of providers) {
    assert.ok(getProvider(provider).contract.related, provider);
    const right = await checkReceiver(provider, python(provider), { only: 'valid,related' });
    assert.deepEqual(named(right, 'fail'), [], `${provider}: ${explain(right)}`);
    assert.equal(right.cases.find((c) => c.name === 'related')?.status, 'pass', provider);
    const wrong = await checkReceiver(provider, python(provider, 'dedupe-by-entity'), { only: 'valid,related' });
    assert.deepEqual(named(wrong, 'fail'), ['related'], `${provider}: ${explain(wrong)}`);
    const path = getProvider(provider).contract.related?.path.join('.') ?? '';
    assert.match(
      wrong.cases.find((c) => c.name === 'related')?.diagnosis ?? '',
      new RegExp(`keeps one delivery per ${path.replace(/\./g, '\\.')}, not per delivery`),
      provider,
    );
  }
});

test('a receiver that dedupes on the thing, not the delivery, was passed by the whole battery before the related case (Linear): now it fails it, and only it', async () => {
  const wrong = await checkReceiver('linear', python('linear', 'dedupe-by-entity'));
  assert.deepEqual(named(wrong, 'fail'), ['related'], explain(wrong));
});

test("Slack posts a slash command's answer as a message: JSON that is none is warned, an acknowledgment or a message passes, and listen --provider slack answers a command with an empty 200", async () => {
  const right = await checkReceiver('slack', python('slack'), { only: 'valid,answer' });
  assert.equal(right.cases.find((c) => c.name === 'answer')?.status, 'pass', explain(right));
  const wrong = await checkReceiver('slack', python('slack', 'answer-json-ok'), { only: 'valid,answer' });
  assert.deepEqual(named(wrong, 'fail'), [], explain(wrong));
  assert.deepEqual(named(wrong, 'warn'), ['answer'], explain(wrong));
  assert.match(
    wrong.cases.find((c) => c.name === 'answer')?.diagnosis ?? '',
    /posts a non-empty answer as a message .*answer with an empty 200/,
  );

  const listen = spawnHookdrill([
    'listen',
    '--json',
    '--port',
    '0',
    '--provider',
    'slack',
    '--secret',
    SECRET.slack as string,
    '--inbox',
    join(tempDir(), 's.db'),
    '--no-worker',
  ]);
  try {
    const ready = await listen.waitFor((l) => l.event === 'ready', 15_000);
    const r = await check({ url: String(ready.url), provider: 'slack', secrets: [SECRET.slack as string], only: 'valid,answer' });
    const c = r.cases.find((x) => x.name === 'answer');
    assert.equal(c?.status, 'pass', explain(r));
    assert.match(c?.observed ?? '', /^200 "" to a command/);
  } finally {
    listen.child.kill('SIGTERM');
    await listen.exit;
  }
});
