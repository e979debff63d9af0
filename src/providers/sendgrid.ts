import { createPrivateKey, createPublicKey, generateKeyPairSync, sign as cryptoSign, verify as cryptoVerify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { UsageError } from '../util/errors.js';
import { cachedKey, ownPrivateKey } from './keys.js';
import type { JsonObject, JsonValue, Provider, TimingProfile } from './types.js';
import { SignatureError } from './types.js';
import { HOUR, MINUTE, isObject, parseJson, randomAlnum, requireHeader, requireSecrets, sortedKeys, unixSeconds } from './util.js';

/**
 * SendGrid's Event Webhook (Twilio SendGrid), signed with a key pair: ECDSA over P-256. Sources:
 *   - SendGrid's docs, "Getting started with the Event Webhook security features": with signing on,
 *     each POST carries `X-Twilio-Email-Event-Webhook-Signature` (the base64 ECDSA signature, SHA-256,
 *     over `X-Twilio-Email-Event-Webhook-Timestamp` followed by the raw body) and that timestamp;
 *     the receiver verifies with the *verification key* SendGrid shows (the public key, base64 of
 *     its DER SubjectPublicKeyInfo).
 *   - @sendgrid/eventwebhook (EventWebhook.verifySignature): `timestamp + payload` checked with
 *     starkbank-ecdsa; no window on the timestamp, so check judges none.
 *   - SendGrid's docs, "Event Webhook reference": the body is a JSON *array* of events (batched),
 *     each with `email`, `timestamp`, `event`, `sg_event_id` (unique per event: what to dedupe on)
 *     and `sg_message_id`; a non-2xx answer is retried for up to 24 hours. Not published: the
 *     timeout and the intervals (10 s; doubling from 5 minutes to a 4-hour cap within 24 h, chosen).
 *   - The body as SendGrid writes it: a JSON array, each event's keys sorted, `\r\n` after each
 *     event's `}` and after the closing `]` — `[{…},\r\n{…}]\r\n` — and signed as such
 *     (@sendgrid/eventwebhook's src/eventwebhook.spec.js: its signed vectors of one and of two
 *     events, "Be sure to include the trailing carriage return and newline after each event").
 *     A recorded delivery of two events through ngrok (Mar 2025: Content-Length 838, the CRLFs
 *     counted) carried `User-Agent: SendGrid Event API` and
 *     `Content-Type: application/json;charset=utf-8` (no space before charset).
 * hookdrill signs with its own P-256 key (made once, kept 0600) unless --secret gives a private key
 * (PEM), and prints only the public key (`hookdrill keys sendgrid`).
 */

/** SendGrid's bytes for a list of events: `[{…},\r\n{…}]\r\n`, each event compact with its keys sorted. */
export function sendgridBody(events: readonly JsonValue[]): string {
  return `[${events.map((e) => JSON.stringify(sortedKeys(e))).join(',\r\n')}]\r\n`;
}

const profile: TimingProfile = {
  name: 'sendgrid',
  summary: 'SendGrid Event Webhook: retried for up to 24h (published), doubling from 5m to a 4h cap (chosen); 10s timeout (chosen)',
  published: false,
  timeoutMs: 10_000,
  retryDelaysMs: Array.from({ length: 9 }, (_, n) => Math.min(5 * MINUTE * 2 ** n, 4 * HOUR)),
  maxRedirects: 0,
  retryAfterStatuses: [],
  stopStatuses: [],
};

const SIGNATURE = 'X-Twilio-Email-Event-Webhook-Signature';
const TIMESTAMP = 'X-Twilio-Email-Event-Webhook-Timestamp';

/** A P-256 private key as given: PEM (PKCS#8 or SEC1). */
function signingKey(secret: string): KeyObject {
  try {
    const key = createPrivateKey(secret.trim());
    if (key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1') return key;
  } catch {
    // Named below, in one line: never the key itself.
  }
  throw new UsageError('the signing key must be a P-256 (prime256v1) EC private key in PEM');
}

/** The verification key a receiver holds: base64 of the DER SubjectPublicKeyInfo (as SendGrid shows it), or PEM; or derived from a private key. */
function verifyingKey(secret: string): KeyObject {
  const text = secret.trim();
  if (text.includes('PRIVATE KEY')) return createPublicKey(signingKey(text));
  if (text.includes('-----BEGIN')) return createPublicKey(text);
  return createPublicKey({ key: Buffer.from(text, 'base64'), format: 'der', type: 'spki' });
}

/** The public key as SendGrid shows it: base64 of its DER SubjectPublicKeyInfo. */
function publicKeyBase64(privateKey: string): string {
  return createPublicKey(signingKey(privateKey)).export({ type: 'spki', format: 'der' }).toString('base64');
}

const signers = new Map<string, KeyObject>();
const verifiers = new Map<string, KeyObject>();

const first = (body: JsonValue | undefined): JsonObject | undefined => (Array.isArray(body) && isObject(body[0]) ? body[0] : undefined);
const sgEventId = () => randomAlnum(22, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_');

export const sendgrid: Provider = {
  name: 'sendgrid',
  title: 'SendGrid',
  signatureHeader: SIGNATURE,
  signedHeaders: [SIGNATURE, TIMESTAMP],
  timestamped: false,
  keyPair: true,
  rotation: false,
  contract: {
    batching: {
      events: 'list',
      path: [],
      max: 1_000,
      id: ['sg_event_id'],
      type: ['event'],
      typical: 3,
      source:
        "docs.sendgrid.com/for-developers/tracking-events/event: events are batched, a JSON array a POST (the most a batch holds is not published: 1,000 chosen); @sendgrid/eventwebhook's test vectors hold two",
    },
    resends: {
      events: 'on-failure',
      source: 'docs.sendgrid.com/for-developers/tracking-events/getting-started-event-webhook: a non-2xx is retried for up to 24 hours',
    },
    endpointChecks: [],
    answer: { kind: 'status', source: 'docs.sendgrid.com/for-developers/tracking-events/getting-started-event-webhook' },
    related: {
      about: 'one message processed, then delivered',
      first: 'processed',
      next: 'delivered',
      path: ['sg_message_id'],
      dedupeOn: 'sg_event_id',
      source:
        'twilio.com/docs/sendgrid/for-developers/tracking-events/event: processed, delivered, open … about one sg_message_id, each event with its own sg_event_id',
    },
  },
  profiles: { sendgrid: profile },
  defaultProfile: 'sendgrid',
  verifier: {
    official: "@sendgrid/eventwebhook's verifySignature",
    futureTimestamp: 'accepted',
    parsesJson: false,
    // Edited without its base64 padding: cutting a signature's "==" would leave the same bytes, which
    // the SDK rightly accepts (wrong-length-signature was a false fail of a receiver on it).
    editSignatures: (v, edit) => edit(v.replace(/=+$/, '')),
    unknownType: { path: ['0', 'event'], value: 'hookdrill_unknown_event' },
  },

  ownKey: () => ownPrivateKey('sendgrid', 'p256'),
  publicKey: publicKeyBase64,
  publicKeyName: 'Event Webhook verification key',

  checkSecret(secret) {
    signingKey(secret);
  },

  checkVerifyingKey(key) {
    let k: KeyObject | undefined;
    try {
      k = verifyingKey(key);
    } catch {
      // Named below, in one line: never the key itself.
    }
    if (k?.asymmetricKeyType !== 'ec' || k.asymmetricKeyDetails?.namedCurve !== 'prime256v1')
      throw new UsageError(
        "sendgrid: the Event Webhook verification key must be a P-256 public key: base64, as SendGrid's settings show it, or PEM",
      );
  },

  sign(rawBody, secrets, ctx) {
    const [secret] = secrets;
    if (secret === undefined) throw new UsageError('sendgrid signs with a private key: none was given');
    const timestamp = String(unixSeconds(ctx.nowMs));
    const signature = cryptoSign(
      'sha256',
      Buffer.concat([Buffer.from(timestamp), rawBody]),
      cachedKey(signers, secret, signingKey),
    ).toString('base64');
    return {
      'Content-Type': 'application/json;charset=utf-8',
      'User-Agent': 'SendGrid Event API',
      [SIGNATURE]: signature,
      [TIMESTAMP]: timestamp,
    };
  },

  verify(rawBody, headers, secrets, opts = {}) {
    requireSecrets(secrets);
    const signature = requireHeader(headers, SIGNATURE);
    const timestamp = requireHeader(headers, TIMESTAMP);
    // A DER ECDSA signature over P-256 is 70 to 72 bytes: base64 of 96 characters at most.
    if (!/^[A-Za-z0-9+/]{80,100}={0,2}$/.test(signature))
      throw new SignatureError('malformed_header', `${SIGNATURE} is not a base64 ECDSA signature`);
    if (opts.headersOnly) return;
    const message = Buffer.concat([Buffer.from(timestamp), rawBody]);
    for (const secret of secrets) {
      let key: KeyObject;
      try {
        key = cachedKey(verifiers, secret, verifyingKey);
      } catch {
        continue;
      }
      try {
        if (cryptoVerify('sha256', message, key, Buffer.from(signature, 'base64'))) return;
      } catch {
        // A signature that is not DER is a mismatch, as the SDK says false.
      }
    }
    throw new SignatureError('no_match', `${SIGNATURE} does not verify with the verification key`);
  },

  deliveryId(_headers, rawBody) {
    const e = first(parseJson(rawBody));
    return typeof e?.sg_event_id === 'string' ? e.sg_event_id : undefined;
  },

  eventTypeOf(_headers, rawBody) {
    const e = first(parseJson(rawBody));
    return typeof e?.event === 'string' ? e.event : undefined;
  },

  otherSecret() {
    // Another P-256 key, made in memory once per process: never the receiver's, never on disk.
    other ??= generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    return other;
  },

  serialize(body: JsonObject): string {
    // The body is a list of events (a JsonObject only by the fixture's type); anything else as JSON writes it.
    const value = body as JsonValue;
    return Array.isArray(value) ? sendgridBody(value) : JSON.stringify(value);
  },

  freshFields(body: JsonObject) {
    // Every event of the body: a captured batch sent again is new events, each with its own id.
    const events: JsonValue[] = Array.isArray(body) ? body : [];
    return events.flatMap((e, i) =>
      isObject(e)
        ? [
            ...(typeof e.sg_event_id === 'string' ? [{ path: [i, 'sg_event_id'], make: sgEventId }] : []),
            ...(typeof e.timestamp === 'number'
              ? [{ path: [i, 'timestamp'], make: (now: number) => unixSeconds(now), clock: true as const }]
              : []),
          ]
        : [],
    );
  },

  describe(body, fixtureName) {
    const e = first(body);
    return {
      eventType: typeof e?.event === 'string' ? e.event : fixtureName,
      ...(typeof e?.sg_event_id === 'string' ? { deliveryId: e.sg_event_id } : {}),
    };
  },

  newDeliveryId() {
    return sgEventId();
  },
};
let other: string | undefined;
