import { randomBytes } from 'node:crypto';
import { checkDeclaration } from './declaration.js';
import { declaredProvider } from './declared.js';
import type { JsonObject, JsonValue, OutgoingHeaders, Provider, TimingProfile } from './types.js';
import { UsageError } from '../util/errors.js';
import { isObject, parseJson } from './util.js';

/**
 * Contentful webhooks, on the canonical scheme's request form (declaration-canonical-request.ts,
 * declared-canonical-request.ts). Sources:
 *   - contentful.com/developers/docs/webhooks/request-verification/ and @contentful/node-apps-toolkit
 *     3.16.1 (lib/requests: signRequest, verifyRequest): X-Contentful-Signature is the hex
 *     HMAC-SHA256, keyed with the signing secret's UTF-8 bytes, of "METHOD\nPATH\nHEADERS\nBODY",
 *     HEADERS the headers X-Contentful-Signed-Headers lists ("name:value", sorted, joined by ";"),
 *     the list and X-Contentful-Timestamp (Unix ms) always among them. The secret is exactly 64
 *     characters (the toolkit's SecretValidator). The toolkit refuses a timestamp once 30 s old
 *     (its default time to live, `>=`) and never one ahead: futureAccepted.
 *   - contentful.com/developers/docs/webhooks/overview/ ("Webhook payload" / headers):
 *     X-Contentful-Topic (`ContentManagement.Entry.publish`: the event type), X-Contentful-Webhook-
 *     Name, X-Contentful-Webhook-Request-Attempt, X-Contentful-Event-Datetime, X-Contentful-CRN, and
 *     Content-Type application/vnd.contentful.management.v1+json.
 *   - contentful.com/developers/changelog/idempotency-key-headers-for-webhook-requests:
 *     X-Contentful-Idempotency-Key, a unique SHA-256 (64 hex) per event, the same on every attempt;
 *     "in rare cases, webhooks can fire twice": the dedupe key.
 *   - contentful.com/developers/docs/webhooks/retry-policy: on a 429 or a 5xx, two more attempts,
 *     30 s apart; the Request-Attempt header counts them (1, 2, 3). The per-attempt timeout is not
 *     on that page: hookdrill uses 30 s (a Contentful community answer), said in the profile.
 *   - A recorded delivery (test/wire/recorded/contentful.json): a real Entry.publish captured on
 *     webhook.site (zfakhari/contentful-akamai-cms README, 2026): the X-Contentful-* headers and
 *     Content-Type in the order sent, no User-Agent and no Accept, a pretty-printed JSON body. Its
 *     webhook had no signing secret: the three signature headers' place is not recorded (hookdrill
 *     sends them last).
 *   - One event a request (batching none): the body is the entity itself (sys, fields, metadata).
 */

const profile: TimingProfile = {
  name: 'contentful',
  summary: 'Contentful: 2 more attempts 30s apart on 429/5xx (published); 30s timeout (not on the retry page: chosen)',
  published: true,
  timeoutMs: 30_000,
  retryDelaysMs: [30_000, 30_000],
  maxRedirects: 0,
  retryAfterStatuses: [],
  stopStatuses: [],
};

/** The three headers the signature adds, when the webhook has a signing secret. */
const SIGNATURE_HEADERS = ['X-Contentful-Signature', 'X-Contentful-Signed-Headers', 'X-Contentful-Timestamp'];

/** What Contentful names a webhook in X-Contentful-Webhook-Name: hookdrill's own. */
export const CONTENTFUL_WEBHOOK_NAME = 'hookdrill';

/** The entity's CRN, as X-Contentful-CRN carries it: crn:contentful:::content:spaces/<s>/environments/<e>/<kind>/<id>. */
export function contentfulCrn(body: JsonValue | undefined): string | undefined {
  if (!isObject(body) || !isObject(body.sys)) return undefined;
  const sys = body.sys;
  const linked = (v: JsonValue | undefined) => (isObject(v) && isObject(v.sys) && typeof v.sys.id === 'string' ? v.sys.id : undefined);
  const space = linked(sys.space);
  const env = linked(sys.environment) ?? 'master';
  const kind = { Entry: 'entries', DeletedEntry: 'entries', Asset: 'assets', DeletedAsset: 'assets', ContentType: 'content_types' }[
    String(sys.type)
  ];
  if (!space || !kind || typeof sys.id !== 'string') return undefined;
  return `crn:contentful:::content:spaces/${space}/environments/${env}/${kind}/${sys.id}`;
}

const base = declaredProvider(
  checkDeclaration(
    'contentful',
    {
      title: 'Contentful',
      signature: {
        scheme: 'canonical',
        header: 'X-Contentful-Signature',
        algorithm: 'sha256',
        encoding: 'hex',
        content: '{method}\n{path}\n{headers}\n{body}',
        signedHeaders: 'X-Contentful-Signed-Headers',
      },
      timestamp: { header: 'X-Contentful-Timestamp', unit: 'ms', tolerance: '30s' },
      id: { header: 'X-Contentful-Idempotency-Key' },
      eventType: { header: 'X-Contentful-Topic' },
      contentType: 'application/vnd.contentful.management.v1+json',
      timeout: '30s',
    },
    'src/providers/contentful.ts',
    '.',
  ),
  {
    futureAccepted: true,
    profiles: { contentful: profile },
    defaultProfile: 'contentful',
    contract: {
      batching: {
        events: 'one',
        source: 'contentful.com/developers/docs/webhooks/overview: one request per event, the body the entity (sys, fields)',
      },
      resends: {
        events: 'on-failure',
        source:
          'contentful.com/developers/docs/webhooks/retry-policy: two more attempts 30 s apart on 429 or 5xx; changelog idempotency-key-headers-for-webhook-requests: "in rare cases, webhooks can fire twice", the same X-Contentful-Idempotency-Key',
      },
      endpointChecks: [],
      answer: { kind: 'status', source: 'contentful.com/developers/docs/webhooks/retry-policy: a 2xx ends the delivery' },
      related: {
        about: 'an entry published, then unpublished',
        first: 'ContentManagement.Entry.publish',
        next: 'ContentManagement.Entry.unpublish',
        path: ['sys', 'id'],
        dedupeOn: 'X-Contentful-Idempotency-Key',
        source: 'contentful.com/developers/docs/webhooks/overview: one entry, a topic per action',
      },
    },
    verifier: {
      official: "@contentful/node-apps-toolkit's verifyRequest",
      futureTimestamp: 'accepted',
      parsesJson: false,
      unknownType: { eventName: 'ContentManagement.Hookdrill.unknown' },
    },
    // "a unique SHA256 hash for each event" (the changelog): 64 hex digits.
    newDeliveryId: () => randomBytes(32).toString('hex'),
    freshFields(_body: JsonObject) {
      return [];
    },
  },
);

/** The headers before the signature's, in the recorded delivery's order. */
const ORDER = [
  'X-Contentful-Topic',
  'X-Contentful-Webhook-Name',
  'X-Contentful-Webhook-Request-Attempt',
  'X-Contentful-Event-Datetime',
  'Content-Type',
  'X-Contentful-CRN',
  'X-Contentful-Idempotency-Key',
];

export const contentful: Provider = {
  ...base,
  checkSecret(secret) {
    // The toolkit's SecretValidator: "Invalid secret length. Expected 64 characters".
    if (secret.length !== 64) throw new UsageError('contentful: the signing secret is exactly 64 characters, as Contentful makes them');
  },
  sign(rawBody, secrets, ctx) {
    const signed = base.sign(rawBody, secrets, ctx);
    const value = (name: string) => Object.entries(signed).find(([k]) => k.toLowerCase() === name.toLowerCase())?.[1];
    const crn = contentfulCrn(parseJson(rawBody));
    const extra: Record<string, string | undefined> = {
      'X-Contentful-Webhook-Name': CONTENTFUL_WEBHOOK_NAME,
      'X-Contentful-Webhook-Request-Attempt': '1',
      'X-Contentful-Event-Datetime': new Date(ctx.nowMs).toISOString(),
      'X-Contentful-CRN': crn,
    };
    const out: OutgoingHeaders = {};
    for (const name of [...ORDER, ...SIGNATURE_HEADERS]) {
      const v = extra[name] ?? value(name);
      if (v !== undefined) out[name] = v;
    }
    return out;
  },
  // A retry is the next attempt, counted from 1 (the retry policy: three attempts in all).
  retryHeaders(retryNum) {
    return { 'X-Contentful-Webhook-Request-Attempt': String(retryNum + 1) };
  },
};
