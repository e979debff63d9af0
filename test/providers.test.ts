import { test } from 'node:test';
import { asSent as bodyPlaced } from '../src/providers/body-placed.js';
import { windowSec } from '../src/providers/util.js';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { signRequest as contentfulSignRequest } from '@contentful/node-apps-toolkit';
import { getProvider, providers, SignatureError } from '../src/providers/index.js';
import type { Provider, ProviderName } from '../src/providers/index.js';
import { compileFixture, defaultFixtureOf, resolveFixtures } from '../src/fixtures/index.js';
import type { Fixture } from '../src/fixtures/index.js';
import { SECRETS, publicKeyOf, verifyWithOfficialCode } from './helpers/official.js';

const NOW = Date.parse('2026-11-30T12:00:00Z');
const body = Buffer.from('{"id":"evt_1","type":"invoice.paid","data":{"object":{"amount_paid":2000}}}');
/** The body a provider signs: with its send time inside where the clock is in the body (Linear's webhookTimestamp). */
const bodyOf = (p: Provider, nowMs: number) =>
  p.placeSignature || p.tokenOnly === 'field' || p.queryPlaced
    ? // A signature that is a field of the body (SNS's), or a secret in each of its items (Graph's
      // clientState), goes into a message of the provider's own shape; a JSON body signed through a
      // hash in the URL (Twilio's bodySHA256) goes to another URL than HOOK_URL, so Twilio is held
      // here on its default (form) fixture — its JSON in verdicts-twilio-json.test.
      compileFixture(p, resolveFixtures([defaultFixtureOf(p.name)], p.name)[0] as Fixture, []).make(nowMs).rawBody
    : p.clockInBody
      ? Buffer.from(JSON.stringify({ ...JSON.parse(body.toString('utf8')), webhookTimestamp: nowMs }))
      : body;

/** The request as it goes out: a signature that is a field of the body (SNS's, Mailgun's) put into it, as send and check put it. */
function asSent(p: Provider, raw: Buffer, headers: Record<string, string>): { body: Buffer; headers: Record<string, string> } {
  return p.placeSignature ? p.placeSignature(raw, headers) : bodyPlaced(p, raw, headers);
}

function lower(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

test("github: the known answer from GitHub's docs", () => {
  const headers = providers.github.sign(Buffer.from('Hello, World!'), ["It's a Secret to Everybody"], {
    nowMs: NOW,
    deliveryId: '72d3162e-cc78-11e3-81ab-4c9367dc0958',
    eventType: 'push',
  });
  assert.equal(headers['X-Hub-Signature-256'], 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17');
  assert.equal(headers['X-GitHub-Delivery'], '72d3162e-cc78-11e3-81ab-4c9367dc0958');
  assert.equal(headers['X-GitHub-Event'], 'push');
  assert.match(headers['User-Agent'] ?? '', /^GitHub-Hookshot\//);
});

test('standard: the known answer from the standard-webhooks test suite', () => {
  const headers = providers.standard.sign(Buffer.from('{"test": 2432232314}'), ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'], {
    nowMs: 1614265330 * 1000,
    deliveryId: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    eventType: 'test',
  });
  assert.equal(headers['webhook-signature'], 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  assert.equal(headers['webhook-timestamp'], '1614265330');
  assert.equal(headers['webhook-id'], 'msg_p5jXN8AQM9LWM0D4loKWxJek');
});

test('standard: the verifier accepts the standard-webhooks known answer, and nothing else', () => {
  const body = Buffer.from('{"test": 2432232314}');
  const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
  const headers = {
    'webhook-id': 'msg_p5jXN8AQM9LWM0D4loKWxJek',
    'webhook-timestamp': '1614265330',
    'webhook-signature': 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
  };
  const at = { nowMs: 1614265330 * 1000 };
  providers.standard.verify(body, headers, [secret], at);
  assert.throws(() => providers.standard.verify(Buffer.from('{"test": 2432232315}'), headers, [secret], at), /no webhook-signature/);
  assert.throws(() => providers.standard.verify(body, { ...headers, 'webhook-id': 'msg_other' }, [secret], at), /no webhook-signature/);
  assert.throws(() => providers.standard.verify(body, headers, ['whsec_bm90IHRoZSBrZXk='], at), /no webhook-signature/);
});

test('slack: the known answer from Slack\'s "verifying requests" docs', () => {
  const slackBody = Buffer.from(
    'token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c',
  );
  const headers = providers.slack.sign(slackBody, ['8f742231b10e8888abcd99yyyzzz85a5'], {
    nowMs: 1531420618 * 1000,
    deliveryId: 'Ev1',
    eventType: 'message',
  });
  assert.equal(headers['X-Slack-Signature'], 'v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503');
  assert.equal(headers['X-Slack-Request-Timestamp'], '1531420618');
});

test("twitch: the known answer of a request the Twitch CLI signed (twitch_api2's verify_request), verified at nine, three and no fraction digits", () => {
  // Twitch publishes no vector of its own: this one is the Twitch CLI's (secret "secretabcd"),
  // recorded in twitch-rs/twitch_api2's src/eventsub/mod.rs; the docs' algorithm gives the same.
  const cliBody = Buffer.from(
    '{"subscription":{"id":"ae2ff348-e102-16be-a3eb-6830c1bf38d2","status":"enabled","type":"channel.follow","version":"1","condition":{"broadcaster_user_id":"44429626"},"transport":{"method":"webhook","callback":"null"},"created_at":"2021-02-19T23:47:00.7621315Z"},"event":{"user_id":"28408015","user_login":"testFromUser","user_name":"testFromUser","broadcaster_user_id":"44429626","broadcaster_user_login":"44429626","broadcaster_user_name":"testBroadcaster"}}',
  );
  assert.equal(cliBody.length, 458, "the recorded request's Content-Length");
  const headers = {
    'twitch-eventsub-message-id': 'ae2ff348-e102-16be-a3eb-6830c1bf38d2',
    'twitch-eventsub-message-timestamp': '2021-02-19T23:47:00.8091512Z',
    'twitch-eventsub-message-signature': 'sha256=d10f5bd9474b7ac7bd7105eb79c2d52768b4d0cd2a135982c3bf5a1d59a78823',
  };
  const at = Date.parse('2021-02-19T23:47:00.809Z');
  providers.twitch.verify(cliBody, headers, ['secretabcd'], { nowMs: at + 599_000 });
  assert.throws(() => providers.twitch.verify(cliBody, headers, ['secretabcd'], { nowMs: at + 601_000 }), /601s old, beyond the 600s/);
  // One-sided, as the docs' replay rule is: a timestamp ahead is no replay.
  providers.twitch.verify(cliBody, headers, ['secretabcd'], { nowMs: at - 3_600_000 });
  assert.throws(() => providers.twitch.verify(cliBody, headers, ['secretabcdX'], { nowMs: at }), /does not match/);
  // The digits are signed as sent: a timestamp written otherwise is another message.
  assert.throws(
    () =>
      providers.twitch.verify(cliBody, { ...headers, 'twitch-eventsub-message-timestamp': '2021-02-19T23:47:00.809Z' }, ['secretabcd'], {
        nowMs: at,
      }),
    /does not match/,
  );
  for (const ts of ['2021-02-19T23:47:00.809151200Z', '2021-02-19T23:47:00Z', '2021-02-19T23:47:00.8+00:00']) {
    const h = providers.twitch.sign(cliBody, ['secretabcd'], { nowMs: at, deliveryId: 'm', eventType: 'channel.follow' });
    const signed = `sha256=${createHmac('sha256', 'secretabcd').update(`m${ts}`).update(cliBody).digest('hex')}`;
    const given = { ...lower(h), 'twitch-eventsub-message-timestamp': ts, 'twitch-eventsub-message-signature': signed };
    providers.twitch.verify(cliBody, given, ['secretabcd'], { nowMs: at });
  }
  for (const ts of ['1613778420', '2021-02-19 23:47:00Z', '2021-02-19T23:47:00.1234567890Z'])
    assert.throws(
      () => providers.twitch.verify(cliBody, { ...headers, 'twitch-eventsub-message-timestamp': ts }, ['secretabcd'], { nowMs: at }),
      (e: unknown) => e instanceof SignatureError && e.code === 'malformed_header',
      ts,
    );
});

test('stripe: the header is t=<seconds>,v1=<hex> and one v1 per secret during rotation', () => {
  const headers = providers.stripe.sign(body, ['whsec_old', 'whsec_new'], { nowMs: NOW, deliveryId: 'evt_1', eventType: 'invoice.paid' });
  const value = headers['Stripe-Signature'] ?? '';
  assert.match(value, /^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
  assert.ok(value.startsWith(`t=${Math.floor(NOW / 1000)},`));
  // Each secret alone verifies: a receiver mid-rotation accepts with either.
  for (const secret of ['whsec_old', 'whsec_new']) {
    providers.stripe.verify(body, lower(headers), [secret], { nowMs: NOW });
  }
});

/** The URL the provider posts to: URL-bound schemes (Square) sign it; the rest ignore it. */
const HOOK_URL = 'https://hooks.example.com/webhooks/provider';

for (const name of Object.keys(providers) as ProviderName[]) {
  test(`${name}: what hookdrill signs passes the provider's official verifier`, async () => {
    const p = getProvider(name);
    const unsigned = bodyOf(p, Date.now());
    const { body, headers } = asSent(
      p,
      unsigned,
      p.sign(unsigned, [SECRETS[name] as string], {
        nowMs: Date.now(),
        deliveryId: p.newDeliveryId(),
        eventType: 'invoice.paid',
        url: HOOK_URL,
      }),
    );
    await verifyWithOfficialCode(name, body, lower(headers), SECRETS[name] as string, HOOK_URL);
    // ...and the official verifier refuses a different secret (for Discord, another key pair's), so the check above can fail.
    const other =
      name === 'standard' || name === 'svix' ? `whsec_${Buffer.from('another key of some length').toString('base64')}` : 'wrong';
    await assert.rejects(verifyWithOfficialCode(name, body, lower(headers), other, HOOK_URL));
    // A URL-bound scheme: the same signature for another URL is refused by the official verifier too.
    if (p.urlBound) await assert.rejects(verifyWithOfficialCode(name, body, lower(headers), SECRETS[name] as string, `${HOOK_URL}x`));
  });

  test(`${name}: verify accepts its own signature and names each failure`, async () => {
    const p = getProvider(name);
    const unsigned = bodyOf(p, NOW);
    const secret = SECRETS[name] as string;
    // What a receiver holds: the secret, or for a key pair (Discord) its public key.
    const held = publicKeyOf(secret, name);
    const signed = lower(
      p.sign(unsigned, [secret], { url: HOOK_URL, nowMs: NOW, deliveryId: p.newDeliveryId(), eventType: 'invoice.paid' }),
    );
    const { body, headers } = asSent(p, unsigned, signed);
    // The request as it went out, verified again with other secrets or at another time.
    const verifyAs = (
      b: Buffer,
      h: Record<string, string>,
      secrets: string[],
      opts: { url?: string; nowMs: number; toleranceSec?: number },
    ) => p.verify(b, lower(h), secrets, opts);
    verifyAs(body, headers, [held], { url: HOOK_URL, nowMs: NOW });
    // Rotation on the receiving side: any of the secrets may match.
    const notIt =
      name === 'standard' || name === 'svix' ? `whsec_${Buffer.from('a retired key, not this one').toString('base64')}` : 'not-it';
    verifyAs(body, headers, [notIt, held], { url: HOOK_URL, nowMs: NOW });

    const code = (fn: () => void) => {
      try {
        fn();
      } catch (err) {
        assert.ok(err instanceof SignatureError, String(err));
        return err.code;
      }
      return 'accepted';
    };
    const sigHeader = p.signatureHeader.toLowerCase();
    // A byte of the body as sent changed (where a signature is written into it, "evt_1" made "evt_0":
    // still JSON; in a body of the provider's own shape, Graph's, a letter of the resource's path).
    const sent = { body, headers };
    const flipped = Buffer.from(sent.body);
    const at = !p.bodySignature ? 10 : flipped.includes('evt_1') ? flipped.indexOf('evt_1') + 4 : flipped.indexOf('"resource":"') + 13;
    flipped[at] = (flipped[at] as number) ^ 1;
    assert.equal(
      code(() => p.verify(flipped, lower(sent.headers), [held], { url: HOOK_URL, nowMs: NOW })),
      // A shared token (GitLab's X-Gitlab-Token) covers nothing of the request, Mailgun's signature
      // only its timestamp and token, and a JWT (Pub/Sub push's OIDC token) its claims: a changed
      // body with the right token, signature or JWT is accepted, as the documented rule accepts it —
      // the scheme's property. A JWT with the body's hash in a claim (Plaid's request_body_sha256) binds it.
      p.tokenOnly || p.bodySignature || (p.jwt && !p.jwt.bodyHash) ? 'accepted' : 'no_match',
    );
    if (p.tokenOnly || p.bodySignature || (p.jwt && !p.jwt.bodyHash))
      // ...and the official rule agrees: what verify accepts here, it accepts too, so the branch is not a loophole of hookdrill's own
      // (a JWT signed now: the official verifier reads the real clock).
      await verifyWithOfficialCode(
        name,
        flipped,
        p.jwt ? lower(p.sign(body, [secret], { url: HOOK_URL, nowMs: Date.now(), deliveryId: 'x', eventType: 'x' })) : lower(sent.headers),
        secret,
        HOOK_URL,
      );
    const wrongSecret =
      name === 'standard' || name === 'svix' ? `whsec_${Buffer.from('another key entirely!!').toString('base64')}` : 'wrong';
    assert.equal(
      code(() => verifyAs(body, headers, [wrongSecret], { url: HOOK_URL, nowMs: NOW })),
      'no_match',
    );
    const missing = { ...signed };
    delete missing[sigHeader];
    const unsent = asSent(p, unsigned, missing);
    assert.equal(
      code(() => p.verify(unsent.body, unsent.headers, [held], { url: HOOK_URL, nowMs: NOW })),
      // A signature in the body (SNS's) is judged with the body: the headers alone refuse nothing, so every failure is no_match.
      p.placeSignature ? 'no_match' : 'missing_header',
    );
    const garbage = asSent(p, unsigned, { ...signed, [sigHeader]: 'garbage' });
    assert.equal(
      code(() => p.verify(garbage.body, garbage.headers, [held], { url: HOOK_URL, nowMs: NOW })),
      // A bare token (or Graph's clientState) has no form to break: any text is a token, just not the right one.
      p.tokenOnly === 'token' || p.tokenOnly === 'field' || p.placeSignature ? 'no_match' : 'malformed_header',
    );
    assert.equal(
      code(() => verifyAs(body, headers, [], { url: HOOK_URL, nowMs: NOW })),
      'no_secret',
    );
    if (p.urlBound) {
      // Signed for the URL posted to: verified over another, or over none, it does not match.
      assert.equal(
        code(() => verifyAs(body, headers, [held], { url: 'http://127.0.0.1:3000/hooks', nowMs: NOW })),
        'no_match',
      );
      assert.equal(
        code(() => verifyAs(body, headers, [held], { nowMs: NOW })),
        'no_match',
      );
    }
    if (p.timestamped) {
      // Each provider's own window (Paddle's SDK: 5 s; the rest 5 minutes), and its rule for the future.
      const window = windowSec(p) * 1000;
      assert.equal(
        code(() => verifyAs(body, headers, [held], { url: HOOK_URL, nowMs: NOW + window + 1_000 })),
        'stale_timestamp',
      );
      assert.equal(
        code(() => verifyAs(body, headers, [held], { url: HOOK_URL, nowMs: NOW - window - 1_000 })),
        // One-sided where the provider says so, as its SDK is (Paddle); hookdrill's Stripe verify is two-sided, stricter than stripe-node.
        p.futureAccepted ? 'accepted' : 'future_timestamp',
      );
      assert.equal(
        code(() => verifyAs(body, headers, [held], { url: HOOK_URL, nowMs: NOW + window - 1_000 })),
        'accepted',
      );
      assert.equal(
        code(() => verifyAs(body, headers, [held], { url: HOOK_URL, nowMs: NOW + 61_000, toleranceSec: 60 })),
        'stale_timestamp',
      );
    } else if (p.jwt) {
      // A JWT's own clock: exp an hour after iat (Google's ID tokens), each side with the official verifier's skew;
      // or iat alone, at most lifetimeSec old with no skew (Plaid's 5 minutes).
      const { lifetimeSec, leewaySec } = p.jwt;
      const late = (lifetimeSec + leewaySec) * 1000;
      assert.equal(
        code(() => p.verify(body, headers, [held], { url: HOOK_URL, nowMs: NOW + late + 1_000 })),
        'stale_timestamp',
      );
      assert.equal(
        code(() => p.verify(body, headers, [held], { url: HOOK_URL, nowMs: NOW + late - 1_000 })),
        'accepted',
      );
      assert.equal(
        code(() => p.verify(body, headers, [held], { url: HOOK_URL, nowMs: NOW - leewaySec * 1000 - 1_000 })),
        // A token judged by its age alone (Plaid's iat, at most 5 minutes old) is not refused for an iat ahead: Plaid's docs refuse none.
        p.jwt.iatOnly ? 'accepted' : 'future_timestamp',
      );
    } else {
      // No timestamp is signed, or none held to a clock, so no clock can make it stale (GitHub, Shopify, Discord).
      assert.equal(
        code(() => verifyAs(body, headers, [held], { url: HOOK_URL, nowMs: NOW + 86_400_000 })),
        'accepted',
      );
    }
  });
}

test('stripe: only v1 counts; a v0 entry cannot stand in for it', () => {
  const secret = SECRETS.stripe as string;
  const headers = lower(providers.stripe.sign(body, [secret], { nowMs: NOW, deliveryId: 'evt_1', eventType: 'x' }));
  const v1 = (headers['stripe-signature'] ?? '').split(',')[1]?.slice(3);
  const spoof = { 'stripe-signature': `t=${Math.floor(NOW / 1000)},v0=${v1}` };
  assert.throws(() => providers.stripe.verify(body, spoof, [secret], { nowMs: NOW }), /no v1= signature/);
});

test('every retry re-signs with a fresh timestamp but keeps the delivery id', () => {
  for (const name of ['stripe', 'slack', 'standard'] as const) {
    const p = providers[name];
    const ctx = { deliveryId: p.newDeliveryId(), eventType: 'invoice.paid' };
    const first = p.sign(body, [SECRETS[name] as string], { ...ctx, nowMs: NOW });
    const retry = p.sign(body, [SECRETS[name] as string], { ...ctx, nowMs: NOW + 60_000 });
    assert.notEqual(first[p.signatureHeader], retry[p.signatureHeader], name);
    assert.equal(p.deliveryId(lower(retry), body) ?? ctx.deliveryId, p.deliveryId(lower(first), body) ?? ctx.deliveryId);
  }
});

test('deliveryId reads the id each provider dedupes on', () => {
  assert.equal(providers.stripe.deliveryId({}, Buffer.from('{"id":"evt_9"}')), 'evt_9');
  assert.equal(providers.slack.deliveryId({}, Buffer.from('{"event_id":"Ev9"}')), 'Ev9');
  assert.equal(providers.github.deliveryId({ 'x-github-delivery': 'g-1' }, body), 'g-1');
  assert.equal(providers.standard.deliveryId({ 'webhook-id': 'msg_1' }, body), 'msg_1');
  assert.equal(providers.shopify.deliveryId({ 'x-shopify-webhook-id': 's-1' }, body), 's-1');
  // Shopify's docs dedupe on the event id, where a delivery carries one.
  assert.equal(providers.shopify.deliveryId({ 'x-shopify-webhook-id': 's-1', 'x-shopify-event-id': 'e-1' }, body), 'e-1');
  assert.equal(providers.stripe.deliveryId({}, Buffer.from('not json')), undefined);
});

test("standard and svix each verify either spelling of the headers (svix-* or webhook-*), as svix's own library does", async () => {
  const secret = SECRETS.standard as string;
  for (const [signer, reader] of [
    ['svix', 'standard'],
    ['standard', 'svix'],
  ] as const) {
    const id = providers[signer].newDeliveryId();
    const headers = lower(providers[signer].sign(body, [secret], { nowMs: NOW, deliveryId: id, eventType: 'invoice.paid' }));
    assert.ok(Object.keys(headers).includes(signer === 'svix' ? 'svix-signature' : 'webhook-signature'));
    providers[reader].verify(body, headers, [secret], { nowMs: NOW });
    assert.equal(providers[reader].deliveryId(headers, body), id);
    // And Svix's library takes what either signs.
    const live = lower(providers[signer].sign(body, [secret], { nowMs: Date.now(), deliveryId: id, eventType: 'invoice.paid' }));
    await verifyWithOfficialCode('svix', body, live, secret);
  }
});

test('standard: a secret that is not whsec_ base64 is refused up front', () => {
  assert.throws(() => providers.standard.checkSecret('whsec_not base64!'), /must be "whsec_" followed by base64/);
  providers.standard.checkSecret('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
});

test("stripe: a test-mode event's signature header carries v0= beside v1= (a value no verifier can check, never v1's), a live one only v1=", () => {
  const secret = SECRETS.stripe as string;
  const at = (livemode: boolean) =>
    lower(
      providers.stripe.sign(Buffer.from(JSON.stringify({ id: 'evt_1', data: { object: { livemode } }, livemode })), [secret], {
        nowMs: NOW,
        deliveryId: 'evt_1',
        eventType: 'x',
      }),
    )['stripe-signature'] as string;
  const test = at(false);
  const [, v1, v0] = /^t=\d+,v1=([0-9a-f]{64}),v0=([0-9a-f]{64})$/.exec(test) ?? [];
  assert.ok(v1 && v0, test);
  assert.notEqual(v0, v1);
  assert.match(at(true), /^t=\d+,v1=[0-9a-f]{64}$/);
  // A nested livemode does not decide it: the envelope's, the last in the text, does.
  const nested = Buffer.from(JSON.stringify({ id: 'evt_2', data: { object: { livemode: false } }, livemode: true }));
  assert.doesNotMatch(
    lower(providers.stripe.sign(nested, [secret], { nowMs: NOW, deliveryId: 'evt_2', eventType: 'x' }))['stripe-signature'] as string,
    /v0=/,
  );
});

test("Discord's responses, by interaction type, are discord-api-types' own: every interaction type has its list, every response type in it is one the package names", async () => {
  const { RESPONSES } = await import('../src/providers/discord.js');
  const { InteractionResponseType, InteractionType } = await import('discord-api-types/v10');
  const kinds = Object.values(InteractionType).filter((v): v is number => typeof v === 'number');
  assert.deepEqual(Object.keys(RESPONSES).map(Number).sort(), [...kinds].sort());
  const responses = new Set(Object.values(InteractionResponseType).filter((v) => typeof v === 'number'));
  for (const [kind, allowed] of Object.entries(RESPONSES))
    for (const r of allowed) assert.ok(responses.has(r), `interaction type ${kind}: response type ${r} is not in discord-api-types`);
  // Each response type the package names is allowed somewhere: a new one fails here until placed.
  assert.deepEqual(
    [...new Set(Object.values(RESPONSES).flat())].sort((a, b) => a - b),
    [...responses].sort((a, b) => (a as number) - (b as number)),
  );
});

test("twilio: twilio-node's known answer (spec/validation.spec.js): the signature of its call over https://mycompany.com/myapp.php?foo=1&bar=2, whatever order the form's fields come in; verify takes it with :443 written, and refuses one field changed", () => {
  const twilio = providers.twilio;
  const url = 'https://mycompany.com/myapp.php?foo=1&bar=2';
  // The fields out of order and encoded as Twilio encodes a form: the signature sorts and decodes them.
  const body = Buffer.from('To=%2B18005551212&From=%2B14158675309&CallSid=CA1234567890ABCDE&Digits=1234&Caller=%2B14158675309');
  const headers = twilio.sign(body, ['12345'], {
    nowMs: Date.now(),
    deliveryId: 'b4a3c2d1-0000-4000-8000-000000000000',
    eventType: 'call.unknown',
    url,
  });
  assert.equal(headers['X-Twilio-Signature'], 'RSOYDt4T1cUTdK1PDd93/VVr8B8=');
  const got = { 'x-twilio-signature': 'RSOYDt4T1cUTdK1PDd93/VVr8B8=', 'content-type': 'application/x-www-form-urlencoded' };
  twilio.verify(body, got, ['12345'], { url });
  twilio.verify(body, got, ['12345'], { url: 'https://mycompany.com:443/myapp.php?foo=1&bar=2' });
  const changed = Buffer.from(body.toString().replace('Digits=1234', 'Digits=1235'));
  assert.throws(
    () => twilio.verify(changed, got, ['12345'], { url }),
    (e: unknown) => e instanceof SignatureError && e.code === 'no_match',
  );
  // A body that is not a form carries no parameters: it is signed through the URL's bodySHA256, and this URL has none.
  assert.throws(
    () => twilio.verify(body, { ...got, 'content-type': 'application/json' }, ['12345'], { url }),
    (e: unknown) => e instanceof SignatureError && e.code === 'no_match' && /the URL carries none/.test(e.message),
  );
});

test("twilio: a JSON body is signed through the URL's bodySHA256, as twilio-node's validateRequestWithBody known answer has it; a changed body is refused", () => {
  const twilio = providers.twilio;
  const json = Buffer.from('{"property": "value", "boolean": true}');
  const url = 'https://mycompany.com/myapp.php?foo=1&bar=2&bodySHA256=0a1ff7634d9ab3b95db5c9a2dfe9416e41502b283a80c7cf19632632f96e6620';
  const got = { 'x-twilio-signature': 'a9nBmqA0ju/hNViExpshrM61xv4=', 'content-type': 'application/json' };
  twilio.verify(json, got, ['12345'], { url });
  const changed = Buffer.from('{"property": "value", "boolean": false}');
  assert.throws(
    () => twilio.verify(changed, got, ['12345'], { url }),
    (e: unknown) => e instanceof SignatureError && e.code === 'no_match' && /SHA-256 is not the URL's bodySHA256/.test(e.message),
  );
  assert.throws(
    () => twilio.verify(json, got, ['12345'], { url: url.replace('foo=1', 'foo=2') }),
    (e: unknown) => e instanceof SignatureError && e.code === 'no_match',
  );
});

test("contentful: hookdrill's verify takes what the toolkit's signRequest signs (Contentful's own headers listed), refuses it once 30 s old and a listed header changed, and takes a timestamp ahead, as verifyRequest does", () => {
  const secret = SECRETS.contentful as string;
  const at = 1_774_692_131_587;
  const body = Buffer.from('{"sys":{"type":"Entry","id":"5KsDBWseXY6QegucYAoacS"}}');
  const path = '/hooks/contentful?space=yadj1kx9rmg0';
  const own = {
    'x-contentful-topic': 'ContentManagement.Entry.publish',
    'x-contentful-idempotency-key': '94516f9a3fe42e3065ad9ef4f2a9f865c9bf0a962db8b7cfcb470b42052ea22c',
  };
  const signed = contentfulSignRequest(secret, { method: 'POST', path, headers: own, body: body.toString('utf8') }, at);
  const headers = lower({ ...own, ...(signed as unknown as Record<string, string>) });
  const url = `https://cms.example.com${path}`;
  providers.contentful.verify(body, headers, [secret], { nowMs: at + 29_999, url });
  providers.contentful.verify(body, headers, [secret], { nowMs: at - 3_600_000, url });
  assert.throws(() => providers.contentful.verify(body, headers, [secret], { nowMs: at + 30_000, url }), /30s old/);
  assert.throws(
    () =>
      providers.contentful.verify(body, { ...headers, 'x-contentful-topic': 'ContentManagement.Entry.delete' }, [secret], {
        nowMs: at,
        url,
      }),
    /does not match/,
  );
  assert.throws(
    () => providers.contentful.verify(body, headers, [secret], { nowMs: at, url: 'https://cms.example.com/other' }),
    /does not match/,
  );
});
