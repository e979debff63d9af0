import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, X509Certificate } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { get as httpsGet } from 'node:https';
import { UsageError } from '../util/errors.js';
import { cachedKey } from './keys.js';
import { ownSnsKey, snsCertificate, snsCertificateFile, snsCertificatePath, snsHost } from './sns-certificate.js';
import { startSnsHost } from './sns-host.js';
import { snsCertUrlAllowed, snsSignature, snsVerifies } from './sns-signature.js';
import type { JsonObject, JsonValue, OutgoingHeaders, Provider, ServedHost, TimingProfile } from './types.js';
import { SignatureError } from './types.js';
import { header as headerValue, isObject, parseJson, requireSecrets } from './util.js';

/**
 * Amazon SNS, HTTP/S subscriptions: signed with a public key whose certificate the message names
 * (SigningCertURL), and a handshake — a SubscriptionConfirmation the receiver confirms by visiting
 * SubscribeURL. Sources:
 *   - docs.aws.amazon.com/sns/latest/dg/sns-message-and-json-formats.html: the headers
 *     (x-amz-sns-message-type, x-amz-sns-message-id, x-amz-sns-topic-arn, x-amz-sns-subscription-arn
 *     on a Notification and an UnsubscribeConfirmation — a SubscriptionConfirmation has no
 *     subscription yet — `Content-Type: text/plain; charset=UTF-8`, `User-Agent: Amazon Simple
 *     Notification Service Agent`), the three bodies and their key order, written as `"Key" : "Value"`
 *     pretty-printed; MessageId is the same on every retry of a message.
 *   - docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html: what is signed
 *     (providers/sns-signature.ts), and that a receiver fetches the certificate only from an
 *     https URL on an SNS host (sns.<region>.amazonaws.com) — the pin that stops a forged
 *     SigningCertURL. In hookdrill's test mode that host is the local SNS host
 *     (HOOKDRILL_SNS_HOST; providers/sns-certificate.ts), which send and check serve for their run.
 *   - docs.aws.amazon.com/sns/latest/dg/SendMessageToHttp.confirm.html and
 *     sns-http-https-endpoint-as-subscriber.html: SNS sends nothing to an endpoint until it confirms
 *     the SubscriptionConfirmation by visiting SubscribeURL (a GET) or calling ConfirmSubscription
 *     with Token; check judges that visit.
 *   - docs.aws.amazon.com/sns/latest/dg/SendMessageToHttp.retry.html: "by default, if the initial
 *     delivery of the message fails, Amazon SNS attempts up to three retries with a delay between
 *     failed attempts set at 20 seconds"; sns-message-delivery-retries.html: a delivery policy
 *     may change that (at most 3,600 s in all), with jitter; SNS delivers at least once.
 *   - sns-validator (npm, AWS's JavaScript validator) index.js: what the official check accepts —
 *     the fields signed (not the bytes: a body written again verifies), SignatureVersion 1 or 2,
 *     no window on Timestamp, and the URL held to https, `.pem` and its hostPattern.
 *   - Not published: the per-attempt timeout of an HTTP/S delivery (15 s is chosen, said so in
 *     the profile), and raw message delivery (RawMessageDelivery true sends the Message alone as the
 *     body, unsigned, with x-amz-sns-rawdelivery: true) is not what this provider sends.
 */

const profile: TimingProfile = {
  name: 'sns',
  summary:
    'Amazon SNS HTTP/S: 3 retries 20s apart by default (its docs); the 15s timeout is chosen (SNS publishes none); a delivery policy may change both',
  published: false,
  timeoutMs: 15_000,
  retryDelaysMs: [20_000, 20_000, 20_000],
  maxRedirects: 0,
  retryAfterStatuses: [],
  stopStatuses: [],
};

const USER_AGENT = 'Amazon Simple Notification Service Agent';
/** Where a body's Signature goes before it is signed: the length of a 2048-bit RSA signature in base64, so a signature put in keeps every offset. */
const UNSIGNED = 'A'.repeat(344);

/** SNS's key order in a body, by message type (the docs' examples, as SNS writes them). */
const KEY_ORDER = [
  'Type',
  'MessageId',
  'Token',
  'TopicArn',
  'Subject',
  'Message',
  'SubscribeURL',
  'Timestamp',
  'SignatureVersion',
  'Signature',
  'SigningCertURL',
  'UnsubscribeURL',
  'MessageAttributes',
];

/** A body as SNS writes it: two-space indent, `"Key" : value`, its keys in SNS's order. */
function serializeSns(body: JsonObject): string {
  const keys = [...KEY_ORDER.filter((k) => k in body), ...Object.keys(body).filter((k) => !KEY_ORDER.includes(k))];
  return `{\n${keys.map((k) => `  ${JSON.stringify(k)} : ${JSON.stringify(body[k])}`).join(',\n')}\n}`;
}

const isConfirmation = (type: unknown) => type === 'SubscriptionConfirmation' || type === 'UnsubscribeConfirmation';

/** A Token as SNS writes one (256 hex characters), from one random number per event. */
function tokenOf(r: number): string {
  let out = '';
  for (let i = 0; out.length < 256; i++) out += createHash('sha256').update(`sns-token:${r}:${i}`).digest('hex');
  return out.slice(0, 256);
}

function subscribeUrl(host: string, topicArn: string, token: string): string {
  return `https://${host}/?Action=ConfirmSubscription&TopicArn=${topicArn}&Token=${token}`;
}

/** The key a receiver verifies with: the certificate, or the public half of a private key. */
function verifyingKeyOf(secret: string): KeyObject {
  const text = secret.trim();
  if (text.includes('BEGIN CERTIFICATE')) return new X509Certificate(text).publicKey;
  const key = text.includes('PRIVATE KEY') ? createPublicKey(createPrivateKey(text)) : createPublicKey(text);
  if (key.asymmetricKeyType !== 'rsa') throw new Error('not RSA');
  return key;
}

const verifiers = new Map<string, KeyObject>();
let stranger: string | undefined;

function bodyOf(rawBody: Buffer): JsonObject | undefined {
  const body = parseJson(rawBody);
  return isObject(body) ? body : undefined;
}

export const sns: Provider = {
  name: 'sns',
  title: 'Amazon SNS',
  // A field of the body: sign() writes it as this header and placeSignature puts it in the body.
  signatureHeader: 'Signature',
  signedHeaders: ['Signature'],
  timestamped: false,
  keyPair: true,
  rotation: false,
  contract: {
    batching: { events: 'one', source: 'docs.aws.amazon.com/sns/latest/dg/sns-message-and-json-formats.html: one message a POST' },
    resends: {
      events: 'on-failure',
      source:
        'docs.aws.amazon.com/sns/latest/dg/SendMessageToHttp.retry.html: up to three retries 20 s apart by default; a retry keeps the MessageId (sns-message-and-json-formats.html)',
    },
    endpointChecks: [
      {
        name: 'SubscriptionConfirmation',
        signed: true,
        answer: 'a GET of its SubscribeURL (or ConfirmSubscription with its Token): until then SNS sends the endpoint nothing',
        source: 'docs.aws.amazon.com/sns/latest/dg/SendMessageToHttp.confirm.html',
      },
    ],
    answer: {
      kind: 'status',
      source:
        'docs.aws.amazon.com/sns/latest/dg/sns-message-delivery-retries.html: a 2xx is a delivery; a failure is retried by the delivery policy',
    },
  },
  profiles: { sns: profile },
  defaultProfile: 'sns',
  verifier: {
    official: "sns-validator's MessageValidator.validate",
    officialVersions: 'sns-validator 0.3.5',
    // No window on Timestamp: the timestamp cases do not apply (timestamped is false).
    futureTimestamp: 'accepted',
    unheldTimestamp: 'Timestamp',
    parsesJson: true,
    // It verifies named fields of the parsed JSON: a body written again (whitespace) still verifies.
    verifiesParsedJson: true,
    // The signature's bytes edited, not its base64: two characters off a padded base64 value can
    // take only padding away (sns-validator decodes what is left to the same 256 bytes), so
    // "two characters short" is two hex digits — one byte — short.
    editSignatures: (v, edit) => Buffer.from(edit(Buffer.from(v, 'base64').toString('hex')), 'hex').toString('base64'),
    // SNS has no event types of its own; a subject no receiver knows is the nearest.
    unknownType: { path: ['Subject'], value: 'hookdrill_unknown_event' },
    signedUpTo(rawBody) {
      // Signed fields come first in SNS's order; SignatureVersion and after are not signed.
      const at = rawBody.indexOf('"SignatureVersion"');
      return at < 0 ? rawBody.length : at;
    },
  },

  ownKey: () => ownSnsKey(),
  publicKey: (privateKey) => snsCertificate(privateKey),
  publicKeyName: 'signing certificate',

  checkSecret(secret) {
    // Amazon's key is Amazon's: hookdrill signs with its own, and the SNS host serves that key's
    // certificate — a message signed with any other would name a certificate that does not verify it.
    let same = false;
    try {
      const given = createPublicKey(createPrivateKey(secret.trim())).export({ type: 'spki', format: 'der' });
      same = given.equals(createPublicKey(ownSnsKey()).export({ type: 'spki', format: 'der' }));
    } catch {
      same = false;
    }
    if (!same)
      throw new UsageError(
        "sns signs with hookdrill's own RSA key, whose certificate the SNS host serves: leave --secret out (`hookdrill keys sns` shows the certificate)",
      );
  },

  checkVerifyingKey(key) {
    try {
      verifyingKeyOf(key);
    } catch {
      throw new UsageError('sns: a receiver verifies with the signing certificate (PEM), as `hookdrill keys sns` prints it');
    }
  },

  sign(rawBody, secrets, ctx) {
    const body = bodyOf(rawBody);
    const type = typeof body?.Type === 'string' ? body.Type : ctx.eventType;
    const headers: OutgoingHeaders = {
      'x-amz-sns-message-type': type,
      'x-amz-sns-message-id': typeof body?.MessageId === 'string' ? body.MessageId : ctx.deliveryId,
    };
    if (typeof body?.TopicArn === 'string') headers['x-amz-sns-topic-arn'] = body.TopicArn;
    const subscription = subscriptionArnOf(body);
    if (subscription && type !== 'SubscriptionConfirmation') headers['x-amz-sns-subscription-arn'] = subscription;
    headers['Content-Type'] = 'text/plain; charset=UTF-8';
    headers['User-Agent'] = USER_AGENT;
    const [secret] = secrets;
    if (body && secret !== undefined) headers.Signature = snsSignature(body, secret.trim());
    return headers;
  },

  placeSignature(rawBody, headers) {
    const name = Object.keys(headers).find((h) => h.toLowerCase() === 'signature');
    const out = { ...headers };
    const signature = name === undefined ? undefined : out[name];
    if (name !== undefined) delete out[name];
    const text = rawBody.toString('utf8');
    const field = /"Signature"\s*:\s*"(?:[^"\\]|\\.)*"(\s*,)?/;
    // No signature given (check's missing-signature): the field goes, as an unsigned message has none.
    const placed =
      signature === undefined
        ? text.replace(/,?\s*"Signature"\s*:\s*"(?:[^"\\]|\\.)*"/, '')
        : text.replace(field, (_m, comma: string | undefined) => `"Signature" : ${JSON.stringify(signature)}${comma ?? ''}`);
    return { body: placed === text ? rawBody : Buffer.from(placed), headers: out };
  },

  async serve(o = {}) {
    const key = ownSnsKey();
    const cert = snsCertificate(key);
    const path = snsCertificatePath(cert);
    const host = await startSnsHost({ host: snsHost(), key, cert, files: { [path]: cert } }).catch(async (err: unknown) => {
      // send may share the host with another hookdrill run serving the same certificate (the same
      // keys): the receiver fetches the same bytes from it. check never shares: it watches the visits.
      if (o.share && (await servesCertificate(snsHost(), path, cert))) return undefined;
      throw err;
    });
    if (!host) return { host: snsHost(), visitOf: async () => undefined, close: async () => {} } satisfies ServedHost;
    const served: ServedHost = {
      host: host.host,
      visitOf: (token, ms) => host.visitOf(token, ms),
      close: () => host.close(),
      async forgedElsewhere(rawBody) {
        // The attacker's key and certificate, served on another host (localhost, not the SNS host's
        // address) over a TLS identity the receiver trusts — as an attacker's own domain has one.
        const attacker = strangerKey();
        const attackerCert = snsCertificate(attacker);
        const path = snsCertificatePath(attackerCert);
        const evil = await startSnsHost({ host: 'localhost:0', key, cert, files: { [path]: attackerCert } });
        const body = bodyOf(rawBody) ?? {};
        body.SigningCertURL = `https://${evil.host}${path}`;
        body.Signature = snsSignature(body, attacker);
        return { body: Buffer.from(serializeSns(body)), certUrl: body.SigningCertURL, close: () => evil.close() };
      },
    };
    return served;
  },

  // An UnsubscribeConfirmation comes after the subscription is gone: SNS sends nothing more and
  // acts on no answer, so a receiver may keep it or drop it. (sns-validator 0.3.5 also refuses it:
  // it verifies an UnsubscribeConfirmation without its Token, where AWS's docs sign Token for both
  // confirmations — hookdrill signs as the docs say.)
  isNotice: (body) => isObject(body) && body.Type === 'UnsubscribeConfirmation',

  async completeHandshake(rawBody) {
    const visit = sns.handshakeVisit?.(rawBody);
    if (!visit) return;
    const url = new URL(visit.url);
    // Pinned as the certificate is: a SubscribeURL elsewhere is never fetched (no request on a forger's behalf).
    if (url.protocol !== 'https:' || url.host !== snsHost()) throw new Error(`SubscribeURL is not on the SNS host ${snsHost()}`);
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpsGet(url, { ca: snsCertificate(ownSnsKey()), timeout: 5_000 }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
      req.on('timeout', () => req.destroy(new Error('SubscribeURL did not answer within 5 s')));
    });
    if (status < 200 || status >= 300) throw new Error(`SubscribeURL answered ${status}`);
  },

  servedAt: () => ({ host: snsHost(), hostVariable: 'HOOKDRILL_SNS_HOST', trustFile: snsCertificateFile() }),

  handshakeVisit(rawBody) {
    const body = bodyOf(rawBody);
    if (body?.Type !== 'SubscriptionConfirmation' || typeof body.Token !== 'string' || typeof body.SubscribeURL !== 'string')
      return undefined;
    return { token: body.Token, url: body.SubscribeURL, what: 'SubscribeURL' };
  },

  verify(rawBody, headers, secrets, opts = {}) {
    requireSecrets(secrets);
    // Everything SNS signs is in the body: the headers alone say nothing (a missing
    // x-amz-sns-message-type is no refusal of sns-validator's).
    void headers;
    if (opts.headersOnly) return;
    const body = bodyOf(rawBody);
    if (!body) throw new SignatureError('no_match', 'the body is not an SNS message (JSON)');
    if (typeof body.Signature !== 'string') throw new SignatureError('no_match', 'the message has no Signature');
    if (body.SignatureVersion !== '1' && body.SignatureVersion !== '2')
      throw new SignatureError('no_match', `SignatureVersion ${JSON.stringify(body.SignatureVersion)} is not 1 or 2`);
    const host = snsHost();
    if (!snsCertUrlAllowed(body.SigningCertURL, host))
      throw new SignatureError(
        'no_match',
        `SigningCertURL is not an https .pem URL on the SNS host ${host}: its certificate is not fetched`,
      );
    for (const secret of secrets) {
      let key: KeyObject;
      try {
        key = cachedKey(verifiers, secret, verifyingKeyOf);
      } catch {
        continue;
      }
      if (snsVerifies(body, key)) return;
    }
    throw new SignatureError('no_match', 'Signature does not verify with the signing certificate');
  },

  deliveryId(headers, rawBody) {
    const body = bodyOf(rawBody);
    return typeof body?.MessageId === 'string' ? body.MessageId : headerValue(headers, 'x-amz-sns-message-id');
  },

  eventTypeOf(headers, rawBody) {
    const body = bodyOf(rawBody);
    return typeof body?.Type === 'string' ? body.Type : headerValue(headers, 'x-amz-sns-message-type');
  },

  otherSecret() {
    return strangerKey();
  },

  serialize: serializeSns,

  freshFields(body: JsonObject) {
    const host = snsHost();
    const certUrl = `https://${host}${snsCertificatePath(snsCertificate(ownSnsKey()))}`;
    const topicArn = typeof body.TopicArn === 'string' ? body.TopicArn : 'arn:aws:sns:us-east-1:123456789012:hookdrill';
    const fields: { path: string[]; make: (now: number, r: number) => JsonValue; clock?: true }[] = [
      { path: ['MessageId'], make: () => randomUUID() },
      { path: ['Timestamp'], make: (now: number) => new Date(now).toISOString(), clock: true },
      { path: ['Signature'], make: () => UNSIGNED },
      { path: ['SigningCertURL'], make: () => certUrl },
    ];
    if (isConfirmation(body.Type)) {
      fields.push({ path: ['Token'], make: (_now, r) => tokenOf(r) });
      fields.push({ path: ['SubscribeURL'], make: (_now, r) => subscribeUrl(host, topicArn, tokenOf(r)) });
    }
    if (typeof body.UnsubscribeURL === 'string') {
      const arn = subscriptionArnOf(body) ?? `${topicArn}:${randomUUID()}`;
      fields.push({ path: ['UnsubscribeURL'], make: () => `https://${host}/?Action=Unsubscribe&SubscriptionArn=${arn}` });
    }
    return fields;
  },

  describe(body, fixtureName) {
    const b = isObject(body) ? body : undefined;
    return {
      eventType: typeof b?.Type === 'string' ? b.Type : fixtureName,
      ...(typeof b?.MessageId === 'string' ? { deliveryId: b.MessageId } : {}),
    };
  },

  newDeliveryId: randomUUID,
};

/**
 * The subscription a message is delivered to: UnsubscribeURL's SubscriptionArn on a notification;
 * on an unsubscribe confirmation, the ARN its Message names ("You have chosen to deactivate
 * subscription arn:…."). A subscription confirmation has none yet.
 */
function subscriptionArnOf(body: JsonObject | undefined): string | undefined {
  if (!body) return undefined;
  if (typeof body.UnsubscribeURL === 'string') {
    const m = /[?&]SubscriptionArn=([^&]+)/.exec(body.UnsubscribeURL);
    if (m?.[1]) return decodeURIComponent(m[1]);
  }
  if (body.Type === 'UnsubscribeConfirmation' && typeof body.Message === 'string') {
    const m = /subscription (arn:[^\s]+?)\.(?:\s|\\n|$)/.exec(body.Message);
    if (m?.[1]) return m[1];
  }
  return undefined;
}

/** Whether the host already serves this certificate at this path (another hookdrill run with the same keys). */
export function servesCertificate(host: string, path: string, cert: string): Promise<boolean> {
  return new Promise((resolve) => {
    const req = httpsGet(`https://${host}${path}`, { ca: cert, timeout: 2_000 }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
      });
      res.on('end', () => resolve(res.statusCode === 200 && text === cert));
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
  });
}

/** Another RSA key, made once a process: check's wrong-secret and the attacker of the forged-certificate case sign with it. */
function strangerKey(): string {
  stranger ??= generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  return stranger;
}
