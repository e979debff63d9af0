import { createSign, createVerify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';

/**
 * Amazon SNS's message signature: RSA over named fields of the JSON body, not over its bytes.
 * Sources:
 *   - docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html: the string to sign is
 *     each named field as "Key\nValue\n", in a fixed order — a Notification's Message, MessageId,
 *     Subject (only where present), Timestamp, TopicArn, Type; a SubscriptionConfirmation's or
 *     UnsubscribeConfirmation's Message, MessageId, SubscribeURL, Timestamp, Token, TopicArn, Type.
 *     SignatureVersion "1" is SHA1withRSA, "2" SHA256withRSA; Signature is base64. The certificate
 *     is fetched from SigningCertURL, which must be https on an SNS host (sns.<region>.amazonaws.com).
 *   - sns-validator (npm, AWS's JavaScript validator), index.js: the same fields in the same
 *     (alphabetical) order, a field absent from the message left out; the URL held to `https:`, a
 *     path ending `.pem` and a host matching its hostPattern before anything is fetched.
 * Fields outside the list (SignatureVersion, SigningCertURL, UnsubscribeURL, MessageAttributes)
 * are not signed: a change to them alone verifies, which is why the certificate's host must be pinned.
 */

export type SnsMessageType = 'Notification' | 'SubscriptionConfirmation' | 'UnsubscribeConfirmation';

/** The fields signed, in order, by message type. */
export function snsSignedKeys(type: unknown): readonly string[] {
  return type === 'SubscriptionConfirmation' || type === 'UnsubscribeConfirmation'
    ? ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type']
    : ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type'];
}

/** The string SNS signs: "Key\nValue\n" for each signed field the message holds, in order. */
export function snsStringToSign(message: Readonly<Record<string, unknown>>): string {
  let out = '';
  for (const key of snsSignedKeys(message.Type)) {
    const value = message[key];
    // Subject is signed only where the message has one (an absent or null Subject is left out).
    if (value === undefined || value === null) continue;
    out += `${key}\n${String(value)}\n`;
  }
  return out;
}

/** The digest of a SignatureVersion, or undefined for a version SNS does not have. */
export function snsDigest(version: unknown): 'RSA-SHA1' | 'RSA-SHA256' | undefined {
  return version === '1' ? 'RSA-SHA1' : version === '2' ? 'RSA-SHA256' : undefined;
}

/** The base64 signature of a message with a private key, by its SignatureVersion ("1" where it has none). */
export function snsSignature(message: Readonly<Record<string, unknown>>, key: KeyObject | string): string {
  const digest = snsDigest(message.SignatureVersion ?? '1') ?? 'RSA-SHA1';
  return createSign(digest).update(snsStringToSign(message), 'utf8').sign(key, 'base64');
}

/** Whether the message's Signature verifies with this certificate (or public key). */
export function snsVerifies(message: Readonly<Record<string, unknown>>, certificate: KeyObject | string): boolean {
  const digest = snsDigest(message.SignatureVersion);
  if (!digest || typeof message.Signature !== 'string') return false;
  try {
    return createVerify(digest).update(snsStringToSign(message), 'utf8').verify(certificate, message.Signature, 'base64');
  } catch {
    return false;
  }
}

/**
 * Whether a SigningCertURL may be fetched at all: https, a path ending in `.pem`, on the pinned
 * host (sns-validator's validateUrl; AWS's docs). `host` is a host[:port] as a URL writes it.
 */
export function snsCertUrlAllowed(value: unknown, host: string): boolean {
  if (typeof value !== 'string') return false;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return false;
  }
  return url.protocol === 'https:' && url.pathname.endsWith('.pem') && url.host === host.toLowerCase() && !url.username && !url.password;
}
