import { X509Certificate, constants, createHash, createPublicKey, generateKeyPairSync, randomUUID, sign, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { crc32 } from 'node:zlib';
import { UsageError } from '../util/errors.js';
import type { CertificateSignature } from './declaration-certificate.js';
import type { CheckedDeclaration } from './declaration.js';
import { declaredDelivery, declaredIdentity, placeHeaders, withExtras } from './declared-common.js';
import type { DeclaredExtras } from './declared-common.js';
import { ownPrivateKey } from './keys.js';
import { certificateFile, selfSignedCertificate, servedHostOf } from './sns-certificate.js';
import { startSnsHost } from './sns-host.js';
import { servesCertificate } from './sns.js';
import type { OutgoingHeaders, Provider, ProviderName, ServedHost } from './types.js';
import { SignatureError } from './types.js';
import { header, otherStringSecret, requireHeader, requireSecrets } from './util.js';

/**
 * A declared scheme signed with an RSA key whose certificate the request names by URL
 * (declaration-certificate.ts; PayPal's PAYPAL-TRANSMISSION-SIG and PAYPAL-CERT-URL). The sender's
 * key is the sender's: hookdrill signs with its own RSA key (providers/keys.ts, `<name>-rsa.pem`,
 * made once, kept 0600) and, while send, check and chaos run, serves that key's self-signed
 * certificate over HTTPS on the *certificate host* — the host a test-mode receiver pins instead of
 * the sender's (api.paypal.com):
 *
 *   HOOKDRILL_CERT_HOST   host[:port] served as (default 127.0.0.1:9444; SNS's is 9443): the one
 *                         value hookdrill and the receiver both read.
 *
 * The certificate is the host's TLS certificate too (providers/sns-certificate.ts builds it, as it
 * builds SNS's), so a receiver trusts the host by trusting that one file, `<name>-certificate.pem`
 * in the keys directory (SSL_CERT_FILE for Python, NODE_EXTRA_CA_CERTS for Node). What the
 * receiver is configured with — the `secret` — is not a key: it is a value the signature covers
 * ({secret} in the content; PayPal's webhook id), so a delivery for another receiver fails here.
 */

/** The certificate host when HOOKDRILL_CERT_HOST is not set: beside SNS's 9443. */
export const DEFAULT_CERT_HOST = '127.0.0.1:9444';

/** The host[:port] hookdrill serves a certificate scheme's certificate on, and a test-mode receiver pins. */
export function certHost(env: NodeJS.ProcessEnv = process.env): string {
  return servedHostOf('HOOKDRILL_CERT_HOST', DEFAULT_CERT_HOST, env);
}

/** The bytes of a 2048-bit RSA signature: a signature of another length is malformed, not a mismatch. */
const SIGNATURE_BYTES = 256;

let attacker: string | undefined;
/** Another RSA key, made once a process: the forged-certificate case's attacker signs with it. */
function attackerKey(): string {
  attacker ??= generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return attacker;
}

export function certificateProvider(d: CheckedDeclaration, sig: CertificateSignature, extras: DeclaredExtras = {}): Provider {
  const identity = declaredIdentity(d);
  const { idHeader, typeHeader, typePath } = identity;
  const title = d.title ?? d.name;
  const fresh = Object.entries(sig.fresh ?? {});
  const subject = { commonName: `${d.name}.hookdrill.test`, organization: `hookdrill test stand-in for ${title}` };
  const ownKey = () => ownPrivateKey(d.name, 'rsa');
  const certificateOf = (key: string) => selfSignedCertificate(key, subject);
  /** Where a certificate is served: named by its bytes, as PayPal names its own (CERT-<hex>). */
  const pathOf = (pem: string) =>
    `/v1/notifications/certs/CERT-${createHash('sha256').update(new X509Certificate(pem).raw).digest('hex').slice(0, 24)}`;
  const pss = sig.algorithm === 'rsa-pss-sha256';
  const padding = pss
    ? { padding: constants.RSA_PKCS1_PSS_PADDING, saltLength: constants.RSA_PSS_SALTLEN_DIGEST }
    : { padding: constants.RSA_PKCS1_PADDING };

  /** The content signed: each part filled from the fresh headers, the secret and the body. */
  const content = (rawBody: Buffer, values: (name: string) => string | undefined, secret: string) =>
    sig.content.replace(/\{([^}]+)\}/g, (all, part: string) => {
      if (part === 'secret') return secret;
      if (part === 'crc32') return String(crc32(rawBody) >>> 0);
      if (part === 'sha256') return createHash('sha256').update(rawBody).digest('hex');
      const name = /^header\.(.+)$/.exec(part)?.[1];
      return name === undefined ? all : (values(name) ?? '');
    });
  const signWith = (key: string, text: string) => sign('sha256', Buffer.from(text, 'utf8'), { key, ...padding }).toString('base64');

  /** The headers of one signing: the fresh ones in their order, the signature, the certificate's URL, then what the declaration places. */
  const headersFor = (
    rawBody: Buffer,
    secret: string,
    ctx: { nowMs: number; deliveryId: string; eventType: string },
    key: string,
    certUrl: string,
  ) => {
    const made: OutgoingHeaders = {};
    for (const [name, kind] of fresh)
      made[name] = kind === 'uuid' ? randomUUID() : new Date(Math.floor(ctx.nowMs / 1000) * 1000).toISOString().replace('.000Z', 'Z');
    const value = (name: string) => fresh.find(([n]) => n.toLowerCase() === name.toLowerCase())?.[0];
    const signature = signWith(
      key,
      content(
        rawBody,
        (n) => {
          const k = value(n);
          return k === undefined ? undefined : made[k];
        },
        secret,
      ),
    );
    made[sig.header] = signature;
    made[sig.certificateHeader] = certUrl;
    const placed = placeHeaders(d, { signature, id: ctx.deliveryId, event: ctx.eventType }, [
      ['Content-Type', d.contentType ?? 'application/json'],
      [idHeader, ctx.deliveryId],
      [typeHeader, ctx.eventType],
    ]);
    return { ...made, ...placed };
  };
  const ownCertUrl = () => `https://${certHost()}${pathOf(certificateOf(ownKey()))}`;
  const ownPublic = new Map<string, KeyObject>();

  const provider: Provider = {
    ...identity.members,
    // A declared name is registered at run time (providers/index.ts) and passes as a known one.
    name: d.name as ProviderName,
    title,
    signatureHeader: sig.header,
    signedHeaders: [sig.header, sig.certificateHeader, ...fresh.map(([n]) => n)],
    timestamped: false,
    rotation: false,
    ...declaredDelivery(d, title),
    verifier: {
      official: `the ${d.name} declaration in ${d.file} (RSA${pss ? '-PSS' : ''} SHA-256 by the certificate at ${sig.certificateHeader}, on the pinned host only)`,
      futureTimestamp: 'accepted', // no window: nothing of the time is held (the cases do not apply)
      parsesJson: false,
      // The signature's bytes edited, not its base64 (two characters off a padded value may take only padding).
      editSignatures: (v, edit) => Buffer.from(edit(Buffer.from(v, 'base64').toString('hex')), 'hex').toString('base64'),
      unknownType: typePath ? { path: typePath, value: 'HOOKDRILL.UNKNOWN.EVENT' } : { eventName: 'HOOKDRILL.UNKNOWN.EVENT' },
    },

    sign(rawBody, secrets, ctx) {
      return headersFor(rawBody, secrets[0] ?? '', ctx, ownKey(), ownCertUrl());
    },

    verify(rawBody, headers, secrets, opts = {}) {
      requireSecrets(secrets);
      const given = requireHeader(headers, sig.header).trim();
      const bytes = /^[A-Za-z0-9+/]+={0,2}$/.test(given) ? Buffer.from(given, 'base64') : undefined;
      if (bytes?.length !== SIGNATURE_BYTES)
        throw new SignatureError('malformed_header', `${sig.header} is not a base64 RSA signature of ${SIGNATURE_BYTES} bytes`);
      const certUrl = requireHeader(headers, sig.certificateHeader).trim();
      const host = certHost();
      let url: URL | undefined;
      try {
        url = new URL(certUrl);
      } catch {
        url = undefined;
      }
      // The pin: a certificate from anywhere else is never fetched (or anyone who serves one signs as the sender).
      if (url?.protocol !== 'https:' || url.host !== host || url.username || url.password)
        throw new SignatureError(
          'no_match',
          `${sig.certificateHeader} is not an https URL on the certificate host ${host}: its certificate is not fetched`,
        );
      for (const [name] of fresh) requireHeader(headers, name);
      if (opts.headersOnly) return;
      const own = certificateOf(ownKey());
      if (url.pathname !== pathOf(own))
        throw new SignatureError('no_match', `${sig.certificateHeader} names a certificate the certificate host does not serve`);
      let key = ownPublic.get(own);
      if (!key) {
        key = createPublicKey(own);
        ownPublic.set(own, key);
      }
      for (const secret of secrets) {
        const text = content(rawBody, (n) => header(headers, n), secret);
        if (verify('sha256', Buffer.from(text, 'utf8'), { key, ...padding }, bytes)) return;
      }
      throw new SignatureError('no_match', `${sig.header} does not verify with the certificate for the body and any secret`);
    },

    checkSecret(secret) {
      // The secret is signed as text ({secret}): any text is one; a line break would change the content signed.
      if (/[\r\n]/.test(secret))
        throw new UsageError(
          `${d.name}: the secret (${sig.content.includes('{secret}') ? 'signed in the content' : 'sent'}) holds a line break`,
        );
    },

    otherSecret(secret) {
      return otherStringSecret(secret);
    },

    async serve(o = {}) {
      const key = ownKey();
      const cert = certificateOf(key);
      const path = pathOf(cert);
      // The file a receiver trusts the host through, there for as long as the host is.
      certificateFile(d.name, cert);
      const names = { host: `${title} certificate host`, variable: 'HOOKDRILL_CERT_HOST' };
      const host = await startSnsHost({ host: certHost(), key, cert, files: { [path]: cert }, names }).catch(async (err: unknown) => {
        // send may share the host with another run serving the same certificate (the same keys).
        if (o.share && (await servesCertificate(certHost(), path, cert))) return undefined;
        throw err;
      });
      if (!host) return { host: certHost(), visitOf: async () => undefined, close: async () => {} } satisfies ServedHost;
      return {
        host: host.host,
        visitOf: (token, ms) => host.visitOf(token, ms),
        close: () => host.close(),
        async forgedElsewhere(rawBody, signed) {
          // The attacker's key and certificate on another host (localhost, not the pinned address),
          // over a TLS identity the receiver trusts — as an attacker's own domain has one. The
          // forgery is otherwise whole: the same fresh headers and secret, the attacker's signature.
          const forger = attackerKey();
          const forgedCert = certificateOf(forger);
          const forgedPath = pathOf(forgedCert);
          const evil = await startSnsHost({ host: 'localhost:0', key, cert, files: { [forgedPath]: forgedCert }, names });
          const certUrl = `https://${evil.host}${forgedPath}`;
          const values = (n: string) => (signed ? header(signed.headers, n) : undefined);
          const signature = signWith(forger, content(rawBody, values, signed?.secret ?? ''));
          return {
            body: rawBody,
            certUrl,
            headers: { [sig.header]: signature, [sig.certificateHeader]: certUrl },
            close: () => evil.close(),
          };
        },
      };
    },

    servedAt: () => ({
      host: certHost(),
      hostVariable: 'HOOKDRILL_CERT_HOST',
      trustFile: certificateFile(d.name, certificateOf(ownKey())),
    }),
  };
  return withExtras(provider, extras);
}
