import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { run as chaos } from '../src/chaos/run.js';
import { run as check } from '../src/check/run.js';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { createReceiverServer, listen } from '../src/receiver/server.js';
import { declareProvider } from '../src/providers/index.js';
import type { ProviderDeclaration } from '../src/providers/declaration.js';
import { hookdrill } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { PYTHON } from './helpers/python.js';
import { tempDir } from './helpers/tmp.js';
import { explain, named, PY } from './helpers/verdicts.js';

/**
 * A team's own platform that signs as PayPal does (issue 55): declared with signature.scheme
 * certificate — RSA SHA-256 over `<PAYPAL-TRANSMISSION-ID>|<PAYPAL-TRANSMISSION-TIME>|<webhook
 * id>|<CRC-32 of the body>`, the certificate's URL in PAYPAL-CERT-URL. check serves hookdrill's
 * certificate on the certificate host (HOOKDRILL_CERT_HOST) and judges a Python receiver
 * (test/receivers/paypal_scheme.py, `cryptography`) that fetches it from there, pinned, trusting
 * it through SSL_CERT_FILE. A right one passes; one wrong in each way the scheme invites fails
 * with that diagnosis.
 */

// Set before anything reads them: keys in a directory of this test's, and a certificate host of its own.
process.env.HOOKDRILL_KEYS_DIR = join(tempDir(), 'keys');
process.env.HOOKDRILL_CERT_HOST = `127.0.0.1:${await freePort()}`;

/** PayPal's scheme as a project file declares it (docs/providers.md shows the same). */
const PAYFLOW = {
  title: 'Payflow',
  signature: {
    scheme: 'certificate',
    header: 'PAYPAL-TRANSMISSION-SIG',
    certificateHeader: 'PAYPAL-CERT-URL',
    algorithm: 'rsa-sha256',
    fresh: { 'PAYPAL-TRANSMISSION-ID': 'uuid', 'PAYPAL-TRANSMISSION-TIME': 'time' },
    content: '{header.PAYPAL-TRANSMISSION-ID}|{header.PAYPAL-TRANSMISSION-TIME}|{secret}|{crc32}',
  },
  id: { body: 'id' },
  eventType: { body: 'event_type' },
  headers: { 'PAYPAL-AUTH-ALGO': 'SHA256withRSA', 'PAYPAL-AUTH-VERSION': 'v2', 'Content-Type': 'application/json' },
  timeout: '20s',
  retries: ['1m', '5m'],
  fixtures: 'webhooks',
  fixture: 'PAYMENT.CAPTURE.COMPLETED',
} satisfies ProviderDeclaration;

/** A capture completed, in the shape of PayPal's event (developer.paypal.com/api/rest/webhooks/event-names/). */
const CAPTURE = {
  id: 'WH-58D329510W468432D-8HN650336L201105X',
  event_version: '1.0',
  create_time: '2024-08-02T19:33:35.000Z',
  resource_type: 'capture',
  resource_version: '2.0',
  event_type: 'PAYMENT.CAPTURE.COMPLETED',
  summary: 'Payment completed for $ 30.0 USD',
  resource: { id: '12A34567BC123456S', amount: { currency_code: 'USD', value: '30.00' }, status: 'COMPLETED', final_capture: true },
  links: [
    { href: 'https://api.paypal.com/v1/notifications/webhooks-events/WH-58D329510W468432D-8HN650336L201105X', rel: 'self', method: 'GET' },
  ],
};

function project(declaration: object = PAYFLOW): string {
  const dir = tempDir();
  writeFileSync(join(dir, 'hookdrill.config.json'), JSON.stringify({ provider: 'payflow', providers: { payflow: declaration } }));
  mkdirSync(join(dir, 'webhooks'));
  writeFileSync(join(dir, 'webhooks', 'PAYMENT.CAPTURE.COMPLETED.json'), JSON.stringify(CAPTURE));
  return dir;
}

const WEBHOOK_ID = '8PT597110X687430LKGECATA';
const provider = declareProvider('payflow', PAYFLOW, { dir: project() });
const CA = provider.servedAt?.().trustFile as string;

function receiver(flaw = '') {
  const store = join(tempDir(), 'stored.txt');
  return {
    receiver: `SSL_CERT_FILE=${CA} ${PYTHON} ${PY} serve --provider payflow --secret ${WEBHOOK_ID} --port "$PORT" --store ${store}${flaw ? ` --flaw ${flaw}` : ''}`,
    stored: `${PYTHON} ${PY} ids --store ${store}`,
  };
}

async function checkOf(flaw = '', only?: string) {
  const port = await freePort();
  return check({
    url: `http://127.0.0.1:${port}/`,
    provider: 'payflow',
    secrets: [WEBHOOK_ID],
    ...receiver(flaw),
    ...(only ? { only } : {}),
  });
}
const status = (r: Awaited<ReturnType<typeof checkOf>>, name: string) => r.cases.find((c) => c.name === name);

test("a declared certificate scheme (PayPal's): a receiver that fetches the certificate from the pinned host and verifies the CRC-32 of the raw body passes check", async () => {
  const r = await checkOf();
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  for (const name of ['valid', 'duplicate', 'reserialized', 'forged-certificate', 'wrong-secret', 'flipped-byte', 'missing-signature'])
    assert.equal(status(r, name)?.status, 'pass', `${name}: ${explain(r)}`);
});

test('a receiver that fetches the certificate from any https host takes a forgery signed by that host and fails forged-certificate', async () => {
  const r = await checkOf('paypal-any-cert-host', 'valid,wrong-secret,forged-certificate');
  assert.equal(status(r, 'valid')?.status, 'pass', explain(r));
  assert.equal(status(r, 'wrong-secret')?.status, 'pass', explain(r));
  const forged = status(r, 'forged-certificate');
  assert.equal(forged?.status, 'fail', explain(r));
  assert.match(
    forged?.diagnosis ?? '',
    /fetched the signing certificate from https:\/\/localhost:\d+\/v1\/notifications\/certs\/CERT-[0-9a-f]{24}.*accept the certificate URL only as https on Payflow's own host \(in hookdrill's test mode, the host HOOKDRILL_CERT_HOST names\)/,
  );
});

test('a receiver that computes the CRC-32 over the body written again, not the bytes that came, fails valid', async () => {
  const r = await checkOf('paypal-crc-reserialized', 'valid');
  const valid = status(r, 'valid');
  assert.equal(valid?.status, 'fail', explain(r));
  assert.match(valid?.observed ?? '', /^400 .* it took Python's json\.dumps layout/);
  assert.match(valid?.diagnosis ?? '', /verifies the JSON parsed and serialised again .* verify the raw bytes as they arrived/);
});

test('a receiver that dedupes on PAYPAL-TRANSMISSION-ID (new for every attempt, a retry stored again) fails valid: it stores under that header, not the event id', async () => {
  const r = await checkOf('paypal-transmission-key', 'valid');
  const valid = status(r, 'valid');
  assert.equal(valid?.status, 'fail', explain(r));
  assert.match(valid?.observed ?? '', /stored under PAYPAL-TRANSMISSION-ID/);
  assert.match(valid?.diagnosis ?? '', /your receiver stores deliveries under PAYPAL-TRANSMISSION-ID .* key the store on the delivery id/);
});

test('under chaos the certificate host is served while the rounds run (a right receiver could not fetch the certificate without it), and one killed after its 2xx loses nothing', async () => {
  const port = await freePort();
  const r = receiver();
  const result = await chaos({
    receiver: r.receiver,
    stored: r.stored,
    url: `http://127.0.0.1:${port}/`,
    provider: 'payflow',
    secrets: [WEBHOOK_ID],
    rounds: 2,
  });
  assert.equal(result.ok, true, result.problems.join('\n'));
  assert.equal(result.totals.lost.length, 0);
  assert.equal(result.totals.storedTwice.length, 0);
});

test("hookdrill's own receiver (listen) verifies a certificate scheme's delivery against hookdrill's certificate on the pinned host, and refuses a certificate from another host", async () => {
  const path = join(tempDir(), 'inbox.db');
  const inbox = openSqliteInbox(path);
  const server = createReceiverServer({ provider, secrets: [WEBHOOK_ID], inbox, maxBytes: 32 * 1024 * 1024 });
  const { port } = await listen(server, 0, '127.0.0.1');
  try {
    const r = await check({
      url: `http://127.0.0.1:${port}/`,
      provider: 'payflow',
      secrets: [WEBHOOK_ID],
      inbox: path,
      only: 'valid,duplicate,wrong-secret,flipped-byte,reserialized,forged-certificate,malformed-signature,wrong-length-signature',
    });
    assert.deepEqual(named(r, 'fail'), [], explain(r));
    assert.equal(status(r, 'forged-certificate')?.status, 'pass', explain(r));
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await inbox.close();
  }
});

test("rsa-pss-sha256 signs with PSS (MGF1 SHA-256, the digest-long salt) and {sha256} is the raw body's hex SHA-256: Python's cryptography verifies both with the served certificate; the CRC-32 is zlib's, decimal unsigned", () => {
  const pss = declareProvider(
    'payflow-pss',
    {
      ...PAYFLOW,
      signature: {
        ...PAYFLOW.signature,
        algorithm: 'rsa-pss-sha256',
        content: '{header.PAYPAL-TRANSMISSION-ID}|{secret}|{sha256}|{crc32}',
      },
    },
    { dir: project() },
  );
  const body = Buffer.from(JSON.stringify(CAPTURE));
  const headers = pss.sign(body, [WEBHOOK_ID], {
    nowMs: Date.UTC(2024, 7, 2, 19, 33, 35, 997),
    deliveryId: CAPTURE.id,
    eventType: CAPTURE.event_type,
  });
  assert.equal(headers['PAYPAL-TRANSMISSION-TIME'], '2024-08-02T19:33:35Z', 'RFC 3339 to the second, as PayPal writes it');
  assert.match(String(headers['PAYPAL-TRANSMISSION-ID']), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  const script = [
    'import base64, hashlib, sys, zlib',
    'from cryptography import x509',
    'from cryptography.hazmat.primitives import hashes',
    'from cryptography.hazmat.primitives.asymmetric import padding',
    'cert, tid, sig, wid = sys.argv[1:5]',
    'body = sys.stdin.buffer.read()',
    "text = f'{tid}|{wid}|{hashlib.sha256(body).hexdigest()}|{zlib.crc32(body) & 0xffffffff}'.encode()",
    'key = x509.load_pem_x509_certificate(open(cert, "rb").read()).public_key()',
    'key.verify(base64.b64decode(sig), text, padding.PSS(mgf=padding.MGF1(hashes.SHA256()), salt_length=padding.PSS.DIGEST_LENGTH), hashes.SHA256())',
    "print('verified')",
  ].join('\n');
  const trust = pss.servedAt?.().trustFile as string;
  const out = execFileSync(
    PYTHON,
    ['-c', script, trust, String(headers['PAYPAL-TRANSMISSION-ID']), String(headers['PAYPAL-TRANSMISSION-SIG']), WEBHOOK_ID],
    { input: body },
  );
  assert.equal(out.toString().trim(), 'verified');
  // And hookdrill's own verify holds the same: another webhook id, or one byte changed, is refused.
  const signed = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, String(v)]));
  pss.verify(body, signed, [WEBHOOK_ID]);
  assert.throws(() => pss.verify(body, signed, ['8PT597110X687430LKGECATB']), /does not verify/);
  assert.throws(() => pss.verify(Buffer.from(body.toString().replace('30.00', '30.01')), signed, [WEBHOOK_ID]), /does not verify/);
});

test('`hookdrill keys` of a certificate scheme prints the certificate file a test-mode receiver trusts and the host it pins, never the private key', async () => {
  const dir = project();
  const env = { HOOKDRILL_KEYS_DIR: join(dir, 'keys'), HOOKDRILL_CERT_HOST: '127.0.0.1:5444' };
  const r = await hookdrill(['keys', 'payflow'], env, [], dir);
  assert.equal(r.code, 0, r.stderr);
  const file = r.stdout.split('\n')[0] as string;
  assert.equal(file, join(dir, 'keys', 'payflow-certificate.pem'));
  assert.match(readFileSync(file, 'utf8'), /^-----BEGIN CERTIFICATE-----\n/);
  assert.match(r.stdout, /served as Payflow's signing certificate on 127\.0\.0\.1:5444 while send or check runs.*HOOKDRILL_CERT_HOST/);
  assert.ok(!r.stdout.includes('PRIVATE'), 'the private key is never printed');
});

test('a certificate declaration that cannot be sent is one line naming the field, exit 2', async () => {
  const sig = PAYFLOW.signature;
  for (const [change, field] of [
    [
      { timestamp: { header: 'PAYPAL-TRANSMISSION-TIME' } },
      'providers.payflow.timestamp: a certificate scheme writes its time as a fresh header',
    ],
    [
      { signature: { ...sig, content: '{header.PAYPAL-TRANSMISSION-ID}|{secret}' } },
      'providers.payflow.signature.content: signs nothing of the body',
    ],
    [
      { signature: { ...sig, content: '{header.X-Other}|{secret}|{crc32}' } },
      'providers.payflow.signature.content: names {header.X-Other}, which is no header in signature.fresh',
    ],
    [
      { signature: { ...sig, content: '{header.PAYPAL-TRANSMISSION-ID}|{crc32}' } },
      'providers.payflow.signature.content: names no {secret}',
    ],
    [{ signature: { ...sig, algorithm: 'ed25519' } }, 'providers.payflow.signature.algorithm: must be one of rsa-sha256, rsa-pss-sha256'],
    [
      { signature: { ...sig, fresh: { 'PAYPAL-TRANSMISSION-ID': 'counter' } } },
      'providers.payflow.signature.fresh.PAYPAL-TRANSMISSION-ID: must be one of uuid, time',
    ],
    [
      { signature: { ...sig, certificateHeader: 'PAYPAL-TRANSMISSION-SIG' } },
      'providers.payflow.signature.certificateHeader: is the signature header',
    ],
    [
      { headers: { 'PAYPAL-CERT-URL': 'https://api.paypal.com/' } },
      'providers.payflow.headers.PAYPAL-CERT-URL: is a header the certificate scheme writes itself',
    ],
  ] as const) {
    const r = await hookdrill(['send', '--url', 'http://127.0.0.1:9/', '--secret', WEBHOOK_ID], {}, [], project({ ...PAYFLOW, ...change }));
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.ok(r.stderr.includes(field), `${field}: ${r.stderr}`);
  }
});
