/**
 * SNS's signature scheme and hookdrill's local SNS host (issue 55): RSA over named fields,
 * a certificate fetched from SigningCertURL, served by hookdrill over HTTPS on the SNS host that a
 * test-mode receiver pins. Judged by sns-validator (AWS's JavaScript validator) in a process of
 * its own, trusting the host through NODE_EXTRA_CA_CERTS and pinning it through its hostPattern —
 * exactly how docs/providers.md tells a Node receiver to run in test mode.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { X509Certificate, createPrivateKey, createPublicKey, generateKeyPairSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { snsCertificate, snsCertificateFile, snsCertificatePath, ownSnsKey, snsHost } from '../src/providers/sns-certificate.js';
import { startSnsHost } from '../src/providers/sns-host.js';
import { snsCertUrlAllowed, snsSignature, snsStringToSign, snsVerifies } from '../src/providers/sns-signature.js';
import { hookdrill } from './helpers/cli.js';
import { tempDir } from './helpers/tmp.js';

const run = promisify(execFile);

/** sns-validator in a process of its own: "ok" or its error's message. */
async function validate(message: object, hostPattern: RegExp, caFile: string): Promise<string> {
  const script = `
    import { createRequire } from 'node:module';
    const MessageValidator = createRequire(process.cwd() + '/')('sns-validator');
    new MessageValidator(new RegExp(process.argv[1])).validate(process.argv[2], (err) => {
      console.log(err ? err.message : 'ok');
    });`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script, hostPattern.source, JSON.stringify(message)], {
    env: { ...process.env, NODE_EXTRA_CA_CERTS: caFile },
  });
  return stdout.trim();
}

const env = { HOOKDRILL_KEYS_DIR: join(tempDir(), 'keys') };
const key = ownSnsKey(env);
const cert = snsCertificate(key);

test('hookdrill signs as SNS with its own RSA key, kept like its other keys, and a certificate built from the key alone', () => {
  assert.equal(createPrivateKey(key).asymmetricKeyType, 'rsa');
  assert.equal(ownSnsKey(env), key, 'made once, then read back');
  // The same key, the same certificate, byte for byte: a receiver's trust survives runs.
  assert.equal(snsCertificate(key), cert);
  const x509 = new X509Certificate(cert);
  assert.ok(x509.publicKey.equals(createPublicKey(key)), "the certificate holds the key's public half");
  assert.ok(x509.checkIP('127.0.0.1') && x509.checkHost('localhost'), 'it names the SNS host, for TLS');
  assert.match(snsCertificatePath(cert), /^\/SimpleNotificationService-[0-9a-f]{32}\.pem$/);
  assert.equal(snsCertificateFile(env).endsWith('sns-certificate.pem'), true);
  assert.equal(snsHost({}), '127.0.0.1:9443');
  assert.equal(snsHost({ HOOKDRILL_SNS_HOST: '127.0.0.1:5555' }), '127.0.0.1:5555');
  assert.throws(() => snsHost({ HOOKDRILL_SNS_HOST: 'no port' }), /HOOKDRILL_SNS_HOST/);
});

test("the string SNS signs: a notification's Message, MessageId, Subject (where present), Timestamp, TopicArn, Type; a confirmation's with SubscribeURL and Token", () => {
  const n = {
    Type: 'Notification',
    MessageId: 'm',
    TopicArn: 't',
    Message: 'hi',
    Timestamp: 'ts',
    UnsubscribeURL: 'u',
    SigningCertURL: 'c',
  };
  assert.equal(snsStringToSign(n), 'Message\nhi\nMessageId\nm\nTimestamp\nts\nTopicArn\nt\nType\nNotification\n');
  assert.equal(
    snsStringToSign({ ...n, Subject: 's' }),
    'Message\nhi\nMessageId\nm\nSubject\ns\nTimestamp\nts\nTopicArn\nt\nType\nNotification\n',
  );
  const c = {
    Type: 'SubscriptionConfirmation',
    MessageId: 'm',
    Token: 'k',
    TopicArn: 't',
    Message: 'x',
    SubscribeURL: 's',
    Timestamp: 'ts',
  };
  assert.equal(
    snsStringToSign(c),
    'Message\nx\nMessageId\nm\nSubscribeURL\ns\nTimestamp\nts\nToken\nk\nTopicArn\nt\nType\nSubscriptionConfirmation\n',
  );
  assert.equal(snsCertUrlAllowed('https://127.0.0.1:9443/SimpleNotificationService-a.pem', '127.0.0.1:9443'), true);
  assert.equal(snsCertUrlAllowed('http://127.0.0.1:9443/SimpleNotificationService-a.pem', '127.0.0.1:9443'), false);
  assert.equal(snsCertUrlAllowed('https://localhost:9443/SimpleNotificationService-a.pem', '127.0.0.1:9443'), false);
  assert.equal(snsCertUrlAllowed('https://127.0.0.1:9443/cert', '127.0.0.1:9443'), false);
});

test("sns-validator accepts hookdrill's signatures (SignatureVersion 1 and 2) with the certificate fetched from the local SNS host, and refuses a changed message and a certificate on another host", async () => {
  const path = snsCertificatePath(cert);
  const host = await startSnsHost({ host: '127.0.0.1:0', key, cert, files: { [path]: cert } });
  // The attacker's host: another key pair, its own certificate, served on another host name.
  const attacker = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const attackerCert = snsCertificate(attacker);
  const evil = await startSnsHost({ host: 'localhost:0', key, cert, files: { [snsCertificatePath(attackerCert)]: attackerCert } });
  const caFile = join(tempDir(), 'ca.pem');
  writeFileSync(caFile, cert);
  try {
    const pinned = new RegExp(`^${host.host.replace(/\./g, '\\.')}$`);
    for (const version of ['1', '2']) {
      const message: Record<string, string> = {
        Type: 'Notification',
        MessageId: '22b80b92-fdea-4c2c-8f9d-bdfb0c7bf324',
        TopicArn: 'arn:aws:sns:us-west-2:123456789012:MyTopic',
        Subject: 'My First Message',
        Message: 'Hello world!',
        Timestamp: '2012-05-02T00:54:06.655Z',
        SignatureVersion: version,
        SigningCertURL: `https://${host.host}${path}`,
        UnsubscribeURL: `https://${host.host}/?Action=Unsubscribe&SubscriptionArn=x`,
      };
      message.Signature = snsSignature(message, key);
      assert.equal(snsVerifies(message, cert), true);
      assert.equal(await validate(message, pinned, caFile), 'ok', `SignatureVersion ${version}`);
      assert.equal(await validate({ ...message, Message: 'Hello world?' }, pinned, caFile), 'The message signature is invalid.');
      // Signed with the attacker's key, its certificate on the attacker's host: a pinned validator never fetches it…
      const forged: Record<string, string> = { ...message, SigningCertURL: `https://${evil.host}${snsCertificatePath(attackerCert)}` };
      forged.Signature = snsSignature(forged, attacker);
      assert.equal(snsVerifies(forged, cert), false);
      assert.equal(await validate(forged, pinned, caFile), 'The certificate is located on an invalid domain.');
      // …and one pinned to nothing at all takes it: the hole the forged-certificate case looks for.
      assert.equal(await validate(forged, /./, caFile), 'ok');
    }
  } finally {
    await host.close();
    await evil.close();
  }
});

test('the SNS host answers SubscribeURL as SNS does and remembers the visit', async () => {
  const host = await startSnsHost({ host: '127.0.0.1:0', key, cert, files: {} });
  try {
    const url = `https://${host.host}/?Action=ConfirmSubscription&TopicArn=arn:aws:sns:us-west-2:123456789012:MyTopic&Token=tok123`;
    const waited = host.visitOf('tok123', 5_000);
    const { stdout } = await run(
      process.execPath,
      ['-e', `fetch(process.argv[1]).then(async (r) => console.log(r.status, await r.text()))`, url],
      { env: { ...process.env, NODE_EXTRA_CA_CERTS: snsCertificateFile(env) } },
    );
    assert.match(
      stdout,
      /^200 <ConfirmSubscriptionResponse xmlns="http:\/\/sns\.amazonaws\.com\/doc\/2010-03-31\/"><ConfirmSubscriptionResult><SubscriptionArn>arn:aws:sns:us-west-2:123456789012:MyTopic:/,
    );
    const visit = await waited;
    assert.equal(visit?.action, 'ConfirmSubscription');
    assert.equal(visit?.topicArn, 'arn:aws:sns:us-west-2:123456789012:MyTopic');
    assert.equal(await host.visitOf('never', 50), undefined);
  } finally {
    await host.close();
  }
});

test('keys sns prints the certificate file a test-mode receiver trusts and the SNS host it pins; sns signs with no --secret of the user', async () => {
  const keys = await hookdrill(['keys', 'sns'], { ...env, HOOKDRILL_SNS_HOST: '127.0.0.1:5443' });
  assert.equal(keys.code, 0, keys.stderr);
  const [file, said] = keys.stdout.split('\n');
  assert.equal(file, snsCertificateFile(env));
  assert.equal(readFileSync(file as string, 'utf8'), cert);
  assert.match(
    said ?? '',
    /served as Amazon SNS's signing certificate on 127\.0\.0\.1:5443 while send or check runs.*HOOKDRILL_SNS_HOST.*NODE_EXTRA_CA_CERTS for Node, SSL_CERT_FILE for Python/,
  );
  assert.doesNotMatch(keys.stdout, /PRIVATE KEY/);
  // Amazon's key is Amazon's: a key of the user's would name a certificate that does not verify it.
  const other = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  const sent = await hookdrill(['send', '--provider', 'sns', '--url', 'http://127.0.0.1:9/', '--secret', other], env);
  assert.equal(sent.code, 2, sent.stderr);
  assert.match(
    sent.stderr,
    /^hookdrill: sns signs with hookdrill's own RSA key, whose certificate the SNS host serves: leave --secret out/,
  );
  assert.equal(sent.stderr.trim().split('\n').length, 1);
  assert.doesNotMatch(sent.stderr, /PRIVATE KEY/);
});

test('fixtures show sns/notification shows the headers SNS sends and the signature in the body, where it goes out', async () => {
  const shown = await hookdrill(['fixtures', 'show', 'sns/notification', '--json'], env);
  assert.equal(shown.code, 0, shown.stderr);
  const r = JSON.parse(shown.stdout) as { headers: Record<string, string>; body: Record<string, string> };
  assert.deepEqual(Object.keys(r.headers), [
    'x-amz-sns-message-type',
    'x-amz-sns-message-id',
    'x-amz-sns-topic-arn',
    'x-amz-sns-subscription-arn',
    'Content-Type',
    'User-Agent',
  ]);
  assert.match(r.body.Signature ?? '', /^[A-Za-z0-9+/]{342}==?$|^[A-Za-z0-9+/]{343}=$|^[A-Za-z0-9+/]{344}$/);
  assert.equal(snsVerifies(r.body, cert), true);
});
