import { checkDeclaration } from './declaration.js';
import { declaredProvider } from './declared.js';
import type { JsonObject, JsonValue, Provider, TimingProfile } from './types.js';
import { MINUTE, isObject, randomAlnum } from './util.js';

/**
 * LINE's Messaging API webhooks, a provider on the declaration engine (providers/declared.ts). Sources:
 *   - https://developers.line.biz/en/reference/messaging-api/#signature-validation: `x-line-signature`
 *     is the base64 HMAC-SHA256 of the request body, keyed with the channel secret; no timestamp.
 *   - https://developers.line.biz/en/reference/messaging-api/#request-body: `{ destination, events }`;
 *     each event carries `webhookEventId` (a ULID, the same on redelivery: what to dedupe on),
 *     `timestamp` (Unix ms), `mode` and `deliveryContext.isRedelivery`.
 *   - @line/bot-sdk (validate-signature.ts): validateSignature(body, channelSecret, signature), a
 *     constant-time comparison of the base64 digest; the SDK's middleware parses the body after.
 *   - https://developers.line.biz/en/docs/messaging-api/receiving-messages/#webhook-redelivery:
 *     redelivery is off unless the channel turns it on; a redelivered event has
 *     `deliveryContext.isRedelivery: true`. Not published: the timeout, the redelivery intervals
 *     and how long LINE keeps trying (10 s; 1, 5, 15, 30, 60 minutes chosen here), the headers' order.
 * A body may hold several events; hookdrill sends one event a body, keyed on its webhookEventId.
 * A redelivery here re-sends the same bytes: LINE's sets `isRedelivery` true, which hookdrill does
 * not (yet) write into the retried body.
 */

const noRedelivery: TimingProfile = {
  name: 'line',
  summary: 'LINE: webhook redelivery off (the default, published): a failed webhook is lost; 10s timeout (chosen: not published)',
  published: false,
  timeoutMs: 10_000,
  retryDelaysMs: [],
  maxRedirects: 0,
  retryAfterStatuses: [],
  stopStatuses: [],
};

const redelivery: TimingProfile = {
  ...noRedelivery,
  name: 'line-redelivery',
  summary:
    'LINE with webhook redelivery on: the same webhookEventId again, isRedelivery true; at 1m, 5m, 15m, 30m, 1h (chosen: LINE publishes no intervals); 10s timeout (chosen)',
  retryDelaysMs: [1, 5, 15, 30, 60].map((m) => m * MINUTE),
};

/** LINE's webhook event ids: ULIDs (01FZ74A0TDDPYRVKNK77XKC3ZR). */
const ulid = () => `01${randomAlnum(24, '0123456789ABCDEFGHJKMNPQRSTVWXYZ')}`;

/** The first event of the body: the one hookdrill sends (a body of several is LINE's, never ours). */
export const line: Provider = declaredProvider(
  checkDeclaration(
    'line',
    {
      title: 'LINE',
      signature: { header: 'x-line-signature', algorithm: 'sha256', encoding: 'base64', content: '{body}' },
      id: { body: 'events.0.webhookEventId' },
      eventType: { body: 'events.0.type' },
      headers: { 'Content-Type': 'application/json; charset=utf-8', 'User-Agent': 'LineBotWebhook/2.0', 'x-line-signature': '{signature}' },
      timeout: '10s',
    },
    'src/providers/line.ts',
    '.',
  ),
  {
    profiles: { line: noRedelivery, 'line-redelivery': redelivery },
    contract: {
      batching: {
        events: 'list',
        path: ['events'],
        max: 100,
        id: ['webhookEventId'],
        type: ['type'],
        typical: 3,
        source:
          'developers.line.biz/en/reference/messaging-api/#request-body: "events" may hold several events (the most is not published: 100 chosen)',
      },
      resends: {
        events: 'opt-in',
        source: 'developers.line.biz/en/docs/messaging-api/receiving-messages/#webhook-redelivery: off unless the channel turns it on',
      },
      redelivery: {
        path: ['deliveryContext', 'isRedelivery'],
        becomes: 'true',
        first: false,
        source: "@line/bot-sdk's DeliveryContext: isRedelivery, true on a redelivered event",
      },
      endpointChecks: [
        {
          name: 'Verify',
          signed: true,
          request: 'empty-batch',
          answer: "a 200 to a body whose events list is empty (the console's Verify button)",
          source: 'developers.line.biz/en/reference/messaging-api/#response: the Verify request holds no events and wants 200',
        },
      ],
      answer: { kind: 'status', source: 'developers.line.biz/en/reference/messaging-api/#response: return 200' },
      related: {
        about: 'two messages from one user',
        first: 'message.text',
        next: 'message.text',
        path: ['source', 'userId'],
        dedupeOn: 'webhookEventId',
        source:
          "developers.line.biz/en/docs/messaging-api/receiving-messages/: each event has its own webhookEventId, to tell redeliveries apart; a user's every message is an event with the same source.userId",
      },
    },
    defaultProfile: 'line',
    verifier: {
      official: "@line/bot-sdk's validateSignature",
      // The SDK's middleware parses the body it validated (a body that is not JSON is its error).
      parsesJson: true,
      parsedBy: "@line/bot-sdk's middleware",
      unknownType: { path: ['events', '0', 'type'], value: 'hookdrill_unknown_event_type' },
    },
    freshFields(body: JsonObject) {
      // Every event of the body: a captured batch sent again is new events, each with its own id.
      const events: JsonValue[] = Array.isArray(body.events) ? body.events : [];
      return events.flatMap((e, i) =>
        isObject(e)
          ? [
              ...(typeof e.webhookEventId === 'string' ? [{ path: ['events', i, 'webhookEventId'], make: ulid }] : []),
              ...(typeof e.timestamp === 'number'
                ? [{ path: ['events', i, 'timestamp'], make: (now: number) => now, clock: true as const }]
                : []),
            ]
          : [],
      );
    },
  },
);
