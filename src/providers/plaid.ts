import { createHash } from 'node:crypto';
import { checkDeclaration } from './declaration.js';
import { declaredProvider } from './declared.js';
import type { FreshField, JsonObject, JsonValue, Provider, TimingProfile } from './types.js';
import { isObject, parseJson } from './util.js';

const SECOND = 1_000;

/**
 * Plaid's webhooks, on the declaration engine's JWT scheme (providers/declared-jwt.ts) with ES256
 * and a body-hash claim. Sources:
 *   - plaid.com/docs/api/webhooks/webhook-verification/ ("Verify webhooks"): the
 *     `Plaid-Verification` header holds a JWT (no `Bearer `) whose header is
 *     `{"alg": "ES256", "kid": …, "typ": "JWT"}` and whose payload is `{"iat": …,
 *     "request_body_sha256": <hex SHA-256 of the raw body>}`. A receiver decodes the header
 *     unverified, "ensure[s] that the alg is ES256", fetches the key by kid with POST
 *     /webhook_verification_key/get (client_id, secret, key_id) — a JWK with `created_at` and
 *     `expired_at` — verifies the JWT with it, refuses a token whose iat is "more than 5 minutes"
 *     old, and compares request_body_sha256 with the body's SHA-256 in constant time. Nothing there
 *     refuses an iat in the future: hookdrill does not either.
 *   - plaid.com/docs/api/webhooks/ ("Webhook retries"): "If there is a non-200 response or no
 *     response within 10 seconds from the webhook endpoint, Plaid will keep attempting to send the
 *     webhook for up to 24 hours. Each attempt will be tried after a delay that is 4 times longer
 *     than the previous delay, starting with 30 seconds" (also support.plaid.com article
 *     40390675922967); Plaid "won't retry webhooks if … the webhook receiver endpoint has rejected
 *     more than 90% of webhooks … over the last 24 hours" (not modelled: one endpoint, one run).
 *     Duplicates and any order are to be expected ("Best practices": design for duplicate and
 *     out-of-order webhooks).
 *   - The bodies: `webhook_type`, `webhook_code`, `item_id`, `environment` and the code's own fields
 *     (the `plaid` SDK's typed webhooks: SyncUpdatesAvailableWebhook, ItemErrorWebhook,
 *     AuthAutomaticallyVerifiedWebhook … in its api.ts). No delivery id anywhere: a retry re-posts
 *     the same body, so a receiver keys on the body's SHA-256 (as hookdrill does, as for Postmark).
 * Not found: a recorded real delivery (its User-Agent, its other headers and the body's layout):
 * chosen here, Content-Type application/json and the token, compact JSON; said in docs/wire.md.
 * In test mode hookdrill signs with its own P-256 key (made once, kept 0600) and serves it as Plaid
 * does, at http://127.0.0.1:9477/webhook_verification_key/get (HOOKDRILL_JWKS_PORT;
 * delivery/key-server.ts): a receiver's Plaid client is pointed there (the SDK's basePath).
 */

/** Plaid's schedule: 30 s, then each delay 4× the one before, while the next attempt is within 24 h of the first (six retries, the last ~11.4 h in). */
const RETRY_DELAYS_MS = (() => {
  const out: number[] = [];
  let total = 0;
  for (let d = 30 * SECOND; total + d <= 24 * 3_600 * SECOND; d *= 4) {
    out.push(d);
    total += d;
  }
  return out;
})();

const profile: TimingProfile = {
  name: 'plaid',
  summary:
    'Plaid: a 10s timeout; anything but 200 retried for up to 24h, from 30s, each delay 4× the one before (30s, 2m, 8m, 32m, ~2.1h, ~8.5h) — published',
  published: true,
  timeoutMs: 10 * SECOND,
  retryDelaysMs: RETRY_DELAYS_MS,
  maxRedirects: 0,
  retryAfterStatuses: [],
  stopStatuses: [],
};

/** The delivery id of a Plaid webhook: the SHA-256 of its body (Plaid sends none; a retry re-posts the same body). */
export function plaidDeliveryId(rawBody: Buffer): string {
  return createHash('sha256').update(rawBody).digest('hex');
}

/** A webhook's type: `<webhook_type>.<webhook_code>` (a code alone repeats across types: DEFAULT_UPDATE). */
function typeOf(body: JsonValue | undefined): string | undefined {
  if (!isObject(body) || typeof body.webhook_type !== 'string' || typeof body.webhook_code !== 'string') return undefined;
  return `${body.webhook_type}.${body.webhook_code}`;
}

/** An id as Plaid writes its item and account ids: 37 letters and digits. */
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
function plaidId(): string {
  const bytes = createHash('sha256').update(`${Date.now()}:${Math.random()}`).digest();
  return Array.from({ length: 37 }, (_, i) => ALNUM[(bytes[i % bytes.length] as number) % ALNUM.length]).join('');
}

const base = declaredProvider(
  checkDeclaration(
    'plaid',
    {
      title: 'Plaid',
      signature: {
        scheme: 'jwt',
        header: 'Plaid-Verification',
        bearer: false,
        algorithm: 'ES256',
        audience: false,
        maxAge: '5m',
        bodyHash: 'request_body_sha256',
      },
      eventType: { body: 'webhook_code' },
      headers: {
        'Content-Type': 'application/json',
        'Plaid-Verification': '{signature}',
      },
      timeout: '10s',
    },
    'src/providers/plaid.ts',
    '.',
  ),
  {
    profiles: { plaid: profile },
    defaultProfile: 'plaid',
    contract: {
      batching: { events: 'one', source: 'plaid.com/docs/api/webhooks/: one webhook a POST, raw JSON' },
      resends: {
        events: 'on-failure',
        source:
          'plaid.com/docs/api/webhooks/ "Webhook retries": a non-200 response or none within 10 seconds is retried for up to 24 hours, from 30 s, each delay 4× the previous',
      },
      endpointChecks: [],
      answer: {
        kind: 'status',
        only: 200,
        source:
          'plaid.com/docs/api/webhooks/ "Webhook retries": "a non-200 response" is retried — a 200 is success, any other answer is not',
      },
      related: {
        about: 'an Item with new transactions, then in error',
        first: 'transactions.sync_updates_available',
        next: 'item.error',
        path: ['item_id'],
        dedupeOn: 'the whole webhook (its body: Plaid sends no delivery id)',
        source:
          "plaid.com/docs/api/products/transactions/#sync_updates_available and /docs/api/items/#error: both carry the Item's item_id",
      },
    },
    verifier: {
      official:
        "Plaid's documented verification (plaid.com/docs/api/webhooks/webhook-verification/: alg ES256, the key by kid from /webhook_verification_key/get, the JWT's signature, iat at most 5 minutes old, request_body_sha256 the body's SHA-256)",
      futureTimestamp: 'accepted', // the docs refuse an old iat only
      parsesJson: false,
      unknownType: { path: ['webhook_code'], value: 'HOOKDRILL_UNKNOWN_CODE' },
    },
    freshFields(body: JsonObject): FreshField[] {
      // A new Item each send: two sends are two webhooks (their bodies, and so their ids, differ).
      // Nothing is a clock: a retry re-posts the same body, only the token is new.
      return typeof body.item_id === 'string' ? [{ path: ['item_id'], make: plaidId }] : [];
    },
  },
);

export const plaid: Provider = {
  ...base,
  deliveryId(_headers, rawBody) {
    return plaidDeliveryId(rawBody);
  },
  eventTypeOf(_headers, rawBody) {
    return typeOf(parseJson(rawBody));
  },
  describe(body, fixtureName) {
    // No deliveryId: the id is of the final bytes, read from them (fixtures/index.ts).
    return { eventType: typeOf(body) ?? fixtureName };
  },
};
