import { test } from 'node:test';
import assert from 'node:assert/strict';
import { checkReceiver, explain, named, official, python } from './helpers/verdicts.js';

/**
 * Plaid (issue 55): an ES256 JWT in Plaid-Verification whose request_body_sha256 claim binds the
 * body, its key fetched by kid from POST /webhook_verification_key/get — judged by `check` as
 * Plaid's docs verify it (plaid.com/docs/api/webhooks/webhook-verification/): alg ES256, the
 * signature by the kid's key, iat at most 5 minutes old, the body's SHA-256. In test mode
 * hookdrill signs with its own P-256 key and answers the key request on 127.0.0.1:$HOOKDRILL_JWKS_PORT
 * (test/helpers/official.ts gives each test process its own port). A Python receiver doing every step
 * (test/receivers/plaid_scheme.py) passes; one that leaves a step out fails the case made for it.
 */

const status = (r: Awaited<ReturnType<typeof checkReceiver>>, name: string) => r.cases.find((c) => c.name === name);
const CASES =
  'valid,duplicate,wrong-secret,missing-signature,malformed-signature,wrong-length-signature,flipped-byte,reserialized,expired-token,forged-kid,alg-none,alg-hs256';
const NOT_PLAIDS = 'wrong-audience,wrong-issuer,future-token';

test("Plaid: a Python receiver doing every step of Plaid's verification, keyed on the body's hash, passes; the body cases run (the token binds the body); aud, iss and a future iat are not Plaid's and are skipped", async () => {
  const r = await checkReceiver('plaid', python('plaid'), { only: `${CASES},${NOT_PLAIDS}` });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  for (const name of CASES.split(',')) assert.equal(status(r, name)?.status, 'pass', `${name}: ${explain(r)}`);
  for (const name of NOT_PLAIDS.split(',')) assert.equal(status(r, name)?.status, 'skipped', name);
  assert.match(status(r, 'wrong-audience')?.observed ?? '', /Plaid's token names no audience/);
});

test('Plaid: a receiver that verifies the JWT but never compares request_body_sha256 fails flipped-byte and reserialized: a body changed under a valid token is taken', async () => {
  const r = await checkReceiver('plaid', python('plaid', 'plaid-no-body-hash'), { only: CASES });
  assert.deepEqual(named(r, 'fail'), ['flipped-byte', 'reserialized'], explain(r));
  assert.match(status(r, 'flipped-byte')?.diagnosis ?? '', /accepts a body changed after signing/);
});

test("Plaid: a receiver that never checks iat fails expired-token, the diagnosis naming Plaid's 5 minutes", async () => {
  const r = await checkReceiver('plaid', python('plaid', 'plaid-no-iat'), { only: CASES });
  assert.deepEqual(named(r, 'fail'), ['expired-token'], explain(r));
  assert.match(status(r, 'expired-token')?.diagnosis ?? '', /accepts a token issued \(iat\) 360s ago: refuse one older than 300s/);
});

test('Plaid: a receiver that takes the algorithm from the token fails alg-none and alg-hs256 (the HMAC keyed by the public key it holds)', async () => {
  const r = await checkReceiver('plaid', python('plaid', 'plaid-any-alg'), { only: CASES });
  assert.deepEqual(named(r, 'fail'), ['alg-none', 'alg-hs256'], explain(r));
  assert.match(status(r, 'alg-none')?.diagnosis ?? '', /accepts an unsigned token \(alg none\).*pin it to ES256/);
  assert.match(status(r, 'alg-hs256')?.diagnosis ?? '', /signed HS256 with the public key as the secret/);
});

test("Plaid: a receiver on the official `plaid` SDK (webhookVerificationKeyGet against hookdrill's key server) and the docs' checks passes", async () => {
  const r = await checkReceiver('plaid', official('plaid'), { only: CASES });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  for (const name of CASES.split(',')) assert.equal(status(r, name)?.status, 'pass', `${name}: ${explain(r)}`);
});
