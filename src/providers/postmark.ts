import { createHash, randomUUID } from 'node:crypto';
import { checkDeclaration } from './declaration.js';
import { declaredProvider } from './declared.js';
import type { FreshField, JsonObject, JsonValue, Provider, TimingProfile } from './types.js';
import { isObject, parseJson } from './util.js';

/**
 * Postmark's webhooks, on the declaration engine's token scheme `basic` (providers/declared-token.ts):
 * Postmark signs nothing. A webhook is protected by HTTP Basic credentials written into its URL
 * (`https://<username>:<password>@example.com/webhook`, or the Webhooks API's `HttpAuth`), which
 * Postmark sends as `Authorization: Basic base64(user:password)` (RFC 7617). There is no official
 * verifier, so the documented rule is the judge: the credentials equal to the hook's (compared in
 * constant time). Sources:
 *   - postmarkapp.com/developer/webhooks/webhooks-overview ("Protecting your webhook": Basic HTTP
 *     authentication in the URL, or the IP ranges; "Note: the datetimes within webhook data will be
 *     in ISO 8601 format"); postmarkapp.com/developer/api/webhooks-api (`HttpAuth: {Username,
 *     Password}`, `HttpHeaders`, `Triggers`: Open, Click, Delivery, Bounce, SpamComplaint,
 *     SubscriptionChange).
 *   - Each record's body and its `RecordType`: postmarkapp.com/developer/webhooks/delivery-webhook,
 *     bounce-webhook (`ID`, the bounce's own id for the Bounce API), spam-complaint-webhook,
 *     open-tracking-webhook (one request per open unless the hook posts the first open only:
 *     `FirstOpen`), click-webhook (one per click), subscription-change-webhook, inbound-webhook
 *     (the parsed email, which carries no `RecordType`).
 *   - The headers: two real deliveries logged in public repositories — CityOfBoston/boston.gov-d8
 *     (bos_email's PostmarkAPI.php, an inbound delivery captured at a Pipedream endpoint:
 *     `accept: application/json`, `user-agent: Postmark`, `content-type: application/json`) and an
 *     n8n workflow's pinned Postmark inbound request (the same three); Postmark's support article
 *     1115 ("How do modular webhooks work"): "Content-type: application/json and User-agent:
 *     Postmark" where no custom header overrides them.
 *   - Retries: postmarkapp.com/support/article/understanding-inbound-webhook-retries-in-postmark —
 *     anything but 200 is retried 10 times over ~10.5 h (1 min, 5 min, 10 min ×3, 15 min, 30 min,
 *     1 h, 2 h, 6 h), and a 403 stops the retries at once. The webhooks' pages publish no schedule
 *     of their own: hookdrill applies this one to every record type (chosen), and a timeout of 10 s
 *     (chosen: Postmark publishes none).
 *   - The id: Postmark sends no delivery id, in a header or the body, and its records share no id
 *     field (a Bounce has `ID`; a Delivery only `MessageID` and `Recipient`; an Open or a Click
 *     one request per opening or click of one message). A retry posts the same record again, so a
 *     delivery is its body: hookdrill keys it on the SHA-256 of the body's bytes, in hex — what a
 *     receiver with nothing better computes. Deduping on `MessageID` is wrong: a Delivery, its
 *     Opens and its Clicks all carry the message's one MessageID.
 */

const profile: TimingProfile = {
  name: 'postmark',
  summary:
    'Postmark: 10 retries over ~10.5h (1m, 5m, 10m, 10m, 10m, 15m, 30m, 1h, 2h, 6h) on anything but 200; 403 stops them; 10s timeout (chosen: not published)',
  // The schedule is published (for inbound webhooks); the timeout, and that the outbound records follow it, are chosen.
  published: false,
  timeoutMs: 10_000,
  retryDelaysMs: [60_000, 300_000, 600_000, 600_000, 600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000],
  maxRedirects: 0,
  retryAfterStatuses: [],
  stopStatuses: [403],
};

/** The User-Agent of Postmark's webhook requests (the recorded deliveries; support article 1115). */
export const POSTMARK_USER_AGENT = 'Postmark';

/** The delivery id of a Postmark request: the SHA-256 of its body's bytes (Postmark sends none, and a retry re-posts the same record). */
export function postmarkDeliveryId(rawBody: Buffer): string {
  return createHash('sha256').update(rawBody).digest('hex');
}

/** A record's type: its RecordType, or Inbound for a parsed inbound email (which has none). */
function recordTypeOf(body: JsonValue | undefined): string | undefined {
  if (!isObject(body)) return undefined;
  if (typeof body.RecordType === 'string') return body.RecordType;
  return body.MessageStream === 'inbound' || isObject(body.FromFull) ? 'Inbound' : undefined;
}

/** The moment fields of each record (ISO 8601, as Postmark writes them), made the moment of each send. */
const MOMENTS = ['DeliveredAt', 'BouncedAt', 'ReceivedAt', 'ChangedAt'];

const base = declaredProvider(
  checkDeclaration(
    'postmark',
    {
      title: 'Postmark',
      signature: { scheme: 'basic', header: 'Authorization' },
      eventType: { body: 'RecordType' },
      headers: {
        Accept: 'application/json',
        'User-Agent': POSTMARK_USER_AGENT,
        'Content-Type': 'application/json',
        Authorization: '{signature}',
      },
      timeout: '10s',
    },
    'src/providers/postmark.ts',
    '.',
  ),
  {
    profiles: { postmark: profile },
    defaultProfile: 'postmark',
    contract: {
      batching: {
        events: 'one',
        source: 'postmarkapp.com/developer/webhooks/*: each record (a Delivery, a Bounce, an Open, a Click …) posted on its own',
      },
      resends: {
        events: 'on-failure',
        source:
          'postmarkapp.com/support/article/understanding-inbound-webhook-retries-in-postmark: anything but 200 is retried 10 times over ~10.5 h; a 403 stops the retries',
      },
      endpointChecks: [],
      answer: {
        kind: 'status',
        only: 200,
        source:
          'postmarkapp.com/support/article/understanding-inbound-webhook-retries-in-postmark: "If Postmark doesn\'t receive a 200 OK response from your server, we\'ll automatically retry" — a 200 is success, any other answer is retried',
      },
      related: {
        about: 'a message delivered, then opened',
        first: 'Delivery',
        next: 'Open',
        path: ['MessageID'],
        dedupeOn: 'the whole record (its body: Postmark sends no delivery id)',
        source:
          "postmarkapp.com/developer/webhooks/delivery-webhook and open-tracking-webhook: a Delivery and each Open of one message are records of their own, each carrying the message's MessageID",
      },
    },
    verifier: {
      official: "Postmark's documented rule (HTTP Basic credentials from the webhook's URL, RFC 7617; Postmark has no official verifier)",
      futureTimestamp: 'refused', // no timestamp: the cases do not apply
      parsesJson: false,
      unknownType: { path: ['RecordType'], value: 'HookdrillUnknownRecord' },
    },
    newDeliveryId: randomUUID,
    freshFields(body: JsonObject): FreshField[] {
      // Each send a new message (its MessageID), a new bounce (its ID) and the moment it happened:
      // two sends are two records, as two of Postmark's are. No field is a `clock`: a retry
      // re-posts the record unchanged, so its bytes, and its id, stay.
      const out: FreshField[] = [];
      if (typeof body.MessageID === 'string') out.push({ path: ['MessageID'], make: () => randomUUID() });
      if (typeof body.ID === 'number') out.push({ path: ['ID'], make: (_now: number, r: number) => 1_000_000 + r });
      for (const k of MOMENTS) if (typeof body[k] === 'string') out.push({ path: [k], make: (now: number) => new Date(now).toISOString() });
      return out;
    },
  },
);

export const postmark: Provider = {
  ...base,
  deliveryId(_headers, rawBody) {
    return postmarkDeliveryId(rawBody);
  },
  eventTypeOf(_headers, rawBody) {
    return recordTypeOf(parseJson(rawBody));
  },
  describe(body, fixtureName) {
    // No deliveryId: the id is of the final bytes, read from them (fixtures/index.ts).
    return { eventType: recordTypeOf(body) ?? fixtureName };
  },
};
