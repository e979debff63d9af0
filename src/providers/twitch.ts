import { randomUUID } from 'node:crypto';
import { checkDeclaration } from './declaration.js';
import { declaredProvider } from './declared.js';
import type { JsonObject, JsonValue, OutgoingHeaders, Provider, TimingProfile } from './types.js';
import { UsageError } from '../util/errors.js';
import { MINUTE, isObject, parseJson, randomAlnum } from './util.js';

/**
 * Twitch EventSub over the webhook transport, on the declaration engine (providers/declared.ts)
 * with its challenge handshake (providers/handshake.ts). Sources:
 *   - dev.twitch.tv/docs/eventsub/handling-webhook-events ("List of request headers", "Verifying
 *     the event message"): `Twitch-Eventsub-Message-Signature: sha256=` + the hex HMAC-SHA256,
 *     keyed with the subscription's secret, of Message-Id + Message-Timestamp + the raw body;
 *     `Twitch-Eventsub-Message-Type` is notification, webhook_callback_verification or revocation;
 *     `-Message-Retry` counts the attempts before this one; `-Subscription-Type` and `-Version` name
 *     the subscription. "All timestamps are in RFC3339 format and use nanoseconds instead of
 *     milliseconds" — real deliveries carry 9 digits ("2021-03-19T23:51:24.637747359Z",
 *     romanzipp/Laravel-Twitch#81) or 3 ("2021-04-11T09:49:55.813Z", #87): the signature covers
 *     the text as sent, whatever its digits.
 *   - "Guarding against replay attacks": reject a message whose timestamp is older than 10
 *     minutes, and one whose Message-Id was seen already — one-sided: a timestamp ahead is not
 *     refused (futureAccepted).
 *   - "Responding to a challenge request": the first message after subscribing is a signed
 *     webhook_callback_verification whose body holds `challenge`; the answer is 200 with the raw
 *     challenge value as the body (the docs' sample: Content-Type text/plain), else the
 *     subscription stays pending and no event is sent. "Before handling any message, you must make
 *     sure that Twitch sent it": a receiver that echoes an unverified challenge verifies a
 *     stranger's subscription to its URL.
 *   - dev.twitch.tv/docs/eventsub ("Handling duplicate events"): sent at least once — resent when
 *     Twitch is unsure it arrived, under the same Message-Id: dedupe on it.
 *   - "You must respond to notification requests within a few seconds … too many times, the
 *     subscription's status changes to notification_failures_exceeded and Twitch revokes the
 *     subscription": the revocation message, a body with `subscription` and no `event`.
 *   - Create EventSub Subscription (dev.twitch.tv/docs/api/reference#create-eventsub-subscription):
 *     the secret is ASCII, 10 to 100 characters.
 *   - A recorded delivery: romanzipp/Laravel-Twitch#81, a real webhook_callback_verification's
 *     headers (`User-Agent: Go-http-client/1.1`, `Content-Type: application/json`, the Twitch-
 *     Eventsub-* headers in Go's canonical casing), its body the docs' challenge example.
 *   - Not published: the retry schedule and the exact timeout ("a few seconds"): hookdrill chooses
 *     3 s and retries after 10 s, 1 min and 5 min (said in the profile), and sends the headers in
 *     the order Go's net/http writes a request's own (sorted by name).
 */

const profile: TimingProfile = {
  name: 'twitch',
  summary: 'Twitch EventSub: answer within "a few seconds" (3s chosen); retries unpublished (10s, 1m, 5m chosen), same Message-Id',
  published: false,
  timeoutMs: 3_000,
  retryDelaysMs: [10_000, MINUTE, 5 * MINUTE],
  maxRedirects: 0,
  retryAfterStatuses: [],
  stopStatuses: [],
};

/** A real delivery's User-Agent: Twitch sends with Go's net/http client (romanzipp/Laravel-Twitch#81). */
export const TWITCH_USER_AGENT = 'Go-http-client/1.1';

/** Twitch-Eventsub-Message-Type of a body: the challenge, a revocation (a subscription and no event), or a notification. */
export function twitchMessageType(body: JsonValue | undefined): 'notification' | 'webhook_callback_verification' | 'revocation' {
  if (!isObject(body)) return 'notification';
  if (typeof body.challenge === 'string') return 'webhook_callback_verification';
  if (isObject(body.subscription) && body.event === undefined && body.events === undefined) return 'revocation';
  return 'notification';
}

const base = declaredProvider(
  checkDeclaration(
    'twitch',
    {
      title: 'Twitch',
      signature: {
        header: 'Twitch-Eventsub-Message-Signature',
        algorithm: 'sha256',
        encoding: 'hex',
        content: '{id}{timestamp}{body}',
        value: 'sha256={signature}',
      },
      timestamp: { header: 'Twitch-Eventsub-Message-Timestamp', unit: 'rfc3339', tolerance: '10m' },
      id: { header: 'Twitch-Eventsub-Message-Id' },
      eventType: { body: 'subscription.type' },
      headers: {
        'User-Agent': TWITCH_USER_AGENT,
        'Content-Type': 'application/json',
        'Twitch-Eventsub-Message-Id': '{id}',
        'Twitch-Eventsub-Message-Retry': '0',
        'Twitch-Eventsub-Message-Signature': '{signature}',
        'Twitch-Eventsub-Message-Timestamp': '{timestamp}',
      },
      timeout: '3s',
      handshake: { name: 'webhook_callback_verification', challenge: 'challenge', answer: 'text' },
    },
    'src/providers/twitch.ts',
    '.',
  ),
  {
    futureAccepted: true,
    profiles: { twitch: profile },
    defaultProfile: 'twitch',
    contract: {
      batching: {
        events: 'one',
        source: 'dev.twitch.tv/docs/eventsub/handling-webhook-events#processing-an-event: one event a notification',
      },
      resends: {
        events: 'on-failure',
        source:
          'dev.twitch.tv/docs/eventsub#handling-duplicate-events: resent when Twitch is unsure it arrived, the same Message-Id (Twitch-Eventsub-Message-Retry counts the attempts); the schedule is unpublished',
      },
      endpointChecks: [
        {
          name: 'webhook_callback_verification',
          signed: true,
          answer: '200 with the raw challenge value as the body (text/plain), only once the request verifies',
          unverified:
            'anyone with a Twitch app can point a subscription at your URL, and your echo enables it: Twitch then delivers their events to you, signed with their secret',
          source:
            'dev.twitch.tv/docs/eventsub/handling-webhook-events#responding-to-a-challenge-request; "Before handling any message, you must make sure that Twitch sent it"',
        },
      ],
      answer: {
        kind: 'status',
        source:
          'dev.twitch.tv/docs/eventsub/handling-webhook-events: a 2XX within a few seconds, or the subscription becomes notification_failures_exceeded and is revoked',
      },
      related: {
        about: 'a stream went online, then offline',
        first: 'stream.online',
        next: 'stream.offline',
        path: ['event', 'broadcaster_user_id'],
        dedupeOn: 'Twitch-Eventsub-Message-Id',
        source:
          'dev.twitch.tv/docs/eventsub/eventsub-subscription-types#stream-online and #stream-offline: one broadcaster, two notifications',
      },
    },
    verifier: {
      official:
        "Twitch's documented verification (dev.twitch.tv/docs/eventsub/handling-webhook-events#verifying-the-event-message; Twitch publishes no library)",
      futureTimestamp: 'accepted',
      parsesJson: false,
      unknownType: { path: ['subscription', 'type'], value: 'hookdrill.unknown_type' },
    },
    newDeliveryId: randomUUID,
    freshFields(body: JsonObject) {
      const event = isObject(body.event) ? body.event : undefined;
      return [
        // A new challenge every time Twitch asks, as its subscriptions do.
        ...(typeof body.challenge === 'string' ? [{ path: ['challenge'], make: () => randomAlnum(32).toLowerCase() }] : []),
        // A stream's own id (stream.online's event.id): each send a new stream.
        ...(typeof event?.id === 'string'
          ? [{ path: ['event', 'id'], make: (_now: number, r: number) => String(10_000 + (r % 1e9)) }]
          : []),
      ];
    },
  },
);

/** The Twitch-Eventsub-* headers that follow the signed ones, in Go's sorted order. */
const TAIL = ['Twitch-Eventsub-Message-Type', 'Twitch-Eventsub-Subscription-Type', 'Twitch-Eventsub-Subscription-Version'];

export const twitch: Provider = {
  ...base,
  checkSecret(secret) {
    // Create EventSub Subscription refuses any other: "an ASCII string … 10 … 100 characters".
    if (!/^[\x20-\x7e]{10,100}$/.test(secret))
      throw new UsageError('twitch: the secret is an ASCII string of 10 to 100 characters, as Twitch takes a subscription secret');
  },
  sign(rawBody, secrets, ctx) {
    const body = parseJson(rawBody);
    const sub = isObject(body) && isObject(body.subscription) ? body.subscription : undefined;
    const tail: OutgoingHeaders = {
      [TAIL[0] as string]: twitchMessageType(body),
      [TAIL[1] as string]: typeof sub?.type === 'string' ? sub.type : ctx.eventType,
      [TAIL[2] as string]: typeof sub?.version === 'string' ? sub.version : '1',
    };
    return { ...base.sign(rawBody, secrets, ctx), ...tail };
  },
  // Only events are resent: a retry says how many attempts came before it.
  retryHeaders(retryNum) {
    return { 'Twitch-Eventsub-Message-Retry': String(retryNum) };
  },
  // A revocation tells the receiver its subscription is gone: it may store it or drop it.
  isNotice(body) {
    return twitchMessageType(body) === 'revocation';
  },
};
