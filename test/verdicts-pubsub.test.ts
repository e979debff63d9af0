import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OAuth2Client } from 'google-auth-library';
import { run as send } from '../src/delivery/send.js';
import { reply, startServer } from './helpers/server.js';
import { checkReceiver, explain, named, official, python, SECRET } from './helpers/verdicts.js';
import { hookdrill } from './helpers/cli.js';

/**
 * Google Cloud Pub/Sub push (issue 55): a JWT bearer scheme — an OIDC ID token Google signs, RS256,
 * its keys fetched as a JWKS — judged by `check` as google-auth-library's verifyIdToken judges it:
 * the signature by the key the kid names, the issuer, the expiry and the audience. In test mode
 * hookdrill signs with its own key and serves the JWKS on 127.0.0.1:$HOOKDRILL_JWKS_PORT
 * (test/helpers/official.ts gives each test process its own port). A Python receiver that verifies
 * all four (cryptography for RS256, test/receivers/pubsub_scheme.py) passes; one that leaves out
 * one check fails the case made for it, with a diagnosis that names the claim.
 */

const status = (r: Awaited<ReturnType<typeof checkReceiver>>, name: string) => r.cases.find((c) => c.name === name);
const JWT_CASES =
  'valid,duplicate,wrong-secret,missing-signature,malformed-signature,wrong-length-signature,wrong-audience,expired-token,future-token,wrong-issuer,forged-kid';

test('Pub/Sub: a Python receiver verifying the token (signature, iss, exp, aud) and keyed on messageId passes; what a JWT cannot cover is skipped and said', async () => {
  const r = await checkReceiver('pubsub', python('pubsub'), { only: `${JWT_CASES},flipped-byte,reserialized,stale-timestamp,rotation` });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  for (const name of JWT_CASES.split(',')) assert.equal(status(r, name)?.status, 'pass', `${name}: ${explain(r)}`);
  // The token signs its claims, not the body: a changed body under a valid token is rightly taken.
  assert.equal(status(r, 'rotation')?.status, 'skipped');
  for (const name of ['flipped-byte', 'reserialized', 'stale-timestamp']) {
    assert.equal(status(r, name)?.status, 'skipped', name);
    assert.match(
      status(r, name)?.observed ?? '',
      /sends a signed JWT in Authorization: it binds who sent it, for whom \(aud\) and until when \(exp\), not the body/,
      name,
    );
  }
});

test("Pub/Sub: a receiver that does not check the token's audience fails wrong-audience, the diagnosis naming aud", async () => {
  const r = await checkReceiver('pubsub', python('pubsub', 'jwt-any-audience'), { only: JWT_CASES });
  assert.deepEqual(named(r, 'fail'), ['wrong-audience'], explain(r));
  const c = status(r, 'wrong-audience');
  assert.match(c?.observed ?? '', /^2\d\d/);
  assert.match(
    c?.diagnosis ?? '',
    /accepts a token meant for another audience \(aud https:\/\/another-service\.example\/push\): check that aud is your endpoint's/,
  );
});

test("Pub/Sub: a receiver that does not check the token's expiry fails expired-token, the diagnosis naming exp", async () => {
  const r = await checkReceiver('pubsub', python('pubsub', 'jwt-no-expiry'), { only: JWT_CASES });
  assert.deepEqual(named(r, 'fail'), ['expired-token'], explain(r));
  assert.match(
    status(r, 'expired-token')?.diagnosis ?? '',
    /accepts a token that expired \(exp\) 360s ago: check exp \(allowing at most 300s of clock skew\)/,
  );
});

test('Pub/Sub: a receiver that checks exp but not iat fails future-token (one with no clock check at all fails expired-token only: one defect, one finding)', async () => {
  const r = await checkReceiver('pubsub', python('pubsub', 'jwt-no-iat'), { only: JWT_CASES });
  assert.deepEqual(named(r, 'fail'), ['future-token'], explain(r));
  assert.match(
    status(r, 'future-token')?.diagnosis ?? '',
    /accepts a token issued \(iat\) 360s in the future: check iat too \(at most 300s ahead\)/,
  );
});

test('Pub/Sub: a receiver that does not check the issuer fails wrong-issuer; one that never verifies the signature fails forged-kid (another key under the right kid)', async () => {
  const issuer = await checkReceiver('pubsub', python('pubsub', 'jwt-any-issuer'), { only: JWT_CASES });
  assert.deepEqual(named(issuer, 'fail'), ['wrong-issuer'], explain(issuer));
  assert.match(
    status(issuer, 'wrong-issuer')?.diagnosis ?? '',
    /check that iss is https:\/\/accounts\.google\.com or accounts\.google\.com/,
  );
  const unverified = await checkReceiver('pubsub', python('pubsub', 'jwt-unverified'), { only: JWT_CASES });
  // It looks the kid up, so another key's own kid is refused (wrong-secret passes): a cut signature and a forged kid show it.
  assert.deepEqual(named(unverified, 'fail'), ['wrong-length-signature', 'forged-kid'], explain(unverified));
  assert.equal(status(unverified, 'wrong-secret')?.status, 'pass');
  assert.match(status(unverified, 'forged-kid')?.diagnosis ?? '', /decodes the token without verifying it/);
});

test("Pub/Sub: a receiver that fetches its keys from elsewhere than hookdrill's key server refuses every delivery, and the diagnosis says where the keys are served", async () => {
  const r = python('pubsub');
  const elsewhere = { ...r, command: `PUBSUB_JWKS_URL=http://127.0.0.1:9/oauth2/v3/certs ${r.command}` };
  const checked = await checkReceiver('pubsub', elsewhere, { only: 'valid' });
  const valid = status(checked, 'valid');
  assert.equal(valid?.status, 'fail', explain(checked));
  assert.ok(
    valid?.diagnosis?.includes(
      `the ones hookdrill serves at http://127.0.0.1:${process.env.HOOKDRILL_JWKS_PORT}/oauth2/v3/certs: is its JWKS URL pointed there`,
    ),
    valid?.diagnosis,
  );
});

test("Pub/Sub: a receiver on google-auth-library's verifyIdToken, its certs URL pointed at hookdrill's key server, passes the JWT cases", async () => {
  const r = await checkReceiver('pubsub', official('pubsub'), { only: JWT_CASES });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  for (const name of JWT_CASES.split(',')) assert.equal(status(r, name)?.status, 'pass', `${name}: ${explain(r)}`);
});

test("Pub/Sub: send's requests carry what Pub/Sub sends, and verify with google-auth-library's verifyIdToken against the key server — for their own audience only", async () => {
  const server = await startServer((_req, res) => reply(res, 200));
  const seen = server.requests;
  try {
    const url = `http://127.0.0.1:${server.port}/push`;
    await send({
      url,
      provider: 'pubsub',
      secrets: [SECRET.pubsub as string],
      fixtures: ['pubsub/message', 'pubsub/gmail.history', 'pubsub/storage.object.finalize'],
      noRetry: true,
    });
    assert.equal(seen.length, 3);
    // Google's certs, from the key server send ran (test/helpers/official.ts chose its port).
    const google = new OAuth2Client({
      endpoints: { oauth2FederatedSignonPemCertsUrl: `http://127.0.0.1:${process.env.HOOKDRILL_JWKS_PORT}/oauth2/v1/certs` },
    });
    const ids = new Set<string>();
    for (const s of seen) {
      assert.deepEqual(
        s.names.filter((h) => !/^(host|connection|content-length)$/i.test(h)),
        ['Content-Type', 'Authorization', 'Accept', 'From', 'User-Agent', 'Accept-Encoding'],
      );
      assert.equal(s.headers['user-agent'], 'APIs-Google; (+https://developers.google.com/webmasters/APIs-Google.html)');
      const idToken = String(s.headers.authorization).replace(/^Bearer /, '');
      const ticket = await google.verifyIdToken({ idToken, audience: url });
      assert.equal(ticket.getPayload()?.iss, 'https://accounts.google.com');
      await assert.rejects(google.verifyIdToken({ idToken, audience: 'https://another-service.example/push' }), /Wrong recipient/);
      const body = JSON.parse(s.rawBody.toString('utf8'));
      assert.equal(s.rawBody.toString('utf8'), `${JSON.stringify(body)}\n`, 'compact JSON and a newline');
      assert.equal(body.message.messageId, body.message.message_id);
      assert.equal(body.message.publishTime, body.message.publish_time);
      assert.match(body.message.messageId, /^\d{16,17}$/);
      ids.add(body.message.messageId);
    }
    assert.equal(ids.size, 3, 'a new message id each message');
  } finally {
    await server.close();
  }
});

test('Pub/Sub: profiles lists pubsub; a key that is no RSA private key is refused in one line, exit 2', async () => {
  const listed = await hookdrill(['profiles']);
  assert.match(listed.stdout, /^pubsub \(default for pubsub\) \(partly chosen by hookdrill/m);
  const bad = await hookdrill(['send', '--provider', 'pubsub', '--url', 'http://127.0.0.1:9/', '--secret', 'not-a-key']);
  assert.equal(bad.code, 2, bad.stderr);
  assert.equal(bad.stderr.trim().split('\n').length, 1, bad.stderr);
  assert.match(bad.stderr, /RSA private key/);
});

test('Pub/Sub takes 200, 201, 202 and 204 alone: a receiver that stores and answers 203 is warned that every message comes again, and send sends a 203 again as Pub/Sub does', async () => {
  // cloud.google.com/pubsub/docs/push: "102, 200, 201, 202, 204" acknowledge; any other status is a
  // negative acknowledgment, and the message is pushed again until its retention runs out.
  const r = await checkReceiver('pubsub', python('pubsub', 'answer-203'), { only: 'valid' });
  const valid = r.cases.find((c) => c.name === 'valid');
  assert.equal(valid?.status, 'warn', explain(r));
  assert.match(
    valid?.diagnosis ?? '',
    /answers 203; Google Cloud Pub\/Sub takes 200, 201, 202 and 204 alone as success and retries any other answer.*— answer 200/,
  );

  // The first answer a 203, the retry's a 204 (which Pub/Sub takes).
  const server = await startServer((_req, res, n) => reply(res, n === 1 ? 203 : 204));
  try {
    const sent = await send({
      url: server.url,
      provider: 'pubsub',
      secrets: [SECRET.pubsub as string],
      count: 1,
      retryDelays: [0],
    });
    assert.equal(sent.ok, true, JSON.stringify(sent.deliveries));
    assert.equal(server.requests.length, 2, 'the 203 was pushed again');
  } finally {
    await server.close();
  }
});
