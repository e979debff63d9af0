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
 *   - Not sent: square-initial-delivery-timestamp (the first attempt's time, which a re-signed
 *     retry here does not carry); not published: the headers' order, a user agent.
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

export const square: Provider = declaredProvider(
  checkDeclaration(
    'square',
    {
      title: 'Square',
      signature: { header: 'x-square-hmacsha256-signature', algorithm: 'sha256', encoding: 'base64', content: '{url}{body}' },
      id: { body: 'event_id' },
      eventType: { body: 'type' },
      headers: {
        'Content-Type': 'application/json',
        'square-environment': 'Production',
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
