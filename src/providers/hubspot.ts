import { createHash } from 'node:crypto';
import { checkDeclaration } from './declaration.js';
import { declaredProvider } from './declared.js';
import type { JsonObject, JsonValue, Provider, TimingProfile } from './types.js';
import { HOUR, isObject, randomUint32 } from './util.js';

/**
 * HubSpot's webhooks (an app's subscriptions), a URL-bound provider on the declaration engine
 * (providers/declared.ts). Sources:
 *   - https://developers.hubspot.com/docs/api/webhooks/validating-requests: `X-HubSpot-Signature-v3`
 *     is the base64 HMAC-SHA256, keyed with the app's client secret, of the method, the request's
 *     full URL, the raw body and `X-HubSpot-Request-Timestamp` (Unix ms) run together; refuse a
 *     timestamp more than 5 minutes old. A receiver behind a proxy must verify over the URL HubSpot
 *     posts to (`--public-url`).
 *   - @hubspot/api-client (lib/src/utils/signature.js): Signature.isValid with signatureVersion
 *     'v3' builds `method + url + requestBody + timestamp` and refuses only an old timestamp
 *     (`Date.now() - timestamp > 300000`): a timestamp from the future passes (one-sided).
 *   - https://developers.hubspot.com/docs/api/webhooks: a POST of a JSON *array* of events (up to
 *     100 a request), each `{ eventId, subscriptionId, portalId, appId, occurredAt,
 *     subscriptionType, attemptNumber, objectId, changeSource, … }`; answer within 5 seconds or it
 *     is a failure; failures are retried up to 10 times, spread over the next 24 hours (the
 *     intervals are not published: doubling from 5 minutes to a 4 hour cap, chosen here). Dedupe on
 *     `eventId`. hookdrill sends one event a request.
 *   - The legacy signature beside v3, "for backwards compatibility" (HubSpot's validating-requests
 *     docs): `X-HubSpot-Signature`, v1 for an app's CRM webhooks — the hex SHA-256 (a plain hash,
 *     no HMAC) of the client secret followed by the raw body — and `X-HubSpot-Signature-Version:
 *     v1`. @hubspot/api-client's Signature.isValid verifies v1 when no version is given (its
 *     default, lib/src/utils/signature.js), so a receiver on the SDK's defaults reads only it.
 *   - A recorded app delivery (an AWS API Gateway v2 event of a `deal.creation` delivery, Jan 2026,
 *     headers lower-cased and sorted by the gateway, so neither casing nor order is HubSpot's):
 *     `accept: *\/*`, `content-type: application/json`, `user-agent: HubSpot Connect 2.0
 *     (http://dev.hubspot.com/) (namespace: webhooks-nio-http-client) - WebhooksExecutorDaemon-executor`,
 *     `x-hubspot-request-timestamp`, `x-hubspot-signature` (64 hex), `x-hubspot-signature-v3`,
 *     `x-hubspot-signature-version: v1`, `x-hubspot-timeout-millis: 10000`. Names are written as
 *     HubSpot's docs write them; the order is not published.
 *   - A retry's `attemptNumber` grows in the body (contract.redelivery).
 */

/** 10 retries within 24 hours: 5 min doubling to a 4 h cap, 21 h 15 m in all (chosen: HubSpot publishes the count and span only). */
const DELAYS = Array.from({ length: 10 }, (_, n) => Math.min(5 * 60_000 * 2 ** n, 4 * HOUR));

const profile: TimingProfile = {
  name: 'hubspot',
  summary: 'HubSpot: answer within 5s (published); 10 retries spread over 24h (published), doubling from 5m to a 4h cap (chosen)',
  published: false,
  timeoutMs: 5_000,
  retryDelaysMs: DELAYS,
  maxRedirects: 0,
  retryAfterStatuses: [],
  stopStatuses: [],
};

/** The user agent of a recorded app delivery (see above). */
const USER_AGENT = 'HubSpot Connect 2.0 (http://dev.hubspot.com/) (namespace: webhooks-nio-http-client) - WebhooksExecutorDaemon-executor';

/** HubSpot's v1 signature: the hex SHA-256 of the client secret followed by the raw body (no HMAC, no URL, no time). */
export function hubspotV1(secret: string, rawBody: Buffer): string {
  return createHash('sha256').update(secret).update(rawBody).digest('hex');
}

const base: Provider = declaredProvider(
  checkDeclaration(
    'hubspot',
    {
      title: 'HubSpot',
      signature: {
        header: 'X-HubSpot-Signature-v3',
        algorithm: 'sha256',
        encoding: 'base64',
        // hookdrill always POSTs: the method is the literal it signs.
        content: 'POST{url}{body}{timestamp}',
      },
      timestamp: { header: 'X-HubSpot-Request-Timestamp', unit: 'ms', tolerance: '5m' },
      id: { body: '0.eventId' },
      eventType: { body: '0.subscriptionType' },
      headers: {
        Accept: '*/*',
        'Content-Type': 'application/json',
        'User-Agent': USER_AGENT,
        'X-HubSpot-Signature-v3': '{signature}',
        'X-HubSpot-Request-Timestamp': '{timestamp}',
        'X-HubSpot-Timeout-Millis': '10000',
      },
      timeout: '5s',
    },
    'src/providers/hubspot.ts',
    '.',
  ),
  {
    futureAccepted: true,
    // HubSpot's v3 docs: these escapes are decoded in the URL before it is signed (and so before it is checked).
    signedUrl: (url) =>
      url.replace(/%(3A|2F|3F|40|21|24|27|28|29|2A|2C|3B)/gi, (_m, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
    profiles: { hubspot: profile },
    contract: {
      batching: {
        events: 'list',
        path: [],
        max: 100,
        id: ['eventId'],
        type: ['subscriptionType'],
        typical: 3,
        source: 'developers.hubspot.com/docs/api/webhooks: "up to 100 events" a request, the body a JSON array',
      },
      resends: { events: 'on-failure', source: 'developers.hubspot.com/docs/api/webhooks#retries: up to 10 times over 24 hours' },
      redelivery: {
        path: ['attemptNumber'],
        becomes: 'count',
        first: 0,
        source: 'developers.hubspot.com/docs/api/webhooks: attemptNumber, starting at 0, counts each retry',
      },
      endpointChecks: [],
      answer: { kind: 'status', source: 'developers.hubspot.com/docs/api/webhooks: a 2xx within 5 seconds' },
      related: {
        about: 'two properties of one contact changed',
        first: 'contact.propertyChange',
        next: 'contact.propertyChange',
        path: ['objectId'],
        dedupeOn: 'eventId',
        source:
          'developers.hubspot.com/docs/api/webhooks: one propertyChange event per property changed, each with its own eventId, about one objectId',
      },
      normalises: {
        what: 'the URL with %3A %2F %3F %40 %21 %24 %27 %28 %29 %2A %2C %3B decoded',
        source: 'developers.hubspot.com/docs/apps/legacy-apps/authentication/validating-requests (v3)',
      },
    },
    defaultProfile: 'hubspot',
    verifier: {
      official: "@hubspot/api-client's Signature.isValid (v3)",
      futureTimestamp: 'accepted',
      parsesJson: false,
      // Unsigned and badly signed requests lack or break it too: a receiver that verifies only v1
      // (the SDK's default) refuses them, and is warned that v1 covers no URL and no time.
      legacySignature: {
        header: 'X-HubSpot-Signature',
        scheme: 'v1, a SHA-256 of the client secret and the body',
        advice:
          'HubSpot sends it only for backwards compatibility, and it covers neither the URL nor a timestamp (a captured request replays forever); @hubspot/api-client verifies v3 when given signatureVersion "v3"',
      },
      unknownType: { path: ['0', 'subscriptionType'], value: 'hookdrill.unknownEvent' },
    },
    freshFields(body: JsonObject) {
      // Every event of the body: a captured batch sent again is new events, each with its own id.
      const events: JsonValue[] = Array.isArray(body) ? body : [];
      return events.flatMap((e, i) =>
        isObject(e)
          ? [
              // HubSpot's event ids are numbers; a fresh one per event, as HubSpot dedupes on it.
              ...(typeof e.eventId === 'number'
                ? [{ path: [i, 'eventId'], make: () => 1_000_000_000 + (randomUint32() % 2_000_000_000) }]
                : []),
              ...(typeof e.occurredAt === 'number' ? [{ path: [i, 'occurredAt'], make: (now: number) => now, clock: true as const }] : []),
            ]
          : [],
      );
    },
  },
);

export const hubspot: Provider = {
  ...base,
  // The v1 signature and its version beside v3, as every app delivery carries them.
  signedHeaders: [...base.signedHeaders, 'X-HubSpot-Signature'],
  sign(rawBody, secrets, ctx) {
    const headers = base.sign(rawBody, secrets, ctx);
    const [secret] = secrets;
    if (secret === undefined) return headers;
    return { ...headers, 'X-HubSpot-Signature': hubspotV1(secret, rawBody), 'X-HubSpot-Signature-Version': 'v1' };
  },
};
