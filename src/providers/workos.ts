import { checkDeclaration } from './declaration.js';
import { declaredProvider } from './declared.js';
import type { JsonObject, Provider, TimingProfile } from './types.js';
import { MINUTE, randomAlnum, timeLike } from './util.js';

/**
 * WorkOS, a provider on the declaration engine (providers/declared.ts). Sources:
 *   - https://workos.com/docs/events/data-syncing/webhooks: a POST with the `WorkOS-Signature`
 *     header, `t=<Unix milliseconds>, v1=<hex HMAC-SHA256>` of `t` + "." + the JSON body, keyed
 *     with the endpoint's secret as it is; answer 200, or WorkOS "will retry up to 12 times, with
 *     exponential backoff over 3 days"; non-production environments retry "for several minutes".
 *   - @workos-inc/node (src/common/crypto/signature-provider.ts): the header split on "," into its
 *     first two entries, each split on "="; only a timestamp more than `tolerance` (180000 ms by
 *     default) old is refused, one-sided; and the HMAC is over `JSON.stringify(payload)`, the body
 *     as parsed (the docs' handler reads it with express.json()). A receiver that re-serialises is
 *     doing what the SDK does, so check does not judge re-serialising (verifier.verifiesParsedJson).
 *   - @workos-inc/node 9 and later declare Node >= 22.11 (their package.json `engines`; this
 *     project runs on Node 20), yet 12.3.0 runs on Node 20: run on it (issue 52, item 3), its
 *     constructEvent verifies a string payload as the raw bytes (a re-serialised body refused)
 *     and still accepts a parsed body by JSON.stringify of it, as 8.13.0 does (8.13.0 refuses a
 *     string payload). Both are the SDK's own ways, so re-serialising is still not judged; the
 *     versions are said (verifier.officialVersions). devDependencies keep 8.13 (the last major
 *     whose engines include Node 20).
 *   - The event: `{ id: "event_…", event, data, created_at }` (the SDK's EventResponseBase);
 *     its `id` is what to dedupe on (the events API pages by it).
 *   - Not published: how long WorkOS waits for an answer (10 s chosen), the retries' intervals
 *     (doubling from a minute chosen: 12 within 68 hours), the headers' order.
 */

/** 1 min doubling, 12 times: the last at 34 h, all within 68 h (WorkOS: 12 retries over 3 days). */
const LIVE_DELAYS = Array.from({ length: 12 }, (_, n) => MINUTE * 2 ** n);

const live: TimingProfile = {
  name: 'workos',
  summary: 'WorkOS, production: 12 retries over 3 days (published), doubling from 1m (chosen); 10s timeout (chosen: not published)',
  published: false,
  timeoutMs: 10_000,
  retryDelaysMs: LIVE_DELAYS,
  maxRedirects: 0,
  retryAfterStatuses: [],
  stopStatuses: [],
};

const staging: TimingProfile = {
  ...live,
  name: 'workos-staging',
  summary: 'WorkOS, non-production: retries "for several minutes" (published), at 30s, 1m, 2m, 4m (chosen); 10s timeout (chosen)',
  retryDelaysMs: [30_000, MINUTE, 2 * MINUTE, 4 * MINUTE],
};

/** WorkOS's ids: a prefix and a ULID (event_01HZBC6N1EB1ZY7KG32X5VFVGV). */
const ulid = () => `01${randomAlnum(24, '0123456789ABCDEFGHJKMNPQRSTVWXYZ')}`;

export const workos: Provider = declaredProvider(
  checkDeclaration(
    'workos',
    {
      title: 'WorkOS',
      signature: {
        header: 'WorkOS-Signature',
        algorithm: 'sha256',
        encoding: 'hex',
        content: '{timestamp}.{body}',
        value: 't={timestamp}, v1={signature}',
      },
      timestamp: { unit: 'ms', tolerance: '3m' },
      id: { body: 'id' },
      eventType: { body: 'event' },
      headers: { 'Content-Type': 'application/json', 'WorkOS-Signature': '{signature}' },
      timeout: '10s',
    },
    'src/providers/workos.ts',
    '.',
  ),
  {
    futureAccepted: true,
    profiles: { workos: live, 'workos-staging': staging },
    contract: {
      batching: { events: 'one', source: 'workos.com/docs/events/data-syncing/webhooks: one event a request' },
      resends: {
        events: 'on-failure',
        source: 'workos.com/docs/events/data-syncing/webhooks: retried with exponential back-off for up to 3 days',
      },
      endpointChecks: [],
      answer: { kind: 'status', source: 'workos.com/docs/events/data-syncing/webhooks: a 200 OK' },
      related: {
        about: 'a user created, then updated',
        first: 'user.created',
        next: 'user.updated',
        path: ['data', 'id'],
        dedupeOn: "the event's id (event_…)",
        source: 'workos.com/docs/events: each event its own id; user.created, then user.updated about one user',
      },
    },
    defaultProfile: 'workos',
    verifier: {
      official: "@workos-inc/node's webhooks.constructEvent",
      futureTimestamp: 'accepted',
      // The docs' handler parses the body (express.json()) and so does the SDK's deserializeEvent.
      parsesJson: true,
      verifiesParsedJson: true,
      officialVersions: '@workos-inc/node 8.13.0 and 12.3.0',
      unknownType: { path: ['event'], value: 'hookdrill.unknown_event_type' },
    },
    freshFields(body: JsonObject) {
      return [
        ...(typeof body.id === 'string' ? [{ path: ['id'], make: () => `event_${ulid()}` }] : []),
        ...(typeof body.created_at === 'string'
          ? [{ path: ['created_at'], make: (now: number) => timeLike(now, body.created_at as string), clock: true as const }]
          : []),
      ];
    },
  },
);
