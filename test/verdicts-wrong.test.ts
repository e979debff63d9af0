import { generateKeyPairSync } from 'node:crypto';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderCheckJunit } from '../src/render/check.js';
import { SECRET, checkReceiver, explain, named, official, python, receiverSecret } from './helpers/verdicts.js';
import { pythonLibMissing } from './helpers/python.js';

/** Each receiver wrong in exactly one way fails exactly the cases that name its defect. */
const rows: { provider: string; flaw: string; fails: string[]; says: RegExp }[] = [
  {
    // Stripe's test-mode deliveries carry a v0= entry: a parser of exactly t=…,v1=… refuses every one.
    provider: 'stripe',
    flaw: 'strict-stripe-header',
    fails: ['valid'],
    says: /only when Stripe-Signature holds a single signature and nothing else — .*Stripe adds a v0= entry in test mode/,
  },
  {
    // stripe-java#1151: lines joined without their line ends; Stripe's bodies are pretty-printed.
    provider: 'stripe',
    flaw: 'join-lines',
    fails: ['valid'],
    says: /only when the body has no line breaks — its line ends are removed or changed/,
  },
  // A text-mode stream writes every \n as \r\n: the same finding, by the same variants.
  { provider: 'stripe', flaw: 'crlf-lines', fails: ['valid'], says: /only when the body has no line breaks/ },
  // express.json() before the route, or json.dumps(json.loads(body)): Stripe's body is pretty-printed.
  {
    provider: 'stripe',
    flaw: 'reserialize-json',
    fails: ['valid'],
    says: /only when the body is compact JSON — it verifies a re-serialised body/,
  },
  // A body decoded as Latin-1: Stripe's customer names carry 2-, 3- and 4-byte characters.
  { provider: 'stripe', flaw: 'latin1-text', fails: ['valid'], says: /only when its text is plain ASCII — it re-encodes non-ASCII text/ },
  { provider: 'github', flaw: 'latin1-text', fails: ['valid'], says: /only when its text is plain ASCII/ },
  // Standard Webhooks' default event is ASCII: only the multi-byte case finds it, and must not blame split reads.
  {
    provider: 'standard',
    flaw: 'latin1-text',
    fails: ['multibyte-body'],
    says: /even when no character is split between reads — it re-encodes non-ASCII text/,
  },
  {
    provider: 'slack',
    flaw: 'reserialize-json',
    fails: ['valid'],
    says: /no character Slack writes as an escape — .*Slack writes \/ as \\\//,
  },
  {
    // octokit/webhooks.js#71: GitHub writes a control character as \u001B, a re-serialiser as
    // \u001b. Every push's head commit carries one (a terminal's colour codes), as real ones can.
    provider: 'github',
    flaw: 'reserialize-json',
    fails: ['valid'],
    says: /no character GitHub writes as an escape — .*GitHub writes a control character as \\u001B, a re-serialiser as \\u001b/,
  },
  ...(['github', 'stripe', 'slack', 'svix', 'shopify'] as const).map((provider) => ({
    provider,
    flaw: 'decode-chunks',
    fails: ['multibyte-body'],
    says: /arrive split across two reads — it turns each chunk into text before joining them \(`body \+= chunk`\)/,
  })),
  {
    provider: 'stripe',
    flaw: 'first-v1-only',
    fails: ['rotation'],
    says: /its own is the second — Stripe sends two while a secret is being rolled/,
  },
  { provider: 'github', flaw: 'limit-64k', fails: ['large-body'], says: /refuses a valid 4\.0 MiB delivery — GitHub sends up to 25 MB/ },
  { provider: 'stripe', flaw: 'limit-64k', fails: ['large-body'], says: /refuses a valid 4\.0 MiB delivery/ },
  {
    provider: 'stripe',
    flaw: 'refuse-unknown-types',
    fails: ['other-types'],
    says: /types it has no handler for — each is a failed delivery \(Stripe retries it for \d/,
  },
  {
    provider: 'github',
    flaw: 'refuse-unknown-types',
    fails: ['other-types'],
    says: /types it has no handler for — each is a failed delivery \(GitHub does not retry it\)/,
  },
  { provider: 'slack', flaw: 'no-challenge', fails: ['url-verification'], says: /Slack will not enable the endpoint/ },
  { provider: 'slack', flaw: 'parse-form-first', fails: ['form-encoded'], says: /verify the raw form bytes before parsing them/ },
  // A late retry carries X-Slack-Retry-Num too: dropped the same way.
  {
    provider: 'slack',
    flaw: 'ignore-retries',
    fails: ['late-retry', 'first-seen-retry'],
    says: /answers 2xx to a retry it has never seen and drops it/,
  },
  {
    provider: 'stripe',
    flaw: 'duplicate-500',
    // retry and concurrent-duplicates are copies too: not judged, not two more findings of one defect.
    fails: ['duplicate'],
    says: /your receiver refuses a copy of a delivery it already holds/,
  },
  { provider: 'stripe', flaw: 'accepts-stale', fails: ['stale-timestamp'], says: /accepts a signature 6 minutes old/ },
  // No timestamp check at all: stale-timestamp names it, future-timestamp is the same defect (not judged).
  { provider: 'standard', flaw: 'accepts-stale', fails: ['stale-timestamp'], says: /accepts a signature 6 minutes old/ },
  // Paddle's window is its SDK's five seconds, and the finding says so (not the usual 5 minutes).
  {
    provider: 'paddle',
    flaw: 'accepts-stale',
    fails: ['stale-timestamp'],
    says: /refuse timestamps older than 5 seconds, as @paddle\/paddle-node-sdk's webhooks\.unmarshal does/,
  },
  // WorkOS's SDK window is 180 000 ms; a receiver that skips it is told so, in minutes.
  {
    provider: 'workos',
    flaw: 'accepts-stale',
    fails: ['stale-timestamp'],
    says: /refuse timestamps older than 3 minutes, as @workos-inc\/node's webhooks\.constructEvent does/,
  },
  // express.json() before Paddle's handler: the SDK's README reads the body with express.raw.
  {
    provider: 'paddle',
    flaw: 'reserialize-json',
    fails: ['reserialized'],
    says: /verifies a re-serialised copy of the JSON, not the raw bytes/,
  },
  // Discord's endpoint check: a PING answered PONG, and a probe signed with another key answered 401.
  { provider: 'discord', flaw: 'no-challenge', fails: ['ping'], says: /does not answer Discord's PING with \{"type": 1\} \(PONG\)/ },
  // The PING answered before the signature is checked: Discord's probe gets PONG, not 401.
  { provider: 'discord', flaw: 'pong-first', fails: ['probe-401'], says: /answers a PING whose signature is not Discord's/ },
  { provider: 'discord', flaw: 'refuse-400', fails: ['probe-401'], says: /refuses a bad signature with 400, not 401/ },
  { provider: 'discord', flaw: 'reserialize-json', fails: ['reserialized'], says: /verifies a re-serialised copy of the JSON/ },
  // LINE's SDK middleware reads the raw body; a receiver behind express.json() verifies another one.
  { provider: 'line', flaw: 'reserialize-json', fails: ['reserialized'], says: /verifies a re-serialised copy of the JSON/ },
  // HubSpot's SDK window is one-sided, 5 minutes; its body is a list of events, re-serialised all the same.
  {
    provider: 'hubspot',
    flaw: 'accepts-stale',
    fails: ['stale-timestamp'],
    says: /refuse timestamps older than 5 minutes, as @hubspot\/api-client's Signature\.isValid \(v3\) does/,
  },
  { provider: 'hubspot', flaw: 'reserialize-json', fails: ['reserialized'], says: /verifies a re-serialised copy of the JSON/ },
  // SendGrid ends each event and the list with \r\n (issue 52): a re-serialiser refuses every real delivery.
  {
    provider: 'sendgrid',
    flaw: 'reserialize-json',
    fails: ['valid'],
    says: /only when the body has no line breaks — .*\\r\\n after each event/,
  },
  {
    provider: 'sendgrid',
    flaw: 'refuse-unknown-types',
    fails: ['other-types'],
    says: /types it has no handler for — each is a failed delivery \(SendGrid retries it for \d/,
  },
  // Linear's clock is in the signed body: a receiver that skips it is told the SDK's minute.
  {
    provider: 'linear',
    flaw: 'accepts-stale',
    fails: ['stale-timestamp'],
    says: /refuse timestamps older than 1 minute, as @linear\/sdk's LinearWebhookClient\.verify does/,
  },
  { provider: 'linear', flaw: 'reserialize-json', fails: ['reserialized'], says: /verifies a re-serialised copy of the JSON/ },
  // Zoom validates the endpoint before it sends an event, and again every 72 hours.
  {
    provider: 'zoom',
    flaw: 'no-challenge',
    fails: ['url-verification'],
    says: /does not answer endpoint\.url_validation with \{"plainToken", "encryptedToken"\}.*Zoom will not validate the endpoint/,
  },
  {
    provider: 'zoom',
    flaw: 'challenge-wrong-key',
    fails: ['url-verification'],
    says: /an encryptedToken that is not the HMAC-SHA256 \(hex\) of the plainToken with your secret token/,
  },
  {
    provider: 'zoom',
    flaw: 'refuse-unknown-types',
    fails: ['other-types'],
    says: /types it has no handler for — each is a failed delivery \(Zoom retries it for \d/,
  },
  // LINE's Verify holds no event at all: a receiver that refuses what it has no handler for refuses it too.
  {
    provider: 'line',
    flaw: 'refuse-unknown-types',
    fails: ['empty-batch', 'other-types'],
    says: /types it has no handler for — each is a failed delivery \(LINE does not retry it\)/,
  },
];

// Discord's and SendGrid's keys are pairs: the receiver holds a public key. One that holds another
// is refused every delivery, and told which public key check signs for and how to print it.
test('a Discord receiver configured with another public key fails valid, told the public key to hold', {
  skip: pythonLibMissing('discord'),
}, async () => {
  const rx = python('discord');
  const other = 'fc51cd8e6218a1a38da47ed00230f0580816ed13ba3303ac5deb911548908025'; // RFC 8032's TEST 3 public key
  const r = await checkReceiver('discord', { ...rx, command: rx.command.replace(receiverSecret('discord'), other) });
  assert.deepEqual(named(r, 'fail'), ['valid'], explain(r));
  assert.match(
    r.cases[0]?.diagnosis ?? '',
    new RegExp(
      `what is left is the public key \\(is it ${receiverSecret('discord')}, the one check signs for\\? \`hookdrill keys discord\` prints it\\)`,
    ),
  );
  // The private key check signs with is in no finding.
  assert.doesNotMatch(JSON.stringify(r), new RegExp(SECRET.discord as string));
});

test('a SendGrid receiver holding another verification key fails valid, told the key to hold; the private key is in no finding', {
  skip: pythonLibMissing('sendgrid'),
}, async () => {
  const rx = python('sendgrid');
  const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
    .publicKey.export({ type: 'spki', format: 'der' })
    .toString('base64');
  const r = await checkReceiver('sendgrid', { ...rx, command: rx.command.replace(receiverSecret('sendgrid'), other) });
  assert.deepEqual(named(r, 'fail'), ['valid'], explain(r));
  const escaped = receiverSecret('sendgrid').replace(/[+/]/g, '\\$&');
  assert.match(r.cases[0]?.diagnosis ?? '', new RegExp(`what is left is the public key \\(is it ${escaped}, the one check signs for`));
  const body = (SECRET.sendgrid as string).split('\n')[1] as string;
  assert.doesNotMatch(JSON.stringify(r), new RegExp(body.replace(/[+/]/g, '\\$&')));
});

// Behind a proxy, the classic Square (and Twilio) bug: the receiver rebuilds its URL from what it
// sees (http, its own Host), not the public URL Square signed. Every delivery is refused, and the
// finding names the two URLs.
for (const [provider, title] of [
  ['square', 'Square'],
  ['hubspot', 'HubSpot'],
] as const) {
  test(`a ${title} receiver behind a proxy that rebuilds its URL from Host fails valid under check --public-url, told which URL it verified`, async () => {
    const publicUrl = 'https://shop.example.com/square/hooks';
    const r = await checkReceiver(provider, python(provider, 'url-from-host'), { publicUrl });
    assert.deepEqual(named(r, 'fail'), ['valid'], explain(r));
    const valid = r.cases.find((c) => c.name === 'valid');
    assert.match(
      valid?.diagnosis ?? '',
      new RegExp(`signed over http://127\\.0\\.0\\.1:\\d+/, not over https://shop\\.example\\.com/square/hooks where ${title} posts`),
      explain(r),
    );
    assert.match(valid?.diagnosis ?? '', /X-Forwarded-Proto/);
    // Without a proxy in between (no --public-url), the same receiver is right.
    const direct = await checkReceiver(provider, python(provider, 'url-from-host'));
    assert.deepEqual(named(direct, 'fail'), [], explain(direct));
  });
}

for (const row of rows) {
  test(`a ${row.provider} receiver in Python with the flaw ${row.flaw} fails ${row.fails.join(' and ')}, named as a developer fixes it`, {
    skip: pythonLibMissing(row.provider),
  }, async () => {
    const r = await checkReceiver(row.provider, python(row.provider, row.flaw));
    assert.deepEqual(named(r, 'fail'), row.fails, explain(r));
    assert.equal(r.ok, false);
    // One root, no cascade: every case that needed the failed one is marked not judged, naming it.
    for (const c of r.cases.filter((x) => x.notJudged !== undefined)) assert.ok(row.fails.includes(c.notJudged ?? ''), explain(r));
    if (row.fails[0] === 'valid') assert.ok(r.notJudged >= 15, `${r.notJudged} not judged`);
    const diagnoses = r.cases.filter((c) => c.status === 'fail').map((c) => c.diagnosis ?? '');
    assert.ok(
      diagnoses.some((d) => row.says.test(d)),
      diagnoses.join('\n'),
    );
  });
}

test('rotation: with two secrets given, every signature is shortened in wrong-length-signature (a right receiver knows only the first)', async () => {
  // The user passes the endpoint's two live secrets; the receiver holds the new one only.
  const r = await checkReceiver('stripe', official('stripe'), {
    secrets: [SECRET.stripe as string, 'whsec_the_old_one'],
    only: 'valid,wrong-length-signature,rotation',
  });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
});

test('a receiver holding another secret: one finding, valid, which names what is left once every variant is refused', async () => {
  const r = await checkReceiver('stripe', {
    ...python('stripe'),
    command: python('stripe').command.replace(SECRET.stripe as string, 'whsec_not_this_one'),
  });
  assert.deepEqual(named(r, 'fail'), ['valid'], explain(r));
  assert.match(r.cases[0]?.diagnosis ?? '', /refuses every variant of a valid delivery \(.*compact JSON.*\): what is left is the secret/);
  assert.match(r.cases[0]?.observed ?? '', /of \d+ variants it took none/);
  // In CI's report each case is named as check names it (a test's name, kept from run to run);
  // what it asks and what was found are beside the name, not in it.
  const junit = renderCheckJunit(r);
  const names = [...junit.matchAll(/<testcase [^>]*name="([^"]*)"/g)].map((m) => m[1]);
  assert.deepEqual(
    names,
    r.cases.map((c) => c.name),
  );
  assert.match(
    junit,
    /name="valid" time="[\d.]+">\s*<properties>\s*<property name="description" value="a valid delivery gets 2xx[^"]*"\/>/,
  );
  assert.match(junit, /<failure message="[^"]*of \d+ variants it took none/);
});

test('a receiver routed at another path: one finding, valid, naming the 404 and the path, with no variants sent', async () => {
  const r = await checkReceiver('github', python('github', '', '--path /webhooks'));
  assert.deepEqual(named(r, 'fail'), ['valid'], explain(r));
  assert.match(r.cases[0]?.diagnosis ?? '', /^nothing at \/ takes a POST \(404\): is the path right\?/);
  assert.doesNotMatch(r.cases[0]?.observed ?? '', /variants/);
});

test('a --stored command printing another column: one line saying so (exit 2), not duplicates "stored 0 times"', async () => {
  const rx = python('stripe');
  await assert.rejects(
    checkReceiver('stripe', { ...rx, stored: `${rx.stored} --column hash` }),
    (err: Error) =>
      err.name === 'CheckPreflightError' &&
      /^--stored printed 1 line but not the id of the delivery the receiver just answered 2xx \(evt_\w+\); its last line is "[0-9a-f]{40}"/.test(
        err.message,
      ),
  );
});

test('nothing listening at --url: one preflight error, no case run', async () => {
  const { run: check } = await import('../src/check/run.js');
  const { freePort } = await import('./helpers/ports.js');
  const port = await freePort();
  await assert.rejects(
    check({ url: `http://127.0.0.1:${port}/`, provider: 'stripe', secrets: ['whsec_x'] }),
    (err: Error) =>
      err.name === 'CheckPreflightError' &&
      err.message === `nothing listens at 127.0.0.1:${port} (connection refused): is the receiver running, and is the port in --url right?`,
  );
});
