import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkDeclaration } from '../src/providers/declaration.js';
import { declaredProvider } from '../src/providers/declared.js';
import { providers } from '../src/providers/index.js';
import { SVIX_USER_AGENT } from '../src/providers/standard.js';
import { FIXTURES_DIR } from '../src/fixtures/index.js';

// Two built-in providers written as a team would declare its own scheme in hookdrill.config.json:
// if the engine signs them byte for byte as the built-ins do, it signs a declared scheme as its
// declaration says.
const standardDeclared = {
  title: 'Standard Webhooks',
  signature: {
    header: 'webhook-signature',
    algorithm: 'sha256',
    encoding: 'base64',
    key: 'whsec',
    content: '{id}.{timestamp}.{body}',
    value: '{signatures}',
    each: 'v1,{signature}',
    join: ' ',
  },
  timestamp: { header: 'webhook-timestamp', tolerance: '5m' },
  id: { header: 'webhook-id', prefix: 'msg_' },
  eventType: { body: 'type' },
  headers: {
    'User-Agent': SVIX_USER_AGENT,
    Accept: '*/*',
    'Content-Type': 'application/json',
    'webhook-id': '{id}',
    'webhook-signature': '{signature}',
    'webhook-timestamp': '{timestamp}',
    'Accept-Encoding': 'gzip',
  },
  timeout: '15s',
  retries: ['5s', '5m', '30m', '2h', '5h', '10h', '10h'],
};

const slackDeclared = {
  title: "Slack's Events API",
  signature: {
    header: 'X-Slack-Signature',
    algorithm: 'sha256',
    encoding: 'hex',
    content: 'v0:{timestamp}:{body}',
    value: 'v0={signature}',
  },
  timestamp: { header: 'X-Slack-Request-Timestamp', tolerance: '5m' },
  id: { body: 'event_id' },
  eventType: { body: 'event.type' },
  headers: {
    'User-Agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
    'Accept-Encoding': 'gzip,deflate',
    Accept: '*/*',
    'X-Slack-Signature': '{signature}',
    'X-Slack-Request-Timestamp': '{timestamp}',
    'Content-Type': 'application/json',
  },
  timeout: '3s',
  retries: ['0s', '1m', '5m'],
};

const cases = [
  {
    builtin: providers.standard,
    declaration: standardDeclared,
    fixture: 'standard/invoice.paid.json',
    secrets: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD'],
  },
  { builtin: providers.slack, declaration: slackDeclared, fixture: 'slack/message.json', secrets: ['8f742231b10e8888abcd99yyyzzz85a5'] },
];

for (const c of cases) {
  test(`${c.builtin.name} declared as a scheme signs byte for byte as the built-in, and each verifies the other's`, () => {
    const declared = declaredProvider(checkDeclaration(`my-${c.builtin.name}`, c.declaration, 'hookdrill.config.json', '.'));
    const body = readFileSync(join(FIXTURES_DIR, c.fixture));
    const ctx = { nowMs: Date.now(), deliveryId: c.builtin.newDeliveryId(), eventType: 'message' };
    const mine = declared.sign(body, c.secrets, ctx);
    const theirs = c.builtin.sign(body, c.secrets, ctx);
    // Names, values and order: a request's head as it goes on the wire.
    assert.deepEqual(Object.entries(mine), Object.entries(theirs));
    assert.doesNotThrow(() => c.builtin.verify(body, lower(mine), c.secrets));
    assert.doesNotThrow(() => declared.verify(body, lower(theirs), c.secrets.slice(-1)));
    assert.throws(() => declared.verify(Buffer.concat([body, Buffer.from(' ')]), lower(theirs), c.secrets), { code: 'no_match' });
    const stale = declared.sign(body, c.secrets, { ...ctx, nowMs: ctx.nowMs - 301_000 });
    assert.throws(() => declared.verify(body, lower(stale), c.secrets), { code: 'stale_timestamp' });
    const profile = declared.profiles[declared.defaultProfile];
    const builtinProfile = c.builtin.profiles[c.builtin.defaultProfile];
    assert.equal(profile?.timeoutMs, builtinProfile?.timeoutMs);
    assert.deepEqual(profile?.retryDelaysMs, builtinProfile?.retryDelaysMs);
    assert.equal(declared.deliveryId(lower(theirs), body), c.builtin.deliveryId(lower(theirs), body));
    assert.equal(declared.eventTypeOf(lower(theirs), body), c.builtin.eventTypeOf(lower(theirs), body));
  });
}

test('a declaration at fault is one line naming its field', () => {
  const fault = (d: unknown) => {
    try {
      checkDeclaration('acme', d, 'hookdrill.config.json', '.');
    } catch (err) {
      return (err as Error).message;
    }
    return 'accepted';
  };
  const base = { signature: { header: 'Acme-Signature', algorithm: 'sha256', encoding: 'hex', content: '{body}' }, timeout: '10s' };
  assert.equal(fault(base), 'accepted');
  assert.equal(
    fault({ ...base, signature: { ...base.signature, algorithm: 'md5' } }),
    'hookdrill.config.json: providers.acme.signature.algorithm: must be one of sha1, sha256, sha512',
  );
  assert.match(
    fault({ ...base, signature: { ...base.signature, content: '{timestamp}.{body}' } }),
    /signature\.content: signs \{timestamp\}: declare where it is sent/,
  );
  assert.match(fault({ ...base, timestamp: { header: 'Acme-Time' } }), /providers\.acme\.timestamp: is declared but not signed/);
  assert.match(
    fault({ ...base, signature: { ...base.signature, content: 'no body' } }),
    /signature\.content: must hold \{body\} exactly once/,
  );
  assert.match(fault({ ...base, timeout: 'soon' }), /providers\.acme\.timeout: "soon" is not a duration/);
  assert.match(fault({ ...base, retry: ['1m'] }), /providers\.acme\.retry: unknown field/);
  assert.match(fault({ ...base, headers: { 'X-A': 'a\nb' } }), /headers\.X-A: a header value cannot hold a line break/);
  for (const message of [fault({ ...base, timeout: 'soon' }), fault(base)]) assert.equal(message.split('\n').length, 1);
});

test('a declaration that could not work is refused by its field: a placeholder twice, a control character in a header, a window of 0 or of years', () => {
  const fault = (d: unknown) => {
    try {
      checkDeclaration('acme', d, 'hookdrill.config.json', '.');
    } catch (err) {
      return (err as Error).message;
    }
    return 'accepted';
  };
  const sig = { header: 'Acme-Signature', algorithm: 'sha256', encoding: 'hex', content: '{timestamp}.{body}' };
  const base = { signature: { ...sig, value: 't={timestamp},v1={signature}' }, timestamp: {}, timeout: '10s' };
  assert.equal(fault(base), 'accepted');
  // Twice, a placeholder was a duplicate group in the header's pattern: an internal error (exit 70) on first use.
  assert.equal(
    fault({ ...base, signature: { ...sig, value: 't={timestamp},u={timestamp},v1={signature}' } }),
    'hookdrill.config.json: providers.acme.signature.value: names {timestamp} twice; each part is sent once',
  );
  assert.match(
    fault({
      ...base,
      signature: { ...sig, value: '{signatures}', each: 'v1={signature},t={timestamp}', join: ' ' },
      timestamp: { header: 'T' },
    }),
    /providers\.acme\.signature\.each: may name \{signature\} only/,
  );
  assert.match(fault({ ...base, headers: { 'X-A': 'a\rb' } }), /headers\.X-A: a header value cannot hold a line break/);
  for (const value of ['a\u0000b', 'a\u001bb', 'a\u007fb']) {
    assert.match(
      fault({ ...base, headers: { 'X-A': value } }),
      /^hookdrill\.config\.json: providers\.acme\.headers\.X-A: holds a control character \(0x[0-9a-f]{2}\)/,
    );
  }
  assert.match(
    fault({ ...base, signature: { ...base.signature, value: 't={timestamp},\u0000v1={signature}' } }),
    /signature\.value: holds a control character \(0x00\)/,
  );
  assert.equal(fault({ ...base, headers: { 'X-A': 'a\tb' } }), 'accepted');
  assert.match(
    fault({ ...base, timestamp: { tolerance: '0s' } }),
    /providers\.acme\.timestamp\.tolerance: 0s is under 1s: every signed timestamp would be refused/,
  );
  assert.match(fault({ ...base, timestamp: { tolerance: '500ms' } }), /timestamp\.tolerance: 500ms is under 1s/);
  assert.match(
    fault({ ...base, timestamp: { tolerance: '99999999999999999999d' } }),
    /timestamp\.tolerance: 99999999999999999999d is over 1d: a captured delivery could be replayed for that long/,
  );
  assert.equal(fault({ ...base, timestamp: { tolerance: '1d' } }), 'accepted');
});

function lower(h: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
}
