import { checkDeclaration } from './declaration.js';
import { declaredProvider } from './declared.js';
import type { JsonObject, Provider, TimingProfile } from './types.js';
import { SignatureError } from './types.js';
import { HOUR, MINUTE, isObject, parseJson, randomAlnum } from './util.js';

/**
 * Linear's webhooks, on the declaration engine (providers/declared.ts), with the timestamp in
 * the body. Sources:
 *   - https://linear.app/developers/webhooks: a POST with `Linear-Delivery` (a UUID per delivery),
 *     `Linear-Event` (the entity type: Issue, Comment, …), `Linear-Signature` (the hex
 *     HMAC-SHA256 of the raw body with the webhook's signing secret) and `User-Agent:
 *     Linear-Webhook`; the body's `webhookTimestamp` (Unix ms) is the send time, and receivers
 *     should refuse one more than a minute away; answer 200 within 5 seconds, or Linear retries
 *     after 1 minute, 1 hour and 6 hours.
 *   - @linear/sdk (LinearWebhookClient.verify): the HMAC compared in constant time, then
 *     `webhookTimestamp` from the signed body, refused when `Math.abs(now - it) > 60 s` (both
 *     sides); the header timestamp is ignored. So the clock a receiver checks is inside what is
 *     signed: check ages the body itself, not a header (Provider.clockInBody).
 *   - The body: `{ action, actor, createdAt, data, organizationId, type, url, webhookId,
 *     webhookTimestamp, … }` (the SDK's EntityWebhookPayload and its kinds). Linear-Delivery is
 *     what to dedupe on: the same on every retry of a delivery.
 *   - Not published: the headers' order.
 */

const profile: TimingProfile = {
  name: 'linear',
  summary: "Linear: answer within 5s; retries after 1m, 1h and 6h (Linear's docs)",
  published: true,
  timeoutMs: 5_000,
  retryDelaysMs: [MINUTE, HOUR, 6 * HOUR],
  maxRedirects: 0,
  retryAfterStatuses: [],
  stopStatuses: [],
};

const hex = (n: number) => randomAlnum(n, '0123456789abcdef');
const uuid = () => `${hex(8)}-${hex(4)}-4${hex(3)}-a${hex(3)}-${hex(12)}`;

/** The SDK's window: a minute either way. */
const WINDOW_SEC = 60;

const base = declaredProvider(
  checkDeclaration(
    'linear',
    {
      title: 'Linear',
      signature: { header: 'Linear-Signature', algorithm: 'sha256', encoding: 'hex', content: '{body}' },
      id: { header: 'Linear-Delivery' },
      eventType: { body: 'type' },
      // Accept as a recorded delivery carries it (test/wire/recorded/linear.json).
      headers: {
        Accept: '*/*',
        'Content-Type': 'application/json; charset=utf-8',
        'User-Agent': 'Linear-Webhook',
        'Linear-Delivery': '{id}',
        'Linear-Event': '{event}',
        'Linear-Signature': '{signature}',
      },
      timeout: '5s',
      retries: ['1m', '1h', '6h'],
    },
    'src/providers/linear.ts',
    '.',
  ),
  {
    profiles: { linear: profile },
    contract: {
      batching: { events: 'one', source: 'linear.app/developers/webhooks: one entity change a request' },
      resends: { events: 'on-failure', source: 'linear.app/developers/webhooks: retried after 1 minute, 1 hour and 6 hours' },
      endpointChecks: [],
      answer: { kind: 'status', source: 'linear.app/developers/webhooks: a 200 within 5 seconds' },
      related: {
        about: 'an issue created, then updated',
        first: 'Issue.create',
        next: 'Issue.update',
        path: ['data', 'id'],
        dedupeOn: 'Linear-Delivery',
        source:
          'linear.app/developers/webhooks: a create, then an update of one entity (data.id), each a delivery with its own Linear-Delivery',
      },
    },
    defaultProfile: 'linear',
    verifier: {
      official: "@linear/sdk's LinearWebhookClient.verify",
      futureTimestamp: 'refused',
      // The SDK reads webhookTimestamp from the body it verified.
      parsesJson: true,
      parsedBy: "@linear/sdk's LinearWebhookClient.parseData",
      unknownType: { path: ['type'], value: 'HookdrillUnknownEntity' },
    },
    newDeliveryId: uuid,
    freshFields(body: JsonObject) {
      return [
        ...(typeof body.webhookTimestamp === 'number'
          ? [{ path: ['webhookTimestamp'], make: (now: number) => now, clock: true as const }]
          : []),
        ...(isObject(body.data) && typeof body.data.id === 'string' ? [{ path: ['data', 'id'], make: uuid }] : []),
      ];
    },
  },
);

export const linear: Provider = {
  ...base,
  timestamped: true,
  toleranceSec: WINDOW_SEC,
  clockInBody: true,
  /** The HMAC over the body, then the signed body's webhookTimestamp within the window, as the SDK checks both. */
  verify(rawBody, headers, secrets, opts = {}) {
    base.verify(rawBody, headers, secrets, opts);
    if (opts.headersOnly) return;
    const body = parseJson(rawBody);
    const ts = isObject(body) ? body.webhookTimestamp : undefined;
    // Read from the body, so a mismatch of the body's, not a header's (as the SDK throws after the HMAC).
    if (typeof ts !== 'number' || !Number.isFinite(ts))
      throw new SignatureError('no_match', 'the signed body has no webhookTimestamp (Unix ms)');
    const skew = Math.floor(((opts.nowMs ?? Date.now()) - ts) / 1000);
    const tolerance = opts.toleranceSec ?? WINDOW_SEC;
    if (skew > tolerance)
      throw new SignatureError('stale_timestamp', `webhookTimestamp is ${skew}s old, beyond the ${tolerance}s tolerance`);
    if (-skew > tolerance)
      throw new SignatureError('future_timestamp', `webhookTimestamp is ${-skew}s in the future, beyond the ${tolerance}s tolerance`);
  },
};
