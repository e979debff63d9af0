import { X509Certificate, createHash, createPrivateKey, createPublicKey } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import forge from 'node-forge';
import { UsageError } from '../util/errors.js';
import { ensureKeysDir } from './key-file.js';
import { keysDir, ownPrivateKey } from './keys.js';

/**
 * What stands in for Amazon's signing certificate in hookdrill's SNS test mode. Amazon signs with
 * its own RSA key and serves the certificate at SigningCertURL on sns.<region>.amazonaws.com; a
 * receiver fetches it from there, and only from there (it pins the host). Offline there is no
 * such host, so hookdrill signs with its own RSA key (providers/keys.ts, kept like Discord's and
 * SendGrid's) and serves a self-signed certificate of it over HTTPS on a local host — the
 * *SNS host* — which a receiver in test mode pins instead of sns.<region>.amazonaws.com:
 *
 *   HOOKDRILL_SNS_HOST   the host[:port] hookdrill serves as (default 127.0.0.1:9443): the one
 *                        value both hookdrill and the receiver read.
 *
 * The same certificate is the local server's TLS certificate, so a receiver trusts the SNS host by
 * trusting that one file (NODE_EXTRA_CA_CERTS for Node, a cafile for Python), printed by
 * `hookdrill keys sns`. It is built from the key alone, deterministically (fixed serial and
 * validity, PKCS#1 v1.5 signing is deterministic): the same key gives the same bytes, so a
 * receiver's trust survives runs. Built with node-forge: Node can parse X.509 but not write it.
 */

/** The SNS host when HOOKDRILL_SNS_HOST is not set. */
export const DEFAULT_SNS_HOST = '127.0.0.1:9443';

/** The host[:port] hookdrill serves SNS's certificate and SubscribeURL on, and a test-mode receiver pins. */
export function snsHost(env: NodeJS.ProcessEnv = process.env): string {
  return servedHostOf('HOOKDRILL_SNS_HOST', DEFAULT_SNS_HOST, env);
}

/** A served host's host[:port] from its variable (or its default): a host and a port, one line naming the variable otherwise. */
export function servedHostOf(variable: string, fallback: string, env: NodeJS.ProcessEnv = process.env): string {
  const value = (env[variable] ?? '').trim() || fallback;
  let url: URL;
  try {
    url = new URL(`https://${value}/`);
  } catch {
    throw new UsageError(`${variable}=${value}: expected a host[:port], as ${fallback}`);
  }
  if (url.host !== value.toLowerCase() || !url.port)
    throw new UsageError(`${variable}=${value}: expected a host and a port, as ${fallback}`);
  return url.host;
}

/** hookdrill's own private key for signing as SNS (PKCS#8 PEM), made on first use. */
export function ownSnsKey(env: NodeJS.ProcessEnv = process.env): string {
  return ownPrivateKey('sns', 'rsa', env);
}

const built = new Map<string, string>();

/** The self-signed certificate (PEM) of an RSA private key: the signing certificate and the SNS host's TLS certificate. */
export function snsCertificate(privateKeyPem: string): string {
  return selfSignedCertificate(privateKeyPem, { commonName: 'sns.amazonaws.com', organization: 'hookdrill test stand-in for Amazon SNS' });
}

/**
 * The self-signed certificate (PEM) of an RSA private key, named for the sender it stands in for:
 * what a certificate host serves (SNS's, a declared certificate scheme's) and its TLS certificate.
 */
export function selfSignedCertificate(privateKeyPem: string, subject: { commonName: string; organization: string }): string {
  const cacheKey = `${subject.commonName}\n${privateKeyPem}`;
  const held = built.get(cacheKey);
  if (held) return held;
  const key = createPrivateKey(privateKeyPem);
  if (key.asymmetricKeyType !== 'rsa') throw new UsageError(`${subject.commonName}: the certificate is of an RSA private key`);
  // forge reads PKCS#1 or PKCS#8; what Node made is written as PKCS#8.
  const priv = forge.pki.privateKeyFromPem(key.export({ type: 'pkcs8', format: 'pem' }).toString());
  const cert = forge.pki.createCertificate();
  cert.publicKey = forge.pki.setRsaPublicKey(priv.n, priv.e);
  const spki = createPublicKey(key).export({ type: 'spki', format: 'der' });
  // A positive serial (a leading 0 nibble) from the key: the same key, the same certificate.
  cert.serialNumber = `0${createHash('sha256').update(spki).digest('hex').slice(0, 31)}`;
  cert.validity.notBefore = new Date('2025-01-01T00:00:00Z');
  cert.validity.notAfter = new Date('2045-01-01T00:00:00Z');
  const name = [
    { name: 'commonName', value: subject.commonName },
    { name: 'organizationName', value: subject.organization },
  ];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([
    { name: 'basicConstraints', cA: true },
    { name: 'keyUsage', digitalSignature: true, keyEncipherment: true, keyCertSign: true },
    { name: 'extKeyUsage', serverAuth: true },
    // The SNS host's names, for TLS: the loopback address and localhost (where the forged-certificate case's other host is).
    {
      name: 'subjectAltName',
      altNames: [
        { type: 7, ip: '127.0.0.1' },
        { type: 2, value: 'localhost' },
      ],
    },
  ]);
  cert.sign(priv, forge.md.sha256.create());
  const pem = forge.pki.certificateToPem(cert).replace(/\r\n/g, '\n');
  if (built.size > 8) built.clear();
  built.set(cacheKey, pem);
  return pem;
}

/** The path a certificate is served at, named as Amazon names its own: SimpleNotificationService-<32 hex>.pem. */
export function snsCertificatePath(certificatePem: string): string {
  const der = new X509Certificate(certificatePem).raw;
  return `/SimpleNotificationService-${createHash('sha256').update(der).digest('hex').slice(0, 32)}.pem`;
}

/**
 * hookdrill's SNS certificate written where a receiver is pointed at it (NODE_EXTRA_CA_CERTS, a
 * cafile): `sns-certificate.pem` in the keys directory, rewritten only when it differs. Returns the path.
 */
export function snsCertificateFile(env: NodeJS.ProcessEnv = process.env): string {
  return certificateFile('sns', snsCertificate(ownSnsKey(env)), env);
}

/** A provider's certificate written as `<provider>-certificate.pem` in the keys directory, for a receiver to trust. Returns the path. */
export function certificateFile(provider: string, pem: string, env: NodeJS.ProcessEnv = process.env): string {
  const dir = keysDir(env);
  ensureKeysDir(dir);
  const file = join(dir, `${provider}-certificate.pem`);
  let held: string | undefined;
  try {
    held = readFileSync(file, 'utf8');
  } catch {
    held = undefined;
  }
  // A certificate is public: readable by the receiver's user too.
  if (held !== pem) writeFileSync(file, pem, { mode: 0o644 });
  return file;
}
