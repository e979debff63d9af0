import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { UsageError } from '../util/errors.js';
import type { JsonObject, JsonValue, Provider, TimingProfile } from './types.js';
import { SignatureError } from './types.js';
import {
  HOUR,
  MINUTE,
  checkTimestamp,
  header,
  parseJson,
  randomAlnum,
  requireHeader,
  requireSecrets,
  safeEqual,
  stringField,
  unixSeconds,
} from './util.js';

const svix: TimingProfile = {
  name: 'standard',
  summary: 'Standard Webhooks / Svix: 15s timeout; retries after 5s, 5m, 30m, 2h, 5h, 10h, 10h; Retry-After on 429/502/504; 410 stops',
  published: true,
  timeoutMs: 15_000,
  retryDelaysMs: [5_000, 5 * MINUTE, 30 * MINUTE, 2 * HOUR, 5 * HOUR, 10 * HOUR, 10 * HOUR],
  maxRedirects: 0,
  retryAfterStatuses: [429, 502, 504],
  stopStatuses: [410],
};

const spec: TimingProfile = {
  ...svix,
  name: 'standard-spec',
  summary: "the Standard Webhooks spec schedule: Svix's, continued with 14h, 20h, 24h",
  retryDelaysMs: [...svix.retryDelaysMs, 14 * HOUR, 20 * HOUR, 24 * HOUR],
};

// Constructing a Webhook base64-decodes the secret: do it once per secret, not once per request.
const webhooks = new Map<string, Webhook>();

function webhookFor(secret: string): Webhook {
  let wh = webhooks.get(secret);
  if (!wh) {
    try {
      wh = new Webhook(secret);
    } catch {
      throw new UsageError('standard: the secret must be "whsec_" followed by base64 (the key bytes)');
    }
    webhooks.set(secret, wh);
  }
  return wh;
}

const keys = new Map<string, Buffer>();

/** The key bytes of a whsec_ secret, decoded once (checked by webhookFor, which rejects a bad one). */
function keyFor(secret: string): Buffer {
  let key = keys.get(secret);
  if (!key) {
    webhookFor(secret);
    key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
    keys.set(secret, key);
  }
  return key;
}

export const standard: Provider = {
  name: 'standard',
  title: 'Standard Webhooks (Svix)',
  signatureHeader: 'webhook-signature',
  signedHeaders: ['webhook-signature', 'webhook-timestamp'],
  // A key of the right shape (whsec_ + base64), so the receiver gets as far as comparing signatures.
  otherSecret: (secret) => {
    const other = `whsec_${Buffer.from("not the receiver's key, hookdrill").toString('base64')}`;
    return secret === other ? `whsec_${Buffer.from('another key, hookdrill').toString('base64')}` : other;
  },
  timestamped: true,
  rotation: true,
  profiles: { standard: svix, 'standard-spec': spec },
  defaultProfile: 'standard',
  verifier: {
    official: "standardwebhooks' Webhook.verify",
    // The library refuses a timestamp more than 5 minutes either way ("too old", "too new").
    futureTimestamp: 'refused',
    // verify returns JSON.parse(payload): a malformed body throws.
    parsesJson: true,
    // The spec reserves v1a (asymmetric, ed25519) beside v1; the library skips every version but v1.
    withOtherScheme: (value) => `${value} v1a,${Buffer.alloc(64, 0x5a).toString('base64')}`,
    editSignatures: (value, edit) =>
      value
        .split(' ')
        .map((entry) => (entry.startsWith('v1,') ? `v1,${edit(entry.slice(3))}` : entry))
        .join(' '),
    unknownType: { path: ['type'], value: 'hookdrill.unknown_event_type' },
  },

  checkSecret(secret) {
    const b64 = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || b64.length % 4 !== 0) {
      throw new UsageError('standard: the secret must be "whsec_" followed by base64 (the key bytes)');
    }
    webhookFor(secret);
  },

  sign(rawBody, secrets, ctx) {
    const when = new Date(unixSeconds(ctx.nowMs) * 1000);
    // The official library signs; several secrets give several `v1,` entries (key rotation).
    const signatures = secrets.map((s) => webhookFor(s).sign(ctx.deliveryId, when, rawBody)).join(' ');
    return {
      'Content-Type': 'application/json',
      'User-Agent': 'Svix-Webhooks/1.0 (hookdrill; +https://www.standardwebhooks.com/)',
      'webhook-id': ctx.deliveryId,
      'webhook-timestamp': String(unixSeconds(ctx.nowMs)),
      'webhook-signature': signatures,
    };
  },

  verify(rawBody, headers, secrets, opts = {}) {
    requireSecrets(secrets);
    const id = requireHeader(headers, 'webhook-id');
    const tsText = requireHeader(headers, 'webhook-timestamp');
    const value = requireHeader(headers, 'webhook-signature');
    const candidates = value.split(' ').filter(Boolean);
    const v1 = candidates.filter((c) => c.startsWith('v1,')).map((c) => c.slice(3));
    if (v1.length === 0) {
      throw new SignatureError('malformed_header', 'webhook-signature has no "v1,<base64>" entry');
    }
    // The library's own verify reads Date.now() and a fixed window; checking the time here lets a
    // receiver set its tolerance, and the library still computes the signature it compares against.
    const ts = checkTimestamp(tsText, 'webhook-timestamp', opts.nowMs ?? Date.now(), opts.toleranceSec ?? 300);
    for (const secret of secrets) {
      // The library's scheme (base64 of HMAC-SHA256 over "id.timestamp.body" with the decoded key),
      // computed with node's OpenSSL: the library's pure-JS SHA-256 was an eighth of a busy
      // receiver's time. A test holds the two to the same answer.
      const expected = createHmac('sha256', keyFor(secret)).update(`${id}.${ts}.`).update(rawBody).digest('base64');
      if (v1.some((c) => safeEqual(c, expected))) return;
    }
    throw new SignatureError('no_match', 'no webhook-signature v1 entry matches the body for any secret');
  },

  eventTypeOf(_headers, rawBody) {
    return stringField(parseJson(rawBody), 'type');
  },

  deliveryId(headers) {
    return header(headers, 'webhook-id');
  },

  freshFields(body: JsonObject) {
    return typeof body.timestamp === 'string' ? [{ path: ['timestamp'], make: (now: number) => new Date(now).toISOString() }] : [];
  },

  describe(body: JsonValue, fixtureName: string) {
    return { eventType: stringField(body, 'type') ?? fixtureName };
  },

  newDeliveryId() {
    return `msg_${randomAlnum(27)}`;
  },
};
