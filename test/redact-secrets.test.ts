import { test } from 'node:test';
import { createHash } from 'node:crypto';
import { asSent } from '../src/providers/body-placed.js';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { providers } from '../src/providers/index.js';
import type { JsonObject, JsonValue, OutgoingHeaders, ProviderName } from '../src/providers/index.js';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { fixtureFromDelivery } from '../src/fixtures/capture.js';
import { isStoredHeader, maskCredentials } from '../src/util/http-headers.js';
import { startUi } from '../src/ui/server.js';
import { hookdrill } from './helpers/cli.js';
import { deadRows } from './helpers/dead-rows.js';
import { startListen, stopAll } from './helpers/listen.js';
import { SECRETS, verifyWithOfficialCode } from './helpers/official.js';
import { reply, startServer } from './helpers/server.js';
import { tempDir } from './helpers/tmp.js';
import { assertSameShape } from './helpers/json-shape.js';

/*
 * Credentials are never kept: not in a fixture made from a delivery (`fixtures capture`, with or
 * without --redact, and the inspector's save as fixture), not in a stored, shown, replayed or
 * forwarded header. Secrets as secret scanners know them: each built at run time from a seeded
 * generator, so that no scanner run over this file finds a key in it.
 */

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const HEX = '0123456789abcdef';
const B32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

/** n characters of an alphabet, the same on every run. */
function chars(n: number, alphabet: string, seed: number): string {
  let x = seed;
  let out = '';
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    out += alphabet[Math.floor(x / 65536) % alphabet.length];
  }
  return out;
}
const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

const PI = 'pi_3QhZ9rLkdIwHu7ix0a1b2c3d';
const S = {
  stripeKey: ['sk', 'live', chars(24, ALNUM, 1)].join('_'),
  restrictedKey: ['rk', 'live', chars(24, ALNUM, 2)].join('_'),
  signingSecret: ['whsec', chars(32, ALNUM, 3)].join('_'),
  clientSecretTail: chars(25, ALNUM, 4),
  githubToken: ['ghp', chars(36, ALNUM, 5)].join('_'),
  slackBot: ['xoxb', chars(12, '0123456789', 6), chars(13, '0123456789', 7), chars(24, ALNUM, 8)].join('-'),
  slackHookPath: `T${chars(8, B32, 9)}/B${chars(10, B32, 10)}/${chars(24, ALNUM, 11)}`,
  awsKeyId: `AKIA${chars(16, B32, 12)}`,
  awsSecret: `Ab1/${chars(36, ALNUM, 13)}`,
  shopifyToken: ['shpat', chars(32, HEX, 14)].join('_'),
  jwt: [b64url({ alg: 'HS256', typ: 'JWT' }), b64url({ sub: 'user_8812', scope: 'admin' }), chars(43, `${ALNUM}-_`, 15)].join('.'),
  dbPassword: `pg-${chars(12, ALNUM, 16)}`,
  basicPassword: chars(16, ALNUM, 17),
  bearer: chars(32, ALNUM, 18),
  password: 'correct horse battery staple',
  apiKey: chars(20, ALNUM, 19),
  cvc: '737',
  // Paddle's notification secret and API key (pdl_ntfset_…, pdl_live_apikey_…).
  paddleSecret: `pdl_ntfset_01${chars(24, '0123456789abcdefghjkmnpqrstvwxyz', 20)}_${chars(32, ALNUM, 21)}`,
  paddleKey: `pdl_live_apikey_01${chars(24, '0123456789abcdefghjkmnpqrstvwxyz', 22)}_${chars(24, ALNUM, 23)}`,
  // An npm access token (granular or classic): npm_ and 36 letters and digits.
  npmToken: ['npm', chars(36, ALNUM, 24)].join('_'),
};
/** Every secret part, as it must never appear in a fixture, a line of output or a header. */
const SECRET_PARTS = [
  S.stripeKey,
  S.restrictedKey,
  S.signingSecret,
  S.clientSecretTail,
  S.githubToken,
  S.slackBot,
  S.slackHookPath,
  S.awsKeyId,
  S.awsSecret,
  S.shopifyToken,
  S.jwt,
  S.jwt.split('.')[1] as string,
  S.dbPassword,
  Buffer.from(`api:${S.basicPassword}`).toString('base64'),
  S.bearer,
  S.password,
  S.apiKey,
  S.paddleSecret.slice('pdl_ntfset_'.length),
  S.paddleKey.slice('pdl_live_apikey_'.length),
  S.npmToken,
];
const SSN = '536-22-8174';
const IBAN = 'DE89 3704 0044 0532 0130 00';

function leakyEvent(id: string): JsonObject {
  return {
    id,
    object: 'event',
    api_version: '2025-09-30.clover',
    created: 1764460800,
    type: 'payment_intent.succeeded',
    livemode: true,
    data: {
      object: {
        id: PI,
        object: 'payment_intent',
        amount: 2000,
        currency: 'eur',
        status: 'succeeded',
        client_secret: `${PI}_secret_${S.clientSecretTail}`,
        payment_method_options: { card: { request_three_d_secure: 'automatic' } },
        payment_method_data: { card: { cvc: S.cvc, cvc_check: 'pass', last4: '4242', tokenization_method: 'apple_pay' } },
        metadata: {
          api_key: S.stripeKey,
          restricted: S.restrictedKey,
          webhook_secret: S.signingSecret,
          database_url: `postgres://app:${S.dbPassword}@db.internal:5432/prod`,
          deploy_hook: `https://hooks.slack.com/services/${S.slackHookPath}`,
          notes: `pushed with ${S.githubToken}; published with ${S.npmToken}; bot ${S.slackBot}; session ${S.jwt}`,
          env: `AWS_ACCESS_KEY_ID=${S.awsKeyId} AWS_SECRET_ACCESS_KEY=${S.awsSecret}`,
          shop: S.shopifyToken,
          upstream: `Authorization: Basic ${Buffer.from(`api:${S.basicPassword}`).toString('base64')}`,
          callback: `curl -H "Authorization: Bearer ${S.bearer}" https://api.example.com/v1/orders`,
          paddle: `destination ${S.paddleSecret}, account ${S.paddleKey}`,
          ssn: SSN,
          iban: IBAN,
        },
        customer_login: { username: 'ops', password: S.password, apiKey: S.apiKey },
      },
    },
  };
}

/** ISO 13616's mod-97 check, written apart from the code under test. */
function ibanPasses(iban: string): boolean {
  const s = iban.replace(/ /g, '');
  const moved = (s.slice(4) + s.slice(0, 4)).replace(/[A-Z]/g, (c) => String(c.charCodeAt(0) - 55));
  return BigInt(moved) % 97n === 1n;
}

function assertNoSecret(where: string, text: string): void {
  for (const secret of SECRET_PARTS) assert.ok(!text.includes(secret), `${where} holds a secret (${secret.slice(0, 6)}…)`);
}

test('fixtures capture keeps no credential, with or without --redact; their shapes stay and the fixture still sends; --redact also replaces an SSN and an IBAN', async () => {
  const dir = tempDir('hookdrill-secrets-');
  const secret = SECRETS.stripe as string;
  const inbox = join(dir, 'inbox.db');
  const { p, url } = await startListen(inbox, secret);
  const official = await startServer(async (req, res) => {
    await verifyWithOfficialCode('stripe', req.rawBody, req.headers, secret).then(
      () => reply(res, 200, 'ok'),
      (err: Error) => reply(res, 400, err.message),
    );
  });
  try {
    const id = 'evt_1QhZ9rLkdIwHu7ixSecrets';
    const event = leakyEvent(id);
    const body = Buffer.from(JSON.stringify(event, null, 2));
    const signed = providers.stripe.sign(body, [secret], { nowMs: Date.now(), deliveryId: id, eventType: 'payment_intent.succeeded' });
    // Credential headers outside the old deny-list ride along: listen must not store them.
    const res = await fetch(url, {
      method: 'POST',
      body,
      headers: { ...signed, 'X-Shopify-Access-Token': S.shopifyToken, 'X-GitHub-Token': S.githubToken, 'X-Env': 'kept' },
    });
    assert.equal(res.status, 200, await res.text());

    const shown = await hookdrill(['inspect', '--inbox', inbox, '--id', id, '--json']);
    assert.equal(shown.code, 0, shown.stderr);
    const headers = (JSON.parse(shown.stdout) as { deliveries: { headers: Record<string, string> }[] }).deliveries[0]?.headers ?? {};
    assert.equal(headers['x-env'], 'kept');
    assert.ok(headers['stripe-signature']?.startsWith('t='), 'the signature is stored');
    assert.equal(headers['x-shopify-access-token'], undefined);
    assert.equal(headers['x-github-token'], undefined);
    // (The stored body is the bytes as received, secrets and all: the signature covers them.)
    assertNoSecret('the stored headers', JSON.stringify(headers));

    // Without --redact: the body as received, but for its credentials.
    const plain = await hookdrill(['fixtures', 'capture', '--inbox', inbox, '--id', id, '--out', join(dir, 'plain')]);
    assert.equal(plain.code, 0, plain.stderr);
    const text = readFileSync(join(dir, 'plain', 'payment_intent.succeeded.json'), 'utf8');
    assertNoSecret('the fixture', text);
    assertNoSecret('the output', plain.stdout + plain.stderr);
    assert.match(plain.stdout, /^replaced .*a Stripe client secret.*2 Stripe API keys.*a webhook signing secret.*\(a credential\)$/m);
    const fixture = JSON.parse(text) as typeof event & { data: { object: Record<string, never> } };
    assertSameShape(event, fixture);
    const obj = fixture.data.object as unknown as {
      client_secret: string;
      payment_method_data: { card: Record<string, string> };
      metadata: Record<string, string>;
      customer_login: Record<string, string>;
    };
    // Each fake keeps what code reads of it: the kind of key, the URL's user and host, a JWT's three parts.
    assert.equal(obj.client_secret, `${PI}_secret_redacted`);
    assert.equal(obj.metadata.api_key, 'sk_live_redacted');
    assert.equal(obj.metadata.restricted, 'rk_live_redacted');
    assert.equal(obj.metadata.webhook_secret, 'whsec_redacted');
    assert.equal(obj.metadata.database_url, 'postgres://app:redacted@db.internal:5432/prod');
    assert.equal(obj.metadata.deploy_hook, 'https://hooks.slack.com/services/T00000000/B00000000/redacted');
    assert.equal(obj.metadata.shop, 'shpat_redacted');
    assert.equal(obj.metadata.env, 'AWS_ACCESS_KEY_ID=AKIAIOSFODNN7EXAMPLE AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY');
    const jwt = /session (\S+)$/.exec(obj.metadata.notes as string)?.[1] as string;
    assert.deepEqual(
      jwt
        .split('.')
        .slice(0, 2)
        .map((part) => JSON.parse(Buffer.from(part, 'base64url').toString()) as unknown),
      [{ alg: 'none' }, {}],
    );
    assert.match(obj.metadata.callback as string, /^curl -H "Authorization: Bearer redacted" https:\/\/api\.example\.com\/v1\/orders$/);
    assert.equal(Buffer.from(/Basic (\S+)/.exec(obj.metadata.upstream as string)?.[1] ?? '', 'base64').toString(), 'redacted:redacted');
    assert.equal(obj.payment_method_data.card.cvc, '100', 'a CVC is still three digits');
    assert.equal(obj.customer_login.password, 'redacted');
    assert.equal(obj.customer_login.apiKey?.length, S.apiKey.length);
    // What only describes a credential, and personal data without --redact, stays.
    assert.equal(obj.payment_method_data.card.cvc_check, 'pass');
    assert.equal(obj.payment_method_data.card.tokenization_method, 'apple_pay');
    assert.equal(obj.customer_login.username, 'ops');
    assert.deepEqual([obj.metadata.ssn, obj.metadata.iban], [SSN, IBAN]);

    // With --redact: personal numbers too.
    const red = await hookdrill(['fixtures', 'capture', '--inbox', inbox, '--id', id, '--out', join(dir, 'red'), '--redact', '--json']);
    assert.equal(red.code, 0, red.stderr);
    const file = join(dir, 'red', 'payment_intent.succeeded.json');
    const redText = readFileSync(file, 'utf8');
    assertNoSecret('the redacted fixture', redText + red.stdout);
    assert.ok(!redText.includes(SSN) && !redText.includes('536228174'), 'the SSN is gone');
    assert.ok(!redText.includes(IBAN) && !redText.includes(IBAN.replace(/ /g, '')), 'the IBAN is gone');
    const meta = (JSON.parse(redText) as { data: { object: { metadata: Record<string, string> } } }).data.object.metadata;
    assert.match(meta.ssn as string, /^987-65-432\d$/, "the SSA's advertising block");
    assert.match(meta.iban as string, /^DE\d\d [X0-9]{4} [X0-9]{4} [X0-9]{4} [X0-9]{4} [X0-9]{2}$/);
    assert.ok(ibanPasses(meta.iban as string), 'the fake IBAN passes the check a receiver may run');
    const result = JSON.parse(red.stdout) as { personalNumbers: Record<string, number>; credentials: string[] };
    assert.deepEqual(result.personalNumbers, { ssn: 1, iban: 1 });
    assert.ok(result.credentials.length > 5);

    // The fixture is still an event Stripe's own library accepts.
    const s = await hookdrill(['send', '--provider', 'stripe', file, '--url', official.url, '--secret', secret]);
    assert.equal(s.code, 0, s.stdout + s.stderr);
    assert.equal(official.requests.length, 1);
    assertNoSecret('the sent body', official.requests[0]?.rawBody.toString() ?? '');
  } finally {
    await official.close();
    await stopAll(p);
  }
});

test("the inspector's save as fixture keeps no credential either", async () => {
  const dir = tempDir('hookdrill-secrets-');
  const inbox = join(dir, 'inbox.db');
  const id = 'evt_1QhZ9rLkdIwHu7ixFromUi';
  await deadRows(
    inbox,
    [{ deliveryId: id, eventType: 'payment_intent.succeeded', body: Buffer.from(JSON.stringify(leakyEvent(id))) }],
    'x',
  );
  const out = join(dir, 'fixtures');
  const ui = await startUi({ inbox, port: 0, token: 'tok-test', fixturesDir: out });
  try {
    const res = await fetch(new URL('api/fixture', ui.url), {
      method: 'POST',
      headers: { 'x-hookdrill-token': 'tok-test', 'content-type': 'application/json' },
      body: JSON.stringify({ id, redact: false }),
    });
    const answer = await res.text();
    assert.equal(res.status, 200, answer);
    assertNoSecret('the answer', answer);
    assertNoSecret('the fixture', readFileSync(join(out, 'payment_intent.succeeded.json'), 'utf8'));
  } finally {
    await ui.close();
  }
});

/** The library's capture of a stored Stripe delivery, without --redact. */
function capture(body: JsonObject) {
  return fixtureFromDelivery({
    source: 'stripe',
    deliveryId: 'evt_lib',
    eventType: 'payment_intent.succeeded',
    body: Buffer.from(JSON.stringify(body)),
    headers: { 'content-type': 'application/json' },
  });
}

test('redaction by key and by shape: descriptions of credentials, ids and enums stay; a fixture of a fixture changes nothing', () => {
  const body: JsonObject = {
    token: chars(24, ALNUM, 30),
    cart_token: chars(32, HEX, 31),
    secret: '********',
    private_key: `-----BEGIN RSA PRIVATE KEY-----\n${chars(64, ALNUM, 32)}\n-----END RSA PRIVATE KEY-----`,
    cvv: 4321,
    access_tokens_url: 'https://api.github.com/app/installations/1/access_tokens',
    permissions: { secrets: 'write', secret_scanning_alerts: 'read' },
    secret_type: 'adafruit_io_key',
    authorization: 'iauth_1MtxyzLkdIwHu7ix',
    idempotency_key: '5a1c7f0e-9b8d-4c2a-8e3f-0a1b2c3d4e5f',
    token_expires_at: '2026-11-30T00:00:00Z',
    redirect: `https://app.example.com/cb?state=xyz&access_token=${chars(20, ALNUM, 33)}&page=2`,
    prose: 'Basic information about Bearer authentication',
    commit: 'a94a8fe5ccb19ba61c4c0873d391e987982fbbd3',
    aws: { AccessKeyId: `ASIA${chars(16, B32, 34)}`, key: `Zz9+${chars(36, ALNUM, 35)}` },
  };
  const { body: value, credentials } = capture(body);
  const v = value as Record<string, JsonValue>;
  assert.equal(v.token, 'redactedxxxxxxxxxxxxxxxx', 'as long as the original');
  assert.equal(v.cart_token, 'redactedxxxxxxxxxxxxxxxxxxxxxxxx');
  assert.equal(v.secret, '********', 'already masked');
  assert.equal(v.private_key, '-----BEGIN RSA PRIVATE KEY-----\nredacted\n-----END RSA PRIVATE KEY-----');
  assert.equal(v.cvv, 1000);
  assert.equal(v.redirect, 'https://app.example.com/cb?state=xyz&access_token=redacted&page=2');
  assert.deepEqual(v.aws, { AccessKeyId: 'ASIAIOSFODNN7EXAMPLE', key: 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY' });
  for (const kept of [
    'access_tokens_url',
    'permissions',
    'secret_type',
    'authorization',
    'idempotency_key',
    'token_expires_at',
    'prose',
    'commit',
  ]) {
    assert.deepEqual(v[kept], body[kept], kept);
  }
  assert.deepEqual(credentials, [
    '2 tokens',
    'a private key',
    'a card security code',
    'a credential in a key=value',
    'an AWS access key id',
    'an AWS secret access key',
  ]);
  const again = capture(value);
  assert.deepEqual(again.body, value);
  assert.deepEqual(again.credentials, [], 'a fake is never reported as a secret');
});

test("a fake trips none of gitleaks' rules for its kind, so a committed fixture passes a secret scan", () => {
  const { text } = capture(leakyEvent('evt_scan'));
  // The rules' regexes as gitleaks' default config (config/gitleaks.toml) writes them.
  const rules: [string, RegExp][] = [
    ['stripe-access-token', /\b((?:sk|rk)_(?:test|live|prod)_[a-zA-Z0-9]{10,99})(?:[\x60'"\s;]|\\[nrt]|$)/],
    ['github-pat', /ghp_[0-9a-zA-Z]{36}/],
    ['npm-access-token', /\b(npm_[a-z0-9]{36})(?:['|"\n\r\s\x60;]|$)/i],
    ['slack-bot-token', /(xoxb-[0-9]{10,13}-[0-9]{10,13}[a-zA-Z0-9-]*)/],
    ['slack-webhook-url', /(?:https?:\/\/)?hooks.slack.com\/(?:services|workflows|triggers)\/[A-Za-z0-9+/]{43,56}/],
    ['shopify-access-token', /shpat_[a-fA-F0-9]{32}/],
    ['jwt', /\b(ey[a-zA-Z0-9]{17,}\.ey[a-zA-Z0-9/\\_-]{17,}\.(?:[a-zA-Z0-9/\\_-]{10,}={0,2})?)(?:['|"\n\r\s\x60;]|$)/],
  ];
  for (const [rule, re] of rules) assert.doesNotMatch(text, re, rule);
  // aws-access-token matches AWS's example id, which its allowlist (`.+EXAMPLE$`) lets through.
  for (const m of text.matchAll(/\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z2-7]{16})\b/g)) assert.match(m[1] as string, /EXAMPLE$/);
});

/** Each provider's sign() on each kind of body it sends, rotation included. */
function everySigning(): { provider: ProviderName; headers: OutgoingHeaders; body: Buffer }[] {
  const at = { nowMs: Date.now(), eventType: 'x' };
  const json = (v: unknown) => Buffer.from(JSON.stringify(v));
  const out: { provider: ProviderName; headers: OutgoingHeaders; body: Buffer }[] = [];
  const add = (provider: ProviderName, body: Buffer, eventType: string, deliveryId: string, facts?: Record<string, string>) => {
    const secrets = [SECRETS[provider] as string, SECRETS[provider] as string];
    // Square signs the URL it posts to.
    const signed = providers[provider].sign(body, secrets, {
      ...at,
      eventType,
      deliveryId,
      url: 'https://hooks.example.com/x',
      ...(facts ? { facts } : {}),
    });
    // As it goes out: a signature that is a field of the body put into it (SNS's by placeSignature, Mailgun's by asSent).
    out.push({ provider, ...(providers[provider].placeSignature?.(body, signed) ?? asSent(providers[provider], body, signed)) });
  };
  add('stripe', json({ id: 'evt_sign_1', object: 'event', type: 'invoice.paid', livemode: false }), 'invoice.paid', 'evt_sign_1');
  const snsMessage = {
    Type: 'Notification',
    MessageId: '22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324',
    TopicArn: 'arn:aws:sns:us-west-2:123456789012:MyTopic',
    Message: 'Hello world!',
    Timestamp: '2026-01-01T00:00:00.000Z',
    SignatureVersion: '1',
    Signature: 'unsigned',
    SigningCertURL: 'https://127.0.0.1:9443/SimpleNotificationService-0.pem',
  };
  add('sns', json(snsMessage), 'Notification', snsMessage.MessageId);
  const issue = json({ action: 'opened', issue: { number: 1 }, repository: { id: 1 } });
  const gh = providers.github.wireFacts?.(JSON.parse(issue.toString()) as JsonObject, undefined);
  add('github', issue, 'issues.opened', '72d3162e-cc78-11e3-81ab-4c9367dc0951', gh);
  add(
    'github',
    Buffer.from(`payload=${encodeURIComponent('{"zen":"Keep it logically awesome."}')}`),
    'ping',
    '72d3162e-cc78-11e3-81ab-4c9367dc0952',
  );
  add('slack', json({ type: 'event_callback', event_id: 'Ev0SIGN1', event: { type: 'app_mention' } }), 'app_mention', 'Ev0SIGN1');
  add('slack', Buffer.from('command=%2Fweather&text=94070&trigger_id=13345224609.738474920.8088930838d88f008e0'), 'command', 'sign-cmd');
  add('slack', Buffer.from('ssl_check=1&token=x'), 'ssl_check', 'sign-ssl');
  add('standard', json({ type: 'invoice.paid', timestamp: '2026-11-30T00:00:00Z' }), 'invoice.paid', 'msg_sign_std');
  add('svix', json({ type: 'email.sent', created_at: '2026-11-30T00:00:00Z' }), 'email.sent', 'msg_sign_svix');
  add('shopify', json({ id: 1 }), 'orders/create', 'b54557e4-bdd9-4b37-8a5f-bf7d70bcd043');
  add('paddle', json({ event_id: 'evt_01sign', event_type: 'transaction.completed', data: {} }), 'transaction.completed', 'evt_01sign');
  add(
    'workos',
    json({ id: 'event_01SIGN', event: 'user.created', data: {}, created_at: '2026-11-30T00:00:00.000Z' }),
    'user.created',
    'event_01SIGN',
  );
  add('square', json({ event_id: 'sq-sign-1', type: 'payment.created', data: {} }), 'payment.created', 'sq-sign-1');
  add('hubspot', json([{ eventId: 1, subscriptionType: 'contact.creation' }]), 'contact.creation', '1');
  add('zoom', json({ event: 'meeting.started', event_ts: 1767225600000, payload: {} }), 'meeting.started', '1767225600000');
  add(
    'linear',
    json({ action: 'create', type: 'Issue', webhookTimestamp: Date.now(), data: {} }),
    'Issue',
    'a5f1c7e2-0b1d-4c3e-9f8a-1b2c3d4e5f60',
  );
  add('sendgrid', json([{ email: 'a@example.com', event: 'delivered', sg_event_id: 'sgSIGN1', timestamp: 1 }]), 'delivered', 'sgSIGN1');
  add('line', json({ destination: 'U1', events: [{ type: 'follow', webhookEventId: '01SIGN' }] }), 'follow', '01SIGN');
  add('discord', json({ id: '1456074443982046023', type: 2, data: { name: 'hookdrill' } }), 'application_command', '1456074443982046023');
  add('gitlab', json({ object_kind: 'push', event_name: 'push' }), 'Push Hook', '3a427872-00df-429c-9bc9-a9475de2efe4');
  // Postmark's delivery id is its body's SHA-256: no header carries one.
  const record = json({ RecordType: 'Delivery', MessageID: '883953f4-6105-42a2-a16a-77a8eac79483' });
  add('postmark', record, 'Delivery', createHash('sha256').update(record).digest('hex'));
  add(
    'intercom',
    json({ type: 'notification_event', id: 'notif_3a1862e2-6876-4c03-bd46-e065ab0f141c', topic: 'company.updated' }),
    'company.updated',
    'notif_3a1862e2-6876-4c03-bd46-e065ab0f141c',
  );
  add(
    'twitch',
    json({ subscription: { type: 'channel.follow', version: '2' }, event: {} }),
    'channel.follow',
    'ae2ff348-e102-16be-a3eb-6830c1bf38d2',
  );
  add(
    'mailgun',
    json({ signature: {}, 'event-data': { id: 'Fs7-5t81S2ispqxqDw2U4Q', event: 'delivered' } }),
    'delivered',
    'Fs7-5t81S2ispqxqDw2U4Q',
  );
  add(
    'twilio',
    Buffer.from('MessageSid=SM8f2b1c4d6e7a9b0c1d2e3f4a5b6c7d8e&SmsStatus=received&Body=hi&From=%2B14155550100'),
    'message.received',
    '79973372-368a-4597-8e52-b2bdf630ae69',
  );
  add(
    'pubsub',
    json({
      message: { data: 'e30=', messageId: '2070443601311540', message_id: '2070443601311540' },
      subscription: 'projects/p/subscriptions/s',
    }),
    'pubsub',
    '2070443601311540',
  );
  // Plaid's delivery id is its body's SHA-256, as Postmark's.
  const plaidBody = json({
    webhook_type: 'TRANSACTIONS',
    webhook_code: 'SYNC_UPDATES_AVAILABLE',
    item_id: 'wz666MBjYWTp2PDzzggYhM6oWWmBb',
  });
  add('plaid', plaidBody, 'TRANSACTIONS.SYNC_UPDATES_AVAILABLE', createHash('sha256').update(plaidBody).digest('hex'));
  add(
    'contentful',
    json({ sys: { type: 'Entry', id: '4o19ghFQzzNX9uiJifi7Hf', space: { sys: { type: 'Link', linkType: 'Space', id: 'bkz6hygz9igz' } } } }),
    'ContentManagement.Entry.publish',
    // A real delivery's X-Contentful-Idempotency-Key (test/wire/recorded/contentful.json).
    '94516f9a3fe42e3065ad9ef4f2a9f865c9bf0a962db8b7cfcb470b42052ea22c',
  );
  add(
    'paypal',
    json({ id: 'WH-58D329510W468432D-8HN650336L201105X', event_type: 'PAYMENT.CAPTURE.COMPLETED', resource: { id: '12A34567BC123456S' } }),
    'PAYMENT.CAPTURE.COMPLETED',
    'WH-58D329510W468432D-8HN650336L201105X',
  );
  // Graph's secret (the clientState) goes into each notification of the body: no header carries it.
  add(
    'graph',
    json({
      value: [
        {
          id: 'lsgTZMr9KwAAA',
          subscriptionId: '7f105c7d-2dc5-4530-97cd-4e7ae6534c07',
          changeType: 'created',
          resource: 'Users/x/Messages/y',
        },
      ],
    }),
    'created',
    'lsgTZMr9KwAAA',
  );
  const product = JSON.parse(readFileSync(new URL('../../fixtures/shopify/Product.create.json', import.meta.url), 'utf8')) as JsonObject;
  add(
    'shopify',
    json(product),
    'Product/create',
    'b54557e4-bdd9-4b37-8a5f-bf7d70bcd044',
    providers.shopify.wireFacts?.(product, undefined),
  );
  return out;
}

test('every header a provider signs with is stored, shown and kept for replay; credential headers, by name or by value, are not', async () => {
  const signings = everySigning();
  assert.deepEqual(new Set(signings.map((s) => s.provider)), new Set(Object.keys(providers)), 'every provider is signed with');
  /**
   * A token provider's signature header is the secret itself (GitLab's X-Gitlab-Token), and a JWT
   * provider's a bearer token (Pub/Sub push's, good for an hour): a credential, never stored or shown.
   */
  // Plaid's JWT binds the body's hash and is judged 5 minutes old: a signature of that body, kept as one (the secret
  // its receiver holds is its Plaid API secret, which no request carries).
  const tokenHeader = (provider: ProviderName) =>
    providers[provider].tokenOnly || (providers[provider].jwt && !providers[provider].jwt?.bodyHash)
      ? providers[provider].signatureHeader
      : undefined;
  for (const { provider, headers } of signings) {
    for (const [name, value] of Object.entries(headers)) {
      if (name === tokenHeader(provider)) {
        assert.equal(isStoredHeader(name, value), false, `${provider}: ${name}, the secret itself, is stored`);
        assert.equal(maskCredentials({ [name]: value })[name], '***', `${provider}: ${name}, the secret itself, is shown`);
        continue;
      }
      assert.ok(isStoredHeader(name, value), `${provider}: ${name} is dropped`);
      assert.equal(maskCredentials({ [name]: value })[name], value, `${provider}: ${name} is masked`);
    }
  }

  // Through the CLI: a HAR of each provider's deliveries, carrying credentials as gateways and apps
  // send them, imported; then the rows shown and replayed with their stored headers.
  const credentialHeaders = {
    'X-Shopify-Access-Token': S.shopifyToken,
    'X-GitHub-Token': S.githubToken,
    'X-Auth': `Bearer ${S.bearer}`,
    'X-Forwarded-Credentials': `Basic ${Buffer.from(`api:${S.basicPassword}`).toString('base64')}`,
    'X-Upstream': S.stripeKey,
    'X-Session': S.jwt,
    'X-Callback': `postgres://app:${S.dbPassword}@db.internal/prod`,
  };
  const dir = tempDir('hookdrill-secrets-');
  const inbox = join(dir, 'inbox.db');
  for (const provider of Object.keys(providers) as ProviderName[]) {
    const entries = signings
      .filter((s) => s.provider === provider)
      .map((s) => ({
        request: {
          method: 'POST',
          url: 'https://example.com/hooks',
          headers: Object.entries({ ...s.headers, ...credentialHeaders, 'X-Env': 'kept' }).map(([name, value]) => ({ name, value })),
          postData: { mimeType: 'application/json', text: s.body.toString() },
        },
      }));
    writeFileSync(join(dir, `${provider}.har`), JSON.stringify({ log: { version: '1.2', entries } }));
    const r = await hookdrill(['import', join(dir, `${provider}.har`), '--inbox', inbox, '--provider', provider]);
    assert.equal(r.code, 0, r.stderr);
  }
  const db = openSqliteInbox(inbox, { readonly: true, create: false });
  try {
    const rows = await db.select({}, { limit: 100 });
    for (const s of signings.filter((x) => !x.body.toString().startsWith('ssl_check'))) {
      const row = rows.find((r) => r.source === s.provider && r.body?.equals(s.body));
      assert.ok(row, `${s.provider}: imported`);
      for (const [name, value] of Object.entries(s.headers))
        assert.equal(row.headers[name.toLowerCase()], name === tokenHeader(s.provider) ? undefined : value, `${s.provider}: ${name}`);
      assert.equal(row.headers['x-env'], 'kept');
      assertNoSecret(`${s.provider}'s stored headers`, JSON.stringify(row.headers));
    }
  } finally {
    await db.close();
  }

  // A row stored before these were known to be credentials: not shown, not sent on.
  const old = join(dir, 'old.db');
  const id = 'evt_1QhZ9rLkdIwHu7ixOldRow';
  const body = Buffer.from(JSON.stringify({ id, object: 'event', type: 'invoice.paid' }));
  const signed = providers.stripe.sign(body, [SECRETS.stripe as string], { nowMs: Date.now(), deliveryId: id, eventType: 'invoice.paid' });
  const stored = Object.fromEntries(
    Object.entries({ ...signed, ...credentialHeaders, 'X-Env': 'kept' }).map(([k, v]) => [k.toLowerCase(), v]),
  );
  await deadRows(old, [{ deliveryId: id, body, headers: stored }], 'down');
  const shown = await hookdrill(['inspect', '--inbox', old, '--id', id, '--json']);
  assert.equal(shown.code, 0, shown.stderr);
  assertNoSecret('inspect', shown.stdout);
  const app = await startServer((_req, res) => reply(res, 200, 'ok'));
  try {
    const r = await hookdrill([
      'replay',
      '--inbox',
      old,
      '--status',
      'dead',
      '--to',
      app.url,
      '--provider',
      'stripe',
      '--original-headers',
    ]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const got = app.requests[0]?.headers ?? {};
    assert.equal(got['stripe-signature'], signed['Stripe-Signature']);
    assert.equal(got['x-env'], 'kept');
    assertNoSecret('the replayed request', JSON.stringify(got) + r.stdout + r.stderr);
  } finally {
    await app.close();
  }
});
