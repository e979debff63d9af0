import { randomUUID } from 'node:crypto';
import { UsageError } from '../util/errors.js';
import type { JsonObject, JsonValue, Provider, TimingProfile } from './types.js';
import { SignatureError } from './types.js';
import { MINUTE, header, hmac, requireHeader, requireSecrets, safeEqual, otherStringSecret } from './util.js';

const HEADER = 'X-Shopify-Hmac-Sha256';

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
export const SHOPIFY_API_VERSION = '2025-10';

export const shopify: Provider = {
  name: 'shopify',
  title: 'Shopify',
  signatureHeader: HEADER,
  signedHeaders: [HEADER, 'X-Shopify-Triggered-At'],
  otherSecret: otherStringSecret,
  timestamped: false,
  rotation: false,
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

  sign(rawBody, secrets, ctx) {
    return {
      'Content-Type': 'application/json',
      'User-Agent': 'Shopify-Captain-Hook',
      'X-Shopify-Topic': ctx.eventType,
      'X-Shopify-Webhook-Id': ctx.deliveryId,
      'X-Shopify-Event-Id': ctx.deliveryId,
      'X-Shopify-Shop-Domain': SHOP_DOMAIN,
      'X-Shopify-API-Version': SHOPIFY_API_VERSION,
      'X-Shopify-Triggered-At': new Date(ctx.nowMs).toISOString(),
      [HEADER]: hmac('sha256', secrets[0] ?? '', rawBody).toString('base64'),
    };
  },

  verify(rawBody, headers, secrets) {
    requireSecrets(secrets);
    const value = requireHeader(headers, HEADER);
    if (!/^[A-Za-z0-9+/]{43}=$/.test(value)) {
      throw new SignatureError('malformed_header', `${HEADER} must be the base64 of 32 bytes`);
    }
    for (const secret of secrets) {
      if (safeEqual(value, hmac('sha256', secret, rawBody).toString('base64'))) return;
    }
    throw new SignatureError('no_match', `${HEADER} does not match the body for any secret`);
  },

  eventTypeOf(headers) {
    return header(headers, 'X-Shopify-Topic');
  },

  deliveryId(headers) {
    return header(headers, 'X-Shopify-Webhook-Id');
  },

  freshFields(body: JsonObject) {
    const iso = (now: number) => new Date(now).toISOString();
    return (['created_at', 'updated_at'] as const)
      .filter((key) => typeof body[key] === 'string')
      .map((key) => ({ path: [key], make: iso }));
  },

  describe(_body: JsonValue, fixtureName: string) {
    // Topics contain a slash (`orders/create`), which a file name cannot: fixtures write it as a dot.
    return { eventType: fixtureName.includes('/') ? fixtureName : fixtureName.replace('.', '/') };
  },

  newDeliveryId() {
    return randomUUID();
  },
};
