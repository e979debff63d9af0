import { createHmac } from 'node:crypto';
import { checkDeclaration } from './declaration.js';
import { declaredProvider } from './declared.js';
import type { JsonObject, Provider, TimingProfile } from './types.js';
import { MINUTE, randomAlnum, timeLike } from './util.js';

/**
 * Square, a URL-bound provider on the declaration engine (providers/declared.ts). Sources:
 *   - https://developer.squareup.com/docs/webhooks/step3validate and the `square` SDK's
 *     WebhooksHelper.verifySignature (wrapper/WebhooksHelper.js): `x-square-hmacsha256-signature`
 *     is the base64 HMAC-SHA256, keyed with the subscription's signature key as text, of the
 *     notification URL *as registered* followed by the raw body. No timestamp is signed. A
 *     receiver behind a proxy must verify over the URL Square posts to, not the one it sees.
 *   - https://developer.squareup.com/docs/webhooks/step2subscribe: the metadata headers
 *     square-environment (Production or Sandbox), square-initial-delivery-timestamp,
 *     square-retry-number and square-retry-reason (the last two on retries only).
 *   - https://developer.squareup.com/docs/webhooks-api/delivery-sla: answer 2xx within 10
 *     seconds (a 3xx is a failure); retries after 1, 2, 4, 8, 16 and 32 minutes, then every 60
 *     minutes, for up to 72 hours after the event.
 *   - https://developer.squareup.com/docs/webhooks/step4manage: dedupe on the body's `event_id`.
 *   - step2subscribe again: square-initial-delivery-timestamp is "the time of the initial
 *     notification delivery, as an RFC 3339 timestamp": the first attempt's, on every attempt.
 *   - A live sandbox delivery (hookdeck/webhook-skills PR #176, 2026-08, its
 *     skills/square-webhooks/references/overview.md and verification.md): beside the SHA-256
 *     signature Square still sends the legacy `x-square-signature`, the base64 HMAC-SHA1 of the
 *     same notification URL + body with the same key (the square SDK's helper does not read it;
 *     receivers written before the SHA-256 header do), `square-version` (the API version pinned
 *     on the subscription), `square-subscription-id`, and `user-agent: Square Connect v2`. Not
 *     published: the headers' order (test/wire/square.json holds names and values only).
 */

/** 1, 2, 4, 8, 16, 32 minutes, then hourly to 72 hours after the event: 78 retries (Square's table). */
const DELAYS = [1, 2, 4, 8, 16, 32].map((m) => m * MINUTE).concat(Array.from({ length: 72 }, () => 60 * MINUTE));

const production: TimingProfile = {
  name: 'square',
  summary: "Square: answer 2xx within 10s; retries after 1m, 2m, 4m … 32m, then hourly to 72h (Square's table)",
  published: true,
  timeoutMs: 10_000,
  retryDelaysMs: DELAYS,
  maxRedirects: 0,
  retryAfterStatuses: [],
  stopStatuses: [],
};

/** Square's ids: event ids are UUIDs; merchants and locations 13 to 15 upper-case characters. */
const uuid = () =>
  `${randomAlnum(8, '0123456789abcdef')}-${randomAlnum(4, '0123456789abcdef')}-4${randomAlnum(3, '0123456789abcdef')}-a${randomAlnum(3, '0123456789abcdef')}-${randomAlnum(12, '0123456789abcdef')}`;

/**
 * The API version the subscription is pinned to (square-version): the one hookdrill's catalogue is
 * built for, the `square` SDK 46's default (BaseClient.js, "Square-Version": "2026-09-16").
 */
export const SQUARE_VERSION = '2026-09-16';
/** A webhook subscription's id, as the Webhook Subscriptions API's example writes one (the square SDK's legacy/doc/models/create-webhook-subscription-response.md). */
const SUBSCRIPTION_ID = 'wbhk_b35f6b3145074cf9ad513610786c19d5';

/** Square's legacy x-square-signature: the base64 HMAC-SHA1 of the notification URL + the body, keyed as the SHA-256 one. */
export function squareSha1(secret: string, url: string, rawBody: Buffer): string {
  return createHmac('sha1', secret).update(url).update(rawBody).digest('base64');
}

const base: Provider = declaredProvider(
  checkDeclaration(
    'square',
    {
      title: 'Square',
      signature: { header: 'x-square-hmacsha256-signature', algorithm: 'sha256', encoding: 'base64', content: '{url}{body}' },
      id: { body: 'event_id' },
      eventType: { body: 'type' },
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': 'Square Connect v2',
        'square-environment': 'Production',
        'square-subscription-id': SUBSCRIPTION_ID,
        'square-version': SQUARE_VERSION,
        'x-square-hmacsha256-signature': '{signature}',
      },
      timeout: '10s',
    },
    'src/providers/square.ts',
    '.',
  ),
  {
    profiles: { square: production },
    contract: {
      batching: { events: 'one', source: 'developer.squareup.com/docs/webhooks/overview: one event notification a request' },
      resends: { events: 'on-failure', source: 'developer.squareup.com/docs/webhooks/overview#retries: for up to 72 hours' },
      endpointChecks: [],
      answer: { kind: 'status', source: 'developer.squareup.com/docs/webhooks/overview: a 2xx within 10 seconds' },
      related: {
        about: 'a payment created, then updated',
        first: 'payment.created',
        next: 'payment.updated',
        path: ['data', 'id'],
        dedupeOn: 'event_id',
        source:
          'developer.squareup.com/docs/webhooks/step3validate: "use the event_id … to deduplicate"; payment.created, then payment.updated about one payment',
      },
    },
    defaultProfile: 'square',
    verifier: {
      official: "square's WebhooksHelper.verifySignature",
      parsesJson: false,
      // An unsigned or badly signed request lacks or breaks it too; one verified alone is a warning.
      legacySignature: {
        header: 'x-square-signature',
        scheme: 'HMAC-SHA1 of the notification URL and the body',
        advice:
          "Square's docs no longer name it (they document x-square-hmacsha256-signature alone) and SHA-1 is the weaker hash: it may stop without notice",
      },
      unknownType: { path: ['type'], value: 'hookdrill.unknown_event_type' },
    },
    retryHeaders: (n, reason) => ({ 'square-retry-number': String(n), 'square-retry-reason': reason }),
    freshFields(body: JsonObject) {
      return [
        ...(typeof body.event_id === 'string' ? [{ path: ['event_id'], make: uuid }] : []),
        ...(typeof body.created_at === 'string'
          ? [{ path: ['created_at'], make: (now: number) => timeLike(now, body.created_at as string), clock: true as const }]
          : []),
      ];
    },
  },
);

export const square: Provider = {
  ...base,
  signedHeaders: [...base.signedHeaders, 'x-square-signature'],
  sign(rawBody, secrets, ctx) {
    const headers = base.sign(rawBody, secrets, ctx);
    const [secret] = secrets;
    return {
      ...headers,
      // The first attempt's moment, the same on every retry of the delivery.
      'square-initial-delivery-timestamp': new Date(ctx.firstAttemptMs ?? ctx.nowMs).toISOString(),
      ...(secret === undefined ? {} : { 'x-square-signature': squareSha1(secret, ctx.url ?? '', rawBody) }),
    };
  },
};
