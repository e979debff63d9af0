import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { run as chaos } from '../src/chaos/run.js';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { providers } from '../src/providers/index.js';
import { createReceiverServer, listen } from '../src/receiver/server.js';
import { ownSnsKey, snsCertificateFile } from '../src/providers/sns-certificate.js';
import { run as runCheck } from '../src/check/run.js';
import { freePort } from './helpers/ports.js';
import { PYTHON } from './helpers/python.js';
import { tempDir } from './helpers/tmp.js';
import { checkReceiver, explain, named, PY } from './helpers/verdicts.js';
import type { Receiver } from './helpers/verdicts.js';

/**
 * Amazon SNS (issue 55): a message signed with a public key whose certificate the message names
 * (SigningCertURL), and a handshake — a SubscriptionConfirmation confirmed by visiting
 * SubscribeURL. check serves both on the local SNS host (HOOKDRILL_SNS_HOST) and judges a Python
 * receiver (test/receivers/sns_scheme.py, `cryptography`) in hookdrill's test mode: pinned to that
 * host, trusting hookdrill's certificate through SSL_CERT_FILE. A right one passes; one that
 * fetches the certificate from any host takes a forgery signed with an attacker's key (its
 * certificate on another host) and fails forged-certificate; one that never visits SubscribeURL
 * fails subscription-confirmation.
 */

// Set before anything reads them: hookdrill's SNS key in a directory of this test's, and an SNS
// host of its own (check serves it; the receiver pins it — the one value both read).
process.env.HOOKDRILL_KEYS_DIR = join(tempDir(), 'keys');
process.env.HOOKDRILL_SNS_HOST = `127.0.0.1:${await freePort()}`;
const KEY = ownSnsKey();
const CA = snsCertificateFile();

function snsPython(flaw = ''): Receiver {
  const store = join(tempDir(), 'stored.txt');
  return {
    command: `SSL_CERT_FILE=${CA} ${PYTHON} ${PY} serve --provider sns --port "$PORT" --store ${store}${flaw ? ` --flaw ${flaw}` : ''}`,
    stored: `${PYTHON} ${PY} ids --store ${store}`,
  };
}

const check = (r: Receiver, only?: string) => checkReceiver('sns', r, { secrets: [KEY], ...(only ? { only } : {}) });
const status = (r: Awaited<ReturnType<typeof check>>, name: string) => r.cases.find((c) => c.name === name);

test('SNS: a receiver pinned to the SNS host that verifies the named fields and visits SubscribeURL passes the battery', async () => {
  const r = await check(snsPython());
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  for (const name of [
    'valid',
    'duplicate',
    'subscription-confirmation',
    'forged-confirmation',
    'forged-certificate',
    'wrong-secret',
    'flipped-byte',
    'missing-signature',
    'malformed-signature',
    'wrong-length-signature',
  ])
    assert.equal(status(r, name)?.status, 'pass', `${name}: ${explain(r)}`);
  assert.match(status(r, 'subscription-confirmation')?.observed ?? '', /SubscribeURL visited/);
  // SNS signs named fields of the parsed JSON: a body written again verifies, as sns-validator says.
  assert.equal(status(r, 'reserialized')?.status, 'skipped');
  assert.match(status(r, 'reserialized')?.observed ?? '', /sns-validator's MessageValidator\.validate itself verifies the parsed JSON/);
});

test("SNS: a receiver that fetches the certificate from any host takes a forgery signed by another host's key and fails forged-certificate", async () => {
  const r = await check(snsPython('sns-any-cert-host'), 'valid,wrong-secret,forged-certificate');
  assert.equal(status(r, 'valid')?.status, 'pass', explain(r));
  // Signed with another key but naming SNS's certificate: refused, the certificate does not verify it.
  assert.equal(status(r, 'wrong-secret')?.status, 'pass', explain(r));
  const forged = status(r, 'forged-certificate');
  assert.equal(forged?.status, 'fail', explain(r));
  assert.match(
    forged?.diagnosis ?? '',
    /fetched the signing certificate from https:\/\/localhost:\d+\/SimpleNotificationService-[0-9a-f]{32}\.pem.*accept SigningCertURL only as https on sns\.<region>\.amazonaws\.com/,
  );
});

test('SNS: a receiver that answers the SubscriptionConfirmation but never visits SubscribeURL fails subscription-confirmation', async () => {
  const r = await check(snsPython('sns-no-confirm'), 'valid,subscription-confirmation');
  assert.equal(status(r, 'valid')?.status, 'pass', explain(r));
  const confirmation = status(r, 'subscription-confirmation');
  assert.equal(confirmation?.status, 'fail', explain(r));
  assert.match(confirmation?.observed ?? '', /^200, SubscribeURL not visited within 5 s$/);
  assert.match(
    confirmation?.diagnosis ?? '',
    /never visits its SubscribeURL: the subscription stays pending and Amazon SNS sends the endpoint nothing/,
  );
});

test('SNS: a receiver that visits SubscribeURL before verifying the confirmation fails forged-confirmation', async () => {
  const r = await check(snsPython('sns-confirm-first'), 'valid,wrong-secret,subscription-confirmation,forged-confirmation');
  for (const name of ['valid', 'wrong-secret', 'subscription-confirmation'])
    assert.equal(status(r, name)?.status, 'pass', `${name}: ${explain(r)}`);
  const forged = status(r, 'forged-confirmation');
  assert.equal(forged?.status, 'fail', explain(r));
  assert.match(forged?.observed ?? '', /^400, SubscribeURL VISITED/);
  assert.match(forged?.diagnosis ?? '', /visits the SubscribeURL of a SubscriptionConfirmation it has not verified/);
});

test('SNS under chaos: the SNS host is served while the rounds run (without it a right receiver refuses every delivery, its certificate out of reach), and a right receiver killed after its 2xx loses nothing', async () => {
  const r = snsPython();
  const port = await freePort();
  const result = await chaos({
    receiver: r.command,
    stored: r.stored,
    url: `http://127.0.0.1:${port}/`,
    provider: 'sns',
    secrets: [KEY],
    rounds: 2,
  });
  assert.equal(result.ok, true, result.problems.join('\n'));
  assert.equal(result.totals.lost.length, 0);
  assert.equal(result.totals.storedTwice.length, 0);
});

test("hookdrill's own receiver (listen) verifies an SNS message against hookdrill's certificate and confirms a SubscriptionConfirmation by visiting SubscribeURL", async () => {
  const path = join(tempDir(), 'inbox.db');
  const inbox = openSqliteInbox(path);
  // As `listen --provider sns` runs with no --secret: hookdrill's own key, whose certificate verifies.
  const server = createReceiverServer({ provider: providers.sns, secrets: [KEY], inbox, maxBytes: 32 * 1024 * 1024 });
  const { port } = await listen(server, 0, '127.0.0.1');
  try {
    const r = await runCheck({
      url: `http://127.0.0.1:${port}/`,
      provider: 'sns',
      secrets: [KEY],
      inbox: path,
      only: 'valid,duplicate,wrong-secret,flipped-byte,subscription-confirmation,forged-confirmation,forged-certificate',
    });
    assert.deepEqual(named(r, 'fail'), [], explain(r));
    assert.equal(status(r, 'subscription-confirmation')?.status, 'pass', explain(r));
    assert.equal(status(r, 'forged-certificate')?.status, 'pass', explain(r));
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await inbox.close();
  }
});
