import { checkDeclaration } from './declaration.js';
import { declaredProvider } from './declared.js';
import type { JsonObject, Provider, TimingProfile } from './types.js';
import { HOUR, MINUTE, isObject, randomAlnum } from './util.js';

/**
 * Mailgun's event webhooks, on the declaration engine's body scheme (providers/declared-body.ts):
 * the signature is not a header but a field of the body. Sources:
 *   - documentation.mailgun.com/docs/mailgun/user-manual/webhooks/securing-webhooks: the body's
 *     `signature: {token, timestamp, signature}` — token "randomly generated string with length of
 *     50", timestamp in seconds, signature the hex HMAC-SHA256 of timestamp + token (no separator)
 *     keyed by the HTTP webhook signing key. A receiver "optionally" caches the token to refuse
 *     replays and "optionally" checks the timestamp, "not too aggressive" (delays outside
 *     Mailgun's control). The docs' Node snippet is the whole of the documented check:
 *     createHmac('sha256', signingKey).update(timestamp.concat(token)).digest('hex') === signature.
 *     Mailgun publishes no verifier (mailgun.js 14 has none): that check is the judge. It covers
 *     neither `event-data` nor anything else of the body.
 *   - documentation.mailgun.com/docs/mailgun/user-manual/webhooks/webhook-retries: a 200 is
 *     success, a 406 a refusal not retried; any other answer is retried "during 8 hours" after 5
 *     minutes, 10 minutes, 15 minutes, 1 hour, 2 hours and 4 hours — "other than for delivery
 *     notification" (a `delivered` event is not retried). help.mailgun.com article 202236504 gives an
 *     older list (10 m, 10 m, 15 m, 30 m, 1 h, 2 h, 4 h); the current docs' is taken.
 *   - hookdeck/webhook-skills, skills/mailgun-webhooks/references/verification.md: "The signature
 *     object is identical on every retry of the same event" — the same timestamp and token on
 *     every attempt (Mailgun's docs do not say): so a retry's timestamp is as old as the delivery,
 *     up to 7½ hours, and a receiver that refuses a timestamp of more than minutes refuses
 *     Mailgun's own retries (Provider.signedOnce; check's late-retry).
 *   - A recorded delivery (test/wire/recorded/mailgun.json): a Mailgun delivery's headers as
 *     RequestBin logged them (content-type application/json, accept-encoding gzip, accept (any type),
 *     user-agent mailgun/treq-16.12.0) and Mailgun's "Test webhook" body with its signature.
 *   - One event a request; `event-data.id` is the event's id (the Events API's, "each event has its
 *     own unique ID", mailgun.com blog "Same API, New Tricks"), `event-data.event` its type:
 *     accepted, delivered, failed (severity permanent or temporary), opened, clicked,
 *     unsubscribed, complained (mailgun.js's WebhooksIds: clicked, opened, unsubscribe, delivered,
 *     permanent_fail, temporary_fail, complained, accepted — the webhooks they are sent to).
 *   - Not published: the timeout (10 s chosen) and the body's layout (compact JSON sent).
 */

const profile: TimingProfile = {
  name: 'mailgun',
  summary:
    "Mailgun: retries after 5m, 10m, 15m, 1h, 2h and 4h (Mailgun's docs: 8 hours), a 406 ends them; 10s timeout (unpublished: chosen)",
  published: true,
  timeoutMs: 10_000,
  retryDelaysMs: [5 * MINUTE, 10 * MINUTE, 15 * MINUTE, HOUR, 2 * HOUR, 4 * HOUR],
  maxRedirects: 0,
  retryAfterStatuses: [],
  stopStatuses: [406],
};

/** Mailgun's user agent in a recorded delivery (RequestBin, May 2021). */
export const MAILGUN_USER_AGENT = 'mailgun/treq-16.12.0';

/** An event id as Mailgun writes them: 22 characters of URL-safe base64 ("Fs7-5t81S2ispqxqDw2U4Q"). */
const eventId = () => randomAlnum(22, 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_');

const base = declaredProvider(
  checkDeclaration(
    'mailgun',
    {
      title: 'Mailgun',
      signature: {
        scheme: 'body',
        field: 'signature.signature',
        algorithm: 'sha256',
        encoding: 'hex',
        content: '{body.signature.timestamp}{body.signature.token}',
        timestamp: 'signature.timestamp',
        token: 'signature.token',
      },
      id: { body: 'event-data.id' },
      eventType: { body: 'event-data.event' },
      headers: {
        'Content-Type': 'application/json',
        'Accept-Encoding': 'gzip',
        Accept: '*/*',
        'User-Agent': MAILGUN_USER_AGENT,
      },
      timeout: '10s',
      retries: ['5m', '10m', '15m', '1h', '2h', '4h'],
    },
    'src/providers/mailgun.ts',
    '.',
  ),
  {
    profiles: { mailgun: profile },
    defaultProfile: 'mailgun',
    signedOnce: {
      source:
        'hookdeck/webhook-skills, mailgun-webhooks verification reference: "The signature object is identical on every retry of the same event"',
    },
    contract: {
      batching: { events: 'one', source: 'documentation.mailgun.com, webhooks: one event-data a request' },
      resends: {
        events: 'on-failure',
        never: ['delivered'],
        source:
          'documentation.mailgun.com/docs/mailgun/user-manual/webhooks/webhook-retries: every answer but 200 and 406 retried after 5 m, 10 m, 15 m, 1 h, 2 h, 4 h, "other than for delivery notification"; each retry carries the first signature (hookdeck/webhook-skills, mailgun-webhooks verification reference)',
      },
      endpointChecks: [],
      answer: {
        kind: 'status',
        only: 200,
        source:
          'documentation.mailgun.com/docs/mailgun/user-manual/webhooks/webhook-retries: 200 is success, 406 a refusal not retried, "any other code" retried',
      },
      related: {
        about: 'a message opened, then clicked',
        first: 'opened',
        next: 'clicked',
        path: ['event-data', 'message', 'headers', 'message-id'],
        dedupeOn: 'event-data.id',
        source: 'documentation.mailgun.com, events: each event of one message (message.headers.message-id) has its own id',
      },
    },
    verifier: {
      official:
        "Mailgun's documented check (the hex HMAC-SHA256 of signature.timestamp + signature.token with the webhook signing key; Mailgun publishes no verifier)",
      futureTimestamp: 'refused', // no window: the timestamp cases do not apply
      parsesJson: true,
      unknownType: { path: ['event-data', 'event'], value: 'hookdrill_unknown_event' },
    },
    freshFields(body: JsonObject) {
      const data = isObject(body['event-data']) ? body['event-data'] : undefined;
      if (!data) return [];
      return [
        ...(typeof data.id === 'string' ? [{ path: ['event-data', 'id'], make: eventId }] : []),
        ...(typeof data.timestamp === 'number'
          ? [{ path: ['event-data', 'timestamp'], make: (now: number) => now / 1000, clock: true as const }]
          : []),
      ];
    },
  },
);

export const mailgun: Provider = base;
