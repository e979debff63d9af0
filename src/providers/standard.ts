import { createHmac } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { UsageError } from '../util/errors.js';
import type { IncomingHeaders, JsonObject, JsonValue, Provider, TimingProfile } from './types.js';
import { SignatureError } from './types.js';
import {
  HOUR,
  MINUTE,
  checkTimestamp,
  header,
  parseJson,
  randomAlnum,
  requireSecrets,
  safeEqual,
  stringField,
  unixSeconds,
} from './util.js';

/** What Svix's senders write (captured Resend and Clerk deliveries, test/wire/svix.json): its version and a sender tag. */
export const SVIX_USER_AGENT = 'Svix-Webhooks/1.84.0 (sender-hkdrl; +https://www.svix.com/http-sender/)';

const svixProfile: TimingProfile = {
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
  ...svixProfile,
  name: 'standard-spec',
  summary: "the Standard Webhooks spec schedule: Svix's, continued with 14h, 20h, 24h",
  retryDelaysMs: [...svixProfile.retryDelaysMs, 14 * HOUR, 20 * HOUR, 24 * HOUR],
};

// Constructing a Webhook base64-decodes the secret: do it once per secret, not once per request.
const webhooks = new Map<string, Webhook>();

function webhookFor(secret: string): Webhook {
  let wh = webhooks.get(secret);
  if (!wh) {
    try {
      wh = new Webhook(secret);
    } catch {
      throw new UsageError('standard, svix: the secret must be "whsec_" followed by base64 (the key bytes)');
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

/** Who signs by the Standard Webhooks scheme, and how its headers are named. */
interface Scheme {
  name: 'standard' | 'svix';
  title: string;
  /** `webhook` (the spec's names, and what Svix's white-label accounts send) or `svix` (Svix's default). */
  prefix: 'webhook' | 'svix';
  userAgent: string;
  profiles: Readonly<Record<string, TimingProfile>>;
  defaultProfile: string;
  official: string;
}

/**
 * One of a delivery's three headers, by the scheme's own name first and then the other's: Svix's
 * library reads `svix-id` else `webhook-id` (and so for each header), so a receiver on it takes
 * both spellings, and so does hookdrill, whichever of the two it verifies as.
 */
function either(headers: IncomingHeaders, prefix: Scheme['prefix'], field: 'id' | 'timestamp' | 'signature'): string | undefined {
  const other = prefix === 'svix' ? 'webhook' : 'svix';
  return header(headers, `${prefix}-${field}`) || header(headers, `${other}-${field}`);
}

function requireEither(headers: IncomingHeaders, prefix: Scheme['prefix'], field: 'id' | 'timestamp' | 'signature'): string {
  const value = either(headers, prefix, field);
  if (value === undefined || value === '') throw new SignatureError('missing_header', `missing ${prefix}-${field} header`);
  return value;
}

function standardWebhooks(scheme: Scheme): Provider {
  const { prefix } = scheme;
  const provider: Provider = {
    name: scheme.name,
    title: scheme.title,
    signatureHeader: `${prefix}-signature`,
    signedHeaders: [`${prefix}-signature`, `${prefix}-timestamp`],
    // A key of the right shape (whsec_ + base64), so the receiver gets as far as comparing signatures.
    otherSecret: (secret) => {
      const other = `whsec_${Buffer.from("not the receiver's key, hookdrill").toString('base64')}`;
      return secret === other ? `whsec_${Buffer.from('another key, hookdrill').toString('base64')}` : other;
    },
    timestamped: true,
    rotation: true,
    contract: {
      batching: { events: 'one', source: 'standardwebhooks.com (spec.md): one message a request' },
      resends: {
        events: 'on-failure',
        source: 'docs.svix.com/retries: retries on a schedule for about 28 hours (Standard Webhooks leaves the schedule to the sender)',
      },
      endpointChecks: [],
      answer: { kind: 'status', source: 'standardwebhooks.com (spec.md): a 2xx is a successful delivery' },
      related: {
        about: 'a contact created, then updated',
        first: 'contact.created',
        next: 'contact.updated',
        path: ['data', 'id'],
        dedupeOn: `${prefix}-id`,
        source:
          'standardwebhooks.com (spec.md): webhook-id is "the unique message identifier … the same when a message is re-sent": each message its own, whatever it is about',
      },
    },
    profiles: scheme.profiles,
    defaultProfile: scheme.defaultProfile,
    verifier: {
      official: scheme.official,
      // The library refuses a timestamp more than 5 minutes either way ("too old", "too new").
      futureTimestamp: 'refused',
      // verify returns JSON.parse(payload): a malformed body throws.
      parsesJson: true,
      // The spec reserves v1a (asymmetric, ed25519) beside v1; the library skips every version but v1.
      withOtherScheme: (value) => `${value} v1a,${Buffer.alloc(64, 0x5a).toString('base64')}`,
      firstSignatureOnly: (value) => value.split(' ').find((entry) => entry.startsWith('v1,')) ?? value,
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
        throw new UsageError('standard, svix: the secret must be "whsec_" followed by base64 (the key bytes)');
      }
      webhookFor(secret);
    },

    sign(rawBody, secrets, ctx) {
      const when = new Date(unixSeconds(ctx.nowMs) * 1000);
      // The official library signs; several secrets give several `v1,` entries (key rotation).
      const signatures = secrets.map((s) => webhookFor(s).sign(ctx.deliveryId, when, rawBody)).join(' ');
      return {
        // Names, values and order of captured Svix deliveries (a Resend one; test/wire/svix.json).
        'User-Agent': scheme.userAgent,
        Accept: '*/*',
        'Content-Type': 'application/json',
        [`${prefix}-id`]: ctx.deliveryId,
        [`${prefix}-signature`]: signatures,
        [`${prefix}-timestamp`]: String(unixSeconds(ctx.nowMs)),
        'Accept-Encoding': 'gzip',
      };
    },

    verify(rawBody, headers, secrets, opts = {}) {
      requireSecrets(secrets);
      const id = requireEither(headers, prefix, 'id');
      const tsText = requireEither(headers, prefix, 'timestamp');
      const value = requireEither(headers, prefix, 'signature');
      const candidates = value.split(' ').filter(Boolean);
      const v1 = candidates.filter((c) => c.startsWith('v1,')).map((c) => c.slice(3));
      if (v1.length === 0) {
        throw new SignatureError('malformed_header', `${prefix}-signature has no "v1,<base64>" entry`);
      }
      // The library's own verify reads Date.now() and a fixed window; checking the time here lets a
      // receiver set its tolerance, and the library still computes the signature it compares against.
      const ts = checkTimestamp(tsText, `${prefix}-timestamp`, opts.nowMs ?? Date.now(), opts.toleranceSec ?? 300);
      if (opts.headersOnly) return;
      for (const secret of secrets) {
        // The library's scheme (base64 of HMAC-SHA256 over "id.timestamp.body" with the decoded key),
        // computed with node's OpenSSL: the library's pure-JS SHA-256 was an eighth of a busy
        // receiver's time. A test holds the two to the same answer.
        const expected = createHmac('sha256', keyFor(secret)).update(`${id}.${ts}.`).update(rawBody).digest('base64');
        if (v1.some((c) => safeEqual(c, expected))) return;
      }
      throw new SignatureError('no_match', `no ${prefix}-signature v1 entry matches the body for any secret`);
    },

    eventTypeOf(_headers, rawBody) {
      return stringField(parseJson(rawBody), 'type');
    },

    deliveryId(headers) {
      return either(headers, prefix, 'id');
    },

    freshFields(body: JsonObject) {
      // When it happened: the spec's `timestamp`, or `created_at` as Resend's events (the catalogue's) have it.
      return (['timestamp', 'created_at'] as const)
        .filter((key) => typeof body[key] === 'string')
        .map((key) => ({ path: [key], make: (now: number) => new Date(now).toISOString(), clock: true as const }));
    },

    describe(body: JsonValue, fixtureName: string) {
      return { eventType: stringField(body, 'type') ?? fixtureName };
    },

    newDeliveryId() {
      return `msg_${randomAlnum(27)}`;
    },
  };
  return provider;
}

/** The Standard Webhooks spec's names, `webhook-id`, `-timestamp`, `-signature`, as Svix's white-label accounts send them. */
export const standard: Provider = standardWebhooks({
  name: 'standard',
  title: 'Standard Webhooks',
  prefix: 'webhook',
  // What Svix's white-label accounts send (a Dodo Payments capture): Svix's own User-Agent.
  userAgent: SVIX_USER_AGENT,
  profiles: { standard: svixProfile, 'standard-spec': spec },
  defaultProfile: 'standard',
  official: "standardwebhooks' Webhook.verify",
});

/**
 * Svix, as its accounts send by default: `svix-id`, `svix-timestamp`, `svix-signature` (Svix's docs,
 * "Verifying payloads"; the `webhook-*` names are what its white-label accounts send), the same
 * scheme and schedule. Resend and Clerk send through Svix.
 */
export const svix: Provider = standardWebhooks({
  name: 'svix',
  title: 'Svix',
  prefix: 'svix',
  userAgent: SVIX_USER_AGENT,
  profiles: { svix: { ...svixProfile, name: 'svix', summary: svixProfile.summary.replace('Standard Webhooks / Svix', 'Svix') } },
  defaultProfile: 'svix',
  official: "svix's Webhook.verify",
});
