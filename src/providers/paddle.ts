import { checkDeclaration } from './declaration.js';
import { declaredProvider } from './declared.js';
import type { JsonObject, Provider, TimingProfile } from './types.js';
import { MINUTE, randomAlnum, timeLike } from './util.js';

/**
 * Paddle Billing, a provider on the declaration engine (providers/declared.ts): its scheme is an
 * HMAC a declaration can say, and what it has beyond it is below. Sources:
 *   - https://developer.paddle.com/webhooks/signature-verification: `Paddle-Signature:
 *     ts=<Unix seconds>;h1=<hex HMAC-SHA256>` over `ts` + ":" + the raw body, keyed with the
 *     destination's secret key as it is (`pdl_ntfset_…`, prefix included); "our SDKs have a
 *     default tolerance of five seconds".
 *   - @paddle/paddle-node-sdk (src/notifications/helpers/webhooks-validator.ts): the header split
 *     on ";" and "=", unknown keys ignored, the last h1 the one compared; `MAX_VALID_TIME_DIFFERENCE
 *     = 5` seconds and one-sided (only a timestamp more than 5 s old is refused); `unmarshal`
 *     parses the body as JSON after the signature passes.
 *   - https://developer.paddle.com/webhooks/respond-to-webhooks: answer 200 within five seconds;
 *     live, 60 retries within 3 days with exponential backoff (Paddle's own figures: from 60 s, a
 *     factor of 1.1); sandbox, 3 retries within 15 minutes. Dedupe on `event_id`
 *     (https://developer.paddle.com/webhooks/about/how-webhooks-work).
 *   - The headers: JSON (`express.raw({ type: 'application/json' })` in the SDK's README), and
 *     Paddle's docs say to match `Paddle` as the user agent. Their order is not documented.
 */

/** 60 s × 1.1ⁿ, 60 times: 20 retries in the first hour, all within 51 h. */
const LIVE_DELAYS = Array.from({ length: 60 }, (_, n) => Math.round(60_000 * 1.1 ** n));

const live: TimingProfile = {
  name: 'paddle',
  summary: "Paddle Billing, live: answer 200 within 5s; 60 retries within 3 days, from 60s growing ×1.1 (Paddle's figures)",
  published: true,
  timeoutMs: 5_000,
  retryDelaysMs: LIVE_DELAYS,
  maxRedirects: 0,
  retryAfterStatuses: [],
  stopStatuses: [],
};

const sandbox: TimingProfile = {
  ...live,
  name: 'paddle-sandbox',
  summary: 'Paddle Billing, sandbox: 5s; 3 retries within 15 minutes (published), at 1m, 4m, 10m (chosen)',
  published: false,
  retryDelaysMs: [MINUTE, 4 * MINUTE, 10 * MINUTE],
};

/** Paddle's ids: a prefix and 26 lowercase characters of Crockford's base32 (evt_01h8bzakzx3hm2fmen703n5q45). */
const paddleId = (prefix: string) => `${prefix}_01${randomAlnum(24, '0123456789abcdefghjkmnpqrstvwxyz')}`;

export const paddle: Provider = declaredProvider(
  checkDeclaration(
    'paddle',
    {
      title: 'Paddle Billing',
      signature: {
        header: 'Paddle-Signature',
        algorithm: 'sha256',
        encoding: 'hex',
        content: '{timestamp}:{body}',
        value: 'ts={timestamp};h1={signature}',
      },
      timestamp: { tolerance: '5s' },
      id: { body: 'event_id' },
      eventType: { body: 'event_type' },
      // As a recorded delivery carries them (test/wire/recorded/paddle.json): Accept and Paddle-Version beside the signature.
      headers: {
        'User-Agent': 'Paddle',
        Accept: 'application/json',
        'Content-Type': 'application/json',
        'Paddle-Signature': '{signature}',
        'Paddle-Version': '1',
      },
      timeout: '5s',
    },
    'src/providers/paddle.ts',
    '.',
  ),
  {
    futureAccepted: true,
    profiles: { paddle: live, 'paddle-sandbox': sandbox },
    contract: {
      batching: { events: 'one', source: 'developer.paddle.com/webhooks/overview: one notification a request' },
      resends: { events: 'on-failure', source: 'developer.paddle.com/webhooks/respond-to-webhooks: 60 retries over 3 days (live)' },
      endpointChecks: [],
      answer: { kind: 'status', source: 'developer.paddle.com/webhooks/respond-to-webhooks: a 200 within 5 seconds' },
      related: {
        about: 'a transaction created, then updated',
        first: 'transaction.created',
        next: 'transaction.updated',
        path: ['data', 'id'],
        dedupeOn: 'event_id',
        source:
          'developer.paddle.com/webhooks/overview: each event has its own event_id; a transaction sends created, then updated as it changes',
      },
    },
    defaultProfile: 'paddle',
    verifier: {
      official: "@paddle/paddle-node-sdk's webhooks.unmarshal",
      // The SDK's window is one-sided; the docs ask only that a replayed (old) one be refused.
      futureTimestamp: 'accepted',
      parsesJson: true,
      unknownType: { path: ['event_type'], value: 'hookdrill.unknown_event_type' },
    },
    freshFields(body: JsonObject) {
      return [
        ...(typeof body.event_id === 'string' ? [{ path: ['event_id'], make: () => paddleId('evt') }] : []),
        ...(typeof body.notification_id === 'string' ? [{ path: ['notification_id'], make: () => paddleId('ntf') }] : []),
        ...(typeof body.occurred_at === 'string'
          ? [{ path: ['occurred_at'], make: (now: number) => timeLike(now, body.occurred_at as string), clock: true as const }]
          : []),
      ];
    },
    otherSecret: (secret) => {
      const other = 'pdl_ntfset_01hkdrl0000000000000000000_notTheReceiversKeyHookdrill00';
      return secret === other ? `${other}2` : other;
    },
  },
);
