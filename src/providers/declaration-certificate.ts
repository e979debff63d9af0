import type { FieldReaders } from './declaration-canonical.js';

/**
 * A declared scheme signed with a private key whose certificate the request names by URL
 * (PayPal's PAYPAL-CERT-URL): checked here, as data (providers/declared-certificate.ts is the
 * engine). The receiver fetches the certificate from that URL — only from the sender's own host,
 * or anyone who serves a certificate can sign as the sender — and verifies an RSA signature over
 * a content template. In test mode hookdrill signs with its own RSA key and serves that key's
 * certificate on a local host (HOOKDRILL_CERT_HOST), as it does for SNS.
 *
 * The content names:
 *   - `{header.<Name>}`: a header the scheme writes anew for every attempt (`fresh`);
 *   - `{secret}`: what the receiver is configured with (PayPal's webhook id: not a key, it binds
 *     the delivery to one webhook — another webhook's id does not verify);
 *   - `{crc32}`: the CRC-32 of the raw body, decimal and unsigned (what binds the body: PayPal's);
 *   - `{sha256}`: the hex SHA-256 of the raw body.
 */
export interface CertificateSignature {
  scheme: 'certificate';
  /** The header the signature goes in, base64. */
  header: string;
  /** The header that carries the certificate's URL. */
  certificateHeader: string;
  /** RSA PKCS#1 v1.5 with SHA-256 (`rsa-sha256`, the default: PayPal's SHA256withRSA) or RSA-PSS with SHA-256. */
  algorithm?: 'rsa-sha256' | 'rsa-pss-sha256';
  /** Headers written anew for every attempt, in the order sent: a `uuid` or the `time` (RFC 3339, seconds). */
  fresh?: Record<string, 'uuid' | 'time'>;
  content: string;
}

/** Whether a declared signature is the certificate scheme. */
export function isCertificateScheme(sig: { scheme?: string }): sig is CertificateSignature {
  return sig.scheme === 'certificate';
}

const PARTS = ['{secret}', '{crc32}', '{sha256}'];

/** Every fault one line naming the field, as the rest of the declaration's. */
export function checkCertificateSignature(s: Record<string, unknown>, r: FieldReaders): CertificateSignature {
  r.onlyKnown(s, ['scheme', 'header', 'certificateHeader', 'algorithm', 'fresh', 'content'], 'signature.');
  const header = r.headerName(s.header, 'signature.header');
  const certificateHeader = r.headerName(s.certificateHeader, 'signature.certificateHeader');
  if (header.toLowerCase() === certificateHeader.toLowerCase())
    throw r.bad('signature.certificateHeader', 'is the signature header: the certificate URL goes in a header of its own');
  const algorithm =
    s.algorithm === undefined ? 'rsa-sha256' : r.oneOf(s.algorithm, 'signature.algorithm', ['rsa-sha256', 'rsa-pss-sha256'] as const);
  const fresh: Record<string, 'uuid' | 'time'> = {};
  if (s.fresh !== undefined) {
    if (typeof s.fresh !== 'object' || s.fresh === null || Array.isArray(s.fresh))
      throw r.bad('signature.fresh', 'expected an object of header names and "uuid" or "time"');
    for (const [k, v] of Object.entries(s.fresh)) {
      r.headerName(k, `signature.fresh.${k}`);
      fresh[k] = r.oneOf(v, `signature.fresh.${k}`, ['uuid', 'time'] as const);
    }
  }
  const content = r.str(s.content, 'signature.content');
  const names = Object.keys(fresh).map((k) => k.toLowerCase());
  for (const part of content.match(/\{[^}]*\}/g) ?? []) {
    const named = /^\{header\.([^}]+)\}$/.exec(part)?.[1];
    if (named !== undefined) {
      if (!names.includes(named.toLowerCase()))
        throw r.bad('signature.content', `names ${part}, which is no header in signature.fresh: only what the scheme writes is signed`);
    } else if (!PARTS.includes(part))
      throw r.bad('signature.content', `may name {header.<fresh header>}, {secret}, {crc32} and {sha256} only, not ${part}`);
  }
  if (!content.includes('{crc32}') && !content.includes('{sha256}'))
    throw r.bad('signature.content', 'signs nothing of the body: name {crc32} or {sha256}, or a changed body goes unnoticed');
  if (!content.includes('{secret}'))
    throw r.bad('signature.content', "names no {secret}: a delivery for another receiver would verify at this one's");
  return {
    scheme: 'certificate',
    header,
    certificateHeader,
    algorithm,
    ...(Object.keys(fresh).length ? { fresh } : {}),
    content,
  };
}
