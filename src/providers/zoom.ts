import { createHash, createHmac } from 'node:crypto';
import { checkDeclaration } from './declaration.js';
import { declaredProvider } from './declared.js';
import type { JsonObject, Provider, TimingProfile } from './types.js';
import { MINUTE, isObject, parseJson, randomAlnum } from './util.js';

/**
 * Zoom's webhooks (Marketplace apps' event subscriptions), on the declaration engine
 * (providers/declared.ts). Sources:
 *   - Zoom's docs, "Verify webhook events" (developers.zoom.us/docs/api/webhooks/): `x-zm-signature`
 *     is `v0=` + the hex HMAC-SHA256, keyed with the app's secret token, of `v0:` + the
 *     `x-zm-request-timestamp` (Unix seconds) + `:` + the body; the endpoint is validated first by
 *     an `endpoint.url_validation` event whose `payload.plainToken` must come back as
 *     `{ plainToken, encryptedToken }`, the encrypted one the hex HMAC-SHA256 of the plain token
 *     with the secret token, within 3 seconds (and again every 72 hours).
 *   - @zoom/rivet, Zoom's Node SDK (CommonHttpRequest): it verifies `v0:<ts>:` + JSON.stringify of
 *     the *parsed* body (Zoom's docs' sample does the same with express.json()), compares with
 *     `===`, and holds the timestamp to no window; it answers the URL validation itself. So a
 *     receiver that re-serialises does what the SDK does (verifier.verifiesParsedJson), and check
 *     judges no clock (the docs' sample refuses a timestamp over 5 minutes old: listen does).
 *   - Zoom's support article "Webhook delays": answer 200 or 204 within three seconds; otherwise
 *     Zoom retries three times: 5 minutes after the first attempt, 20 minutes after the first
 *     retry, 60 minutes after the second.
 *   - zoom/webhook-sample's README (the headers of a delivery, as Express hands them over):
 *     `user-agent: Zoom Marketplace/1.0a`, `content-type: application/json; charset=utf-8`,
 *     `x-zm-request-timestamp`, `x-zm-signature`, `x-zm-trackingid`; Zoom's docs: "x-zm-trackingid:
 *     unique identifier that Zoom uses to identify the request". Receivers also key on
 *     `x-zm-request-id` (devforum.zoom.us thread 142066: dedupe on the tracking id, "unique per
 *     delivery"). Whether a retry carries the same two ids is not published: hookdrill keeps them
 *     for every attempt of a delivery (made from its id, as Shopify's event id is), and a receiver
 *     keyed on either is judged as holding the delivery (otherIds). The trackingid's form
 *     (`v=2.0;clid=…;rid=…`) is the one Zoom's API answers carry; a webhook's own value is not shown.
 *   - The event's `event_ts` (Unix ms) is the same on every retry of an event and made fresh for
 *     every event here: listen and hookdrill's receivers keep keying on it, the one id Zoom is
 *     known to keep across retries.
 *   - Not published: the headers' order (test/wire/zoom.json holds names and values only).
 */

/** The two per-delivery ids, made from the delivery's (event_ts): the same on every attempt and copy of it. */
export function zoomIds(deliveryId: string): { trackingId: string; requestId: string } {
  const h = createHash('sha256').update(`x-zm:${deliveryId}`).digest('hex');
  return {
    trackingId: `v=2.0;clid=us06;rid=WEB_${h.slice(0, 32)}`,
    // Written as the docs' example request writes it: a UUID's hex in groups joined by underscores.
    requestId: `${h.slice(32, 40)}_${h.slice(40, 44)}_${h.slice(44, 48)}_${h.slice(48, 52)}_${h.slice(52, 64)}`,
  };
}

const profile: TimingProfile = {
  name: 'zoom',
  summary: "Zoom: answer 200 or 204 within 3s; 3 retries, 5m, 20m and 60m apart (Zoom's support article)",
  published: true,
  timeoutMs: 3_000,
  retryDelaysMs: [5 * MINUTE, 20 * MINUTE, 60 * MINUTE],
  maxRedirects: 0,
  retryAfterStatuses: [],
  stopStatuses: [],
};

/** Now in Unix ms, made later by a millisecond where it would repeat the last one. */
let lastTs = 0;
function eventTs(nowMs: number): number {
  lastTs = Math.max(nowMs, lastTs + 1);
  return lastTs;
}

const base = declaredProvider(
  checkDeclaration(
    'zoom',
    {
      title: 'Zoom',
      signature: {
        header: 'x-zm-signature',
        algorithm: 'sha256',
        encoding: 'hex',
        content: 'v0:{timestamp}:{body}',
        value: 'v0={signature}',
      },
      timestamp: { header: 'x-zm-request-timestamp', unit: 's', tolerance: '5m' },
      id: { body: 'event_ts' },
      eventType: { body: 'event' },
      headers: {
        'User-Agent': 'Zoom Marketplace/1.0a',
        'Content-Type': 'application/json; charset=utf-8',
        'x-zm-request-timestamp': '{timestamp}',
        'x-zm-signature': '{signature}',
      },
      timeout: '3s',
    },
    'src/providers/zoom.ts',
    '.',
  ),
  {
    profiles: { zoom: profile },
    contract: {
      batching: { events: 'one', source: 'developers.zoom.us/docs/api/webhooks: one event a request' },
      resends: {
        events: 'on-failure',
        source: 'developers.zoom.us/docs/api/webhooks/#webhook-retries: 3 retries, 5, 20 and 60 minutes apart',
      },
      endpointChecks: [
        {
          name: 'endpoint.url_validation',
          signed: true,
          answer: '{"plainToken", "encryptedToken": hex HMAC-SHA256 of plainToken with the secret token}, only once the request verifies',
          source: 'developers.zoom.us/docs/api/webhooks/#validate-your-webhook-endpoint; zoom/webhook-sample verifies before it answers',
        },
      ],
      answer: { kind: 'status', source: 'developers.zoom.us/docs/api/webhooks: a 200 or 204 within 3 seconds' },
      related: {
        about: 'a meeting started, then ended',
        first: 'meeting.started',
        next: 'meeting.ended',
        path: ['payload', 'object', 'id'],
        dedupeOn: 'the event (event and event_ts), never the meeting',
        source: 'developers.zoom.us/docs/api/meetings/events/: meeting.started, then meeting.ended about one meeting id',
      },
    },
    defaultProfile: 'zoom',
    verifier: {
      official: "@zoom/rivet's webhook verification",
      futureTimestamp: 'accepted',
      // Rivet parses the body, and HMACs JSON.stringify of what it parsed.
      parsesJson: true,
      verifiesParsedJson: true,
      unknownType: { path: ['event'], value: 'hookdrill.unknown_event' },
    },
    freshFields(body: JsonObject) {
      return [
        // The id as well as the time: unique in this process (two events made in one millisecond
        // would be one to a receiver), and not a clock field, so a retry keeps it.
        ...(typeof body.event_ts === 'number' ? [{ path: ['event_ts'], make: eventTs }] : []),
        // The URL validation's token is new every time Zoom sends one.
        ...(isObject(body.payload) && typeof body.payload.plainToken === 'string'
          ? [{ path: ['payload', 'plainToken'], make: () => randomAlnum(22) }]
          : []),
      ];
    },
  },
);

export const zoom: Provider = {
  ...base,
  sign(rawBody, secrets, ctx) {
    const { trackingId, requestId } = zoomIds(ctx.deliveryId);
    return { ...base.sign(rawBody, secrets, ctx), 'x-zm-trackingid': trackingId, 'x-zm-request-id': requestId };
  },
  // A receiver keyed on Zoom's tracking id or request id holds the delivery as surely as one keyed on event_ts.
  otherIds(deliveryId) {
    const { trackingId, requestId } = zoomIds(deliveryId);
    return [trackingId, requestId];
  },
  // As Rivet: no window unless one is asked for (listen asks for the docs' sample's 5 minutes).
  verify(rawBody, headers, secrets, opts = {}) {
    base.verify(rawBody, headers, secrets, { ...opts, toleranceSec: opts.toleranceSec ?? Number.MAX_SAFE_INTEGER / 1000 });
  },
  // Rivet holds the signed timestamp to no window: check judges none (needsTimestamp says so).
  timestamped: false,
  /** endpoint.url_validation: `{ plainToken, encryptedToken }`, the second the hex HMAC of the first with the secret token. */
  challengeAnswer(rawBody, secrets) {
    const body = parseJson(rawBody);
    if (!isObject(body) || body.event !== 'endpoint.url_validation' || !isObject(body.payload)) return undefined;
    const plainToken = body.payload.plainToken;
    if (typeof plainToken !== 'string') return undefined;
    // Asked without a secret, it only says the request is the endpoint check.
    const [secret] = secrets ?? [];
    return secret === undefined
      ? { plainToken }
      : { plainToken, encryptedToken: createHmac('sha256', secret).update(plainToken).digest('hex') };
  },
};
