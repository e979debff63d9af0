import { checkDeclaration } from './declaration.js';
import { declaredProvider } from './declared.js';
import type { JsonObject, JsonValue, Provider, TimingProfile } from './types.js';
import { isObject } from './util.js';

const SECOND = 1_000;

/**
 * Google Cloud Pub/Sub push subscriptions, on the declaration engine's JWT scheme
 * (providers/declared-jwt.ts). Sources:
 *   - cloud.google.com/pubsub/docs/push ("Receive messages"): one message a POST, JSON
 *     `{"message": {"attributes", "data" (base64), "messageId", "message_id", "publishTime",
 *     "publish_time", "orderingKey"?}, "subscription": "projects/P/subscriptions/S",
 *     "deliveryAttempt"?}`; the status codes 102, 200, 201, 202 and 204 acknowledge the message,
 *     any other (or none within the acknowledgment deadline) is a negative acknowledgment and the
 *     message is sent again. Delivery is at least once: the same messageId comes again (what a
 *     receiver dedupes on). `deliveryAttempt` is only present where the subscription has a
 *     dead-letter policy (not the default, so not sent here).
 *   - cloud.google.com/pubsub/docs/authenticate-push-subscriptions: with authentication on, Pub/Sub
 *     sends `Authorization: Bearer <JWT>`, an OpenID Connect ID token Google signs (RS256, `kid`
 *     from https://www.googleapis.com/oauth2/v3/certs) with the claims aud (the configured audience,
 *     by default the push endpoint's URL), azp, email (the push service account), email_verified,
 *     exp, iat (an hour apart), iss (https://accounts.google.com or accounts.google.com) and sub.
 *     A receiver must verify the signature, the issuer, the expiry and the audience: the docs'
 *     samples call google-auth-library's OAuth2Client.verifyIdToken({idToken, audience}), which
 *     allows 300 s of clock skew on iat and exp — the official verifier check is calibrated to.
 *   - google.pubsub.v1.RetryPolicy (the API reference): with a retry policy, redelivery backs off
 *     exponentially between minimum_backoff (default 10 s) and maximum_backoff (default 600 s),
 *     "best effort"; the acknowledgment deadline (ackDeadlineSeconds, default 10 s, at most 600 s)
 *     is how long a push waits for its answer. Not published: the factor (doubling, chosen) and how
 *     many times (until the message's retention, 7 days by default: the first 10 are sent here).
 *   - A recorded delivery: a Gmail notification pushed by Pub/Sub to an AWS API Gateway (a public
 *     repository, wasifalam23/Q-tasks google-api/gmail-api/eventAws.js, Apr 2023): User-Agent
 *     `APIs-Google; (+https://developers.google.com/webmasters/APIs-Google.html)`, `From:
 *     noreply@google.com`, `Accept: application/json`, `Accept-Encoding: gzip, deflate, br`,
 *     `Content-Type: application/json`, and the body compact JSON with a newline after it; an
 *     authenticated one on Cloud Run (PADAS/gundi-integration-action-runner app/conftest.py) shows
 *     the order: content-type, authorization, content-length, accept, from, user-agent, …,
 *     accept-encoding.
 * In test mode hookdrill signs with its own RSA key (made once, kept 0600) and serves its JWKS at
 * http://127.0.0.1:9477/oauth2/v3/certs (HOOKDRILL_JWKS_PORT; delivery/key-server.ts): a receiver
 * is pointed there instead of www.googleapis.com. Chosen: the push service account's email and id.
 */

export const PUBSUB_USER_AGENT = 'APIs-Google; (+https://developers.google.com/webmasters/APIs-Google.html)';
/** The push service account the token names (chosen: a project's own is configured per subscription). */
export const PUBSUB_SERVICE_ACCOUNT = 'hookdrill-push@hookdrill-test.iam.gserviceaccount.com';
const SERVICE_ACCOUNT_ID = '104729361528440137215';

/** The first ten redeliveries of RetryPolicy's defaults: from 10 s, doubling, at most 600 s. */
const BACKOFF_MS = Array.from({ length: 10 }, (_, n) => Math.min(10 * SECOND * 2 ** n, 600 * SECOND));

const profile: TimingProfile = {
  name: 'pubsub',
  summary:
    'Google Cloud Pub/Sub push: a 10s acknowledgment deadline; redelivered with backoff from 10s to 600s (RetryPolicy defaults, published), doubling and ten times (chosen: Pub/Sub retries until the message expires)',
  published: false,
  timeoutMs: 10 * SECOND,
  retryDelaysMs: BACKOFF_MS,
  maxRedirects: 0,
  retryAfterStatuses: [],
  stopStatuses: [],
};

/** A message id as Pub/Sub writes one: a decimal number of 16 or 17 digits, as a string. */
function messageId(nowMs: number, r: number): string {
  return String(10_000_000_000_000_000n + BigInt(r) * 1_000_000n + BigInt(nowMs % 1_000_000));
}

const message = (body: JsonValue): JsonObject | undefined => (isObject(body) && isObject(body.message) ? body.message : undefined);

const base = declaredProvider(
  checkDeclaration(
    'pubsub',
    {
      title: 'Google Cloud Pub/Sub',
      signature: {
        scheme: 'jwt',
        issuer: 'https://accounts.google.com',
        issuers: ['accounts.google.com'],
        claims: { azp: SERVICE_ACCOUNT_ID, email: PUBSUB_SERVICE_ACCOUNT, email_verified: true, sub: SERVICE_ACCOUNT_ID },
      },
      id: { body: 'message.messageId' },
      eventType: { body: 'message.attributes.eventType' },
      headers: {
        'Content-Type': 'application/json',
        Authorization: '{signature}',
        Accept: 'application/json',
        From: 'noreply@google.com',
        'User-Agent': PUBSUB_USER_AGENT,
        'Accept-Encoding': 'gzip, deflate, br',
      },
      timeout: '10s',
    },
    'src/providers/pubsub.ts',
    '.',
  ),
  {
    profiles: { pubsub: profile },
    defaultProfile: 'pubsub',
    contract: {
      batching: { events: 'one', source: 'cloud.google.com/pubsub/docs/push: one message a push request' },
      resends: {
        events: 'on-failure',
        source:
          'cloud.google.com/pubsub/docs/push: a status other than 102, 200, 201, 202 or 204, or no answer within the acknowledgment deadline, is a negative acknowledgment and the message is sent again (at least once, the same messageId)',
      },
      endpointChecks: [],
      answer: {
        kind: 'status',
        // 102 (Processing) is an interim answer, never a final one: only the 2xx of the list are.
        only: [200, 201, 202, 204],
        source:
          'cloud.google.com/pubsub/docs/push: 102, 200, 201, 202 and 204 acknowledge the message; any other status is a negative acknowledgment, the message sent again',
      },
    },
    verifier: {
      official:
        "google-auth-library's OAuth2Client.verifyIdToken (the token's signature by the JWKS's key, iss accounts.google.com, exp and iat with 300 s of clock skew, aud the push endpoint)",
      officialVersions: 'google-auth-library 10.9',
      futureTimestamp: 'refused',
      parsesJson: false,
      unknownType: { path: ['message', 'attributes', 'eventType'], value: 'hookdrill.unknown_event_type' },
    },
    // Pub/Sub writes its JSON compact, then a newline (the recorded delivery's body).
    serialize: (body: JsonObject) => `${JSON.stringify(body)}\n`,
    freshFields(body: JsonObject) {
      // A new message each send: its id in both spellings, and when it was published, in both.
      const m = message(body);
      if (!m) return [];
      const id = (now: number, r: number) => messageId(now, r);
      const at = (now: number) => new Date(now).toISOString();
      return [
        ...(typeof m.messageId === 'string' ? [{ path: ['message', 'messageId'], make: id }] : []),
        ...(typeof m.message_id === 'string' ? [{ path: ['message', 'message_id'], make: id }] : []),
        ...(typeof m.publishTime === 'string' ? [{ path: ['message', 'publishTime'], make: at, clock: true as const }] : []),
        ...(typeof m.publish_time === 'string' ? [{ path: ['message', 'publish_time'], make: at, clock: true as const }] : []),
      ];
    },
  },
);

export const pubsub: Provider = base;
