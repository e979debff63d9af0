import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { run as check } from '../src/check/run.js';
import { getProvider } from '../src/providers/index.js';
import type { JsonObject, JsonValue } from '../src/providers/index.js';
import { explain, checkReceiver, named, official, python, SECRET } from './helpers/verdicts.js';
import { pythonLibMissing } from './helpers/python.js';
import { tempDir } from './helpers/tmp.js';

// hookdrill's own SendGrid key, the same for this process and the receivers it starts.
process.env.HOOKDRILL_KEYS_DIR = tempDir();

/**
 * Issue 52, the headers and bytes of HubSpot, Square, SendGrid, Discord and Zoom: receivers right
 * on each provider's real traffic, judged by `check`. Each failed `valid` (or `ping`) on the old
 * requests, which lacked what the provider sends: HubSpot's v1 signature, Square's legacy one and
 * its initial-delivery time, SendGrid's CRLFs, Discord's User-Agent and invoker, Zoom's tracking id.
 */

const status = (r: Awaited<ReturnType<typeof check>>, name: string) => r.cases.find((c) => c.name === name)?.status;

test("HubSpot: a receiver on @hubspot/api-client's Signature.isValid with its default version (v1) passes valid; it is warned it verifies the legacy signature", async () => {
  const r = await checkReceiver('hubspot', official('hubspot', { HUBSPOT_SIGNATURE: 'default' }), {
    only: 'valid,missing-signature,wrong-secret,wrong-length-signature,legacy-signature',
  });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  assert.equal(status(r, 'valid'), 'pass', explain(r));
  assert.deepEqual(named(r, 'warn'), ['legacy-signature'], explain(r));
  assert.match(r.cases.find((c) => c.name === 'legacy-signature')?.diagnosis ?? '', /X-HubSpot-Signature \(v1/);
});

test('HubSpot: the Python receiver that verifies only v1 (hubspot-v1-default) passes valid', async () => {
  const r = await checkReceiver('hubspot', python('hubspot', 'hubspot-v1-default'), { only: 'valid,missing-signature' });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  assert.equal(status(r, 'valid'), 'pass', explain(r));
});

test('Square: a receiver that verifies the legacy x-square-signature and requires square-initial-delivery-timestamp passes valid and retry; it is warned about SHA-1', async () => {
  const r = await checkReceiver('square', python('square', 'square-legacy-sha1,square-needs-initial-timestamp'), {
    only: 'valid,retry,missing-signature,wrong-secret,legacy-signature',
  });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  assert.equal(status(r, 'valid'), 'pass', explain(r));
  assert.equal(status(r, 'retry'), 'pass', explain(r));
  assert.deepEqual(named(r, 'warn'), ['legacy-signature'], explain(r));
});

test("SendGrid's layout is its SDK's: sendgridBody writes @sendgrid/eventwebhook's own signed vectors byte for byte", () => {
  // The vectors of @sendgrid/eventwebhook's src/eventwebhook.spec.js, their keys shuffled: the
  // layout and the order are sendgridBody's, and the SDK's signature over them must hold.
  const require = createRequire(import.meta.url);
  const { EventWebhook } = require('@sendgrid/eventwebhook') as {
    EventWebhook: new () => {
      verifySignature(k: unknown, p: string, s: string, t: string): boolean;
      convertPublicKeyToECDSA(k: string): unknown;
    };
  };
  const ew = new EventWebhook();
  // How send and check write a SendGrid body (a list of events, typed as a fixture's object).
  const sendgridBody = (events: JsonValue[]) => {
    const p = getProvider('sendgrid');
    return p.serialize ? p.serialize(events as unknown as JsonObject) : JSON.stringify(events);
  };
  const one: JsonValue[] = [
    {
      timestamp: 1600112492,
      sg_message_id: 'LRzXl_NHStOGhQ4kofSm_A.filterdrecv-p3mdw1-756b745b58-kmzbl-18-5F5FC76C-9.0',
      'smtp-id': '<LRzXl_NHStOGhQ4kofSm_A@ismtpd0039p1iad1.sendgrid.net>',
      email: 'hello@world.com',
      reason: 'Bounced Address',
      event: 'dropped',
      sg_event_id: 'ZHJvcC0xMDk5NDkxOS1MUnpYbF9OSFN0T0doUTRrb2ZTbV9BLTA',
    },
  ];
  assert.equal(
    ew.verifySignature(
      ew.convertPublicKeyToECDSA(
        'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE83T4O/n84iotIvIW4mdBgQ/7dAfSmpqIM8kF9mN1flpVKS3GRqe62gw+2fNNRaINXvVpiglSI8eNEc6wEA3F+g==',
      ),
      sendgridBody(one),
      'MEUCIGHQVtGj+Y3LkG9fLcxf3qfI10QysgDWmMOVmxG0u6ZUAiEAyBiXDWzM+uOe5W0JuG+luQAbPIqHh89M15TluLtEZtM=',
      '1600112502',
    ),
    true,
    'one event',
  );
  const two: JsonValue[] = [
    {
      timestamp: 1619651146,
      email: 'invalid@gmail.com',
      event: 'processed',
      send_at: 0,
      sg_event_id: 'cHJvY2Vzc2VkLTE5OTQyMTEyLXFOd0JMZ1BRUWpXNkRKdktRd1NBYnctMA',
      sg_message_id: 'qNwBLgPQQjW6DJvKQwSAbw.filterdrecv-canary-547b64655b-cw6zx-1-6089EA4A-56.0',
      'smtp-id': '<qNwBLgPQQjW6DJvKQwSAbw@ismtpd0178p1mdw1.sendgrid.net>',
    },
    {
      type: 'blocked',
      tls: 1,
      email: 'invalid@gmail.com',
      event: 'bounce',
      ip: '167.89.101.76',
      reason:
        '552 5.2.2 The email account that you tried to reach is over quota and inactive. Please direct the recipient to https://support.google.com/mail/?p=OverQuotaPerm c17si1130468pgv.34 - gsmtp',
      sg_event_id: 'Ym91bmNlLTAtMTk5NDIxMTItcU53QkxnUFFRalc2REp2S1F3U0Fidy0w',
      sg_message_id: 'qNwBLgPQQjW6DJvKQwSAbw.filterdrecv-canary-547b64655b-cw6zx-1-6089EA4A-56.0',
      'smtp-id': '<qNwBLgPQQjW6DJvKQwSAbw@ismtpd0178p1mdw1.sendgrid.net>',
      status: '5.2.2',
      timestamp: 1619651147,
    },
  ];
  assert.equal(
    ew.verifySignature(
      ew.convertPublicKeyToECDSA(
        'MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEQ4LIFtWztlsF7skFqOncjD1lun4H5w8XOhyOArHW9RcIx/FfEzx6cikC/yPfUvwaX/JScE7Fc9CJD2afQ9Ok3Q==',
      ),
      sendgridBody(two),
      'MEYCIQC/I4o6vCgqRYrTljjoVWB/GRWNtxeePlLMHr3x9ETeRQIhAIpV+03nREPTTHWSW0wIOA0EoMPdcNgXa70yCaqDJlu5',
      '1619651159',
    ),
    true,
    'two events',
  );
});

test('SendGrid: a receiver that reads the body line by line, each line ending in CRLF (sendgrid-lines), passes valid and batch', {
  skip: pythonLibMissing('sendgrid'),
}, async () => {
  const r = await checkReceiver('sendgrid', python('sendgrid', 'sendgrid-lines'), { only: 'valid,batch' });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  assert.equal(status(r, 'valid'), 'pass', explain(r));
  assert.equal(status(r, 'batch'), 'pass', explain(r));
});

test("Discord: a bot that answers PING only for Discord's User-Agent and reads (member ?? interaction).user.id passes ping and valid", {
  skip: pythonLibMissing('discord'),
}, async () => {
  const r = await checkReceiver('discord', python('discord', 'discord-ua-ping,discord-member-user'), { only: 'valid,ping' });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  assert.equal(status(r, 'valid'), 'pass', explain(r));
  assert.equal(status(r, 'ping'), 'pass', explain(r));
});

test('Zoom: a receiver keyed on x-zm-trackingid (zoom-trackingid-dedupe) passes valid, duplicate and retry', async () => {
  const r = await checkReceiver('zoom', python('zoom', 'zoom-trackingid-dedupe'), { only: 'valid,duplicate,retry' });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  assert.deepEqual(
    ['valid', 'duplicate', 'retry'].map((n) => status(r, n)),
    ['pass', 'pass', 'pass'],
    explain(r),
  );
});

test("check writes each header name as the provider does (HubSpot's X-HubSpot-Signature-v3, Zoom's x-zm-signature), as send does", async () => {
  const seen: string[][] = [];
  const server = createServer((req, res) => {
    seen.push(req.rawHeaders.filter((_, i) => i % 2 === 0));
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    for (const [provider, names] of [
      ['hubspot', ['X-HubSpot-Signature-v3', 'X-HubSpot-Request-Timestamp', 'X-HubSpot-Signature', 'User-Agent']],
      ['zoom', ['x-zm-signature', 'x-zm-trackingid', 'User-Agent']],
    ] as const) {
      seen.length = 0;
      await check({ url, provider, secrets: [SECRET[provider] as string], only: 'valid' });
      const first = seen[0] ?? [];
      for (const name of names) assert.ok(first.includes(name), `${provider}: ${name} in ${first.join(', ')}`);
    }
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
