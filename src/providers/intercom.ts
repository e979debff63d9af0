import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { checkDeclaration } from './declaration.js';
import { declaredProvider } from './declared.js';
import type { FreshField, JsonObject, JsonValue, Provider, TimingProfile } from './types.js';
import { isObject } from './util.js';

/**
 * Intercom's webhook notifications, on the declaration engine's HMAC scheme (providers/declared.ts):
 * `X-Hub-Signature: sha1=<hex HMAC-SHA1 of the raw body>`, keyed by the app's client secret as its
 * UTF-8 bytes. No timestamp is signed. Intercom publishes no verifier, so its documented rule is the
 * judge. Sources:
 *   - developers.intercom.com/docs/references/webhooks/webhook-models ("Signed notifications"): the
 *     signature, "the hexadecimal (40-byte) representation of an SHA-1 signature computed using the
 *     HMAC algorithm defined in RFC2104" over the body with the app's client_secret, the header's
 *     value "sha1=" then the signature; the example request's headers in order — `User-Agent:
 *     intercom-parrot-service-client/1.0`, `X-Hub-Signature`, `Accept: application/json`,
 *     `Content-Type: application/json` — and its body, pretty-printed with `" : "` between a key and
 *     its value (a Jackson pretty printer's layout).
 *   - The same page, "Webhook notification object": `type: notification_event`, `id` ("the Intercom
 *     defined id representing the notification": the id to dedupe on), `topic`, `app_id`,
 *     `created_at`, `delivery_attempts` ("the number of times this notification has been
 *     attempted"), `first_sent_at`, `data.item` (the object, with its own `type`).
 *   - The same page, "Handling Webhook notifications": "You have 5 seconds to respond to a
 *     notification. If you don't send a response within that time, the notification is treated as
 *     failed and will be retried only once after 1 minute"; a 4xx (but 429) or 5xx is retried after
 *     1 minute, and "if the 2nd retry fails then we mark the notification delivery as failed"; a 410
 *     disables the subscription; a 429 throttles (1 minute to 2 hours).
 *   - developers.intercom.com/docs/webhooks/setting-up-webhooks: a `ping` notification is sent to
 *     the endpoint to test it (the Developer Hub's "Send a test request"), signed like any other; a
 *     real one (in a public PHP test, X-Hub-Signature beside it) has `"id" : null` and the body's
 *     layout: Jackson's pretty printer (`" : "`, `"links" : { }`).
 *   - The fixtures: zulip/zulip zerver/webhooks/intercom/fixtures (company_created.json,
 *     company_updated.json: two real notifications about one company, January 2026; ping.json).
 *   - Not sent by hookdrill: `delivery_attempts` counting up on the one retry (the body is re-sent
 *     as it was; a receiver keyed on `id` is unaffected).
 */

const profile: TimingProfile = {
  name: 'intercom',
  summary: "Intercom: answer within 5s; a failure is retried once, after 1m; 410 disables the subscription (Intercom's webhook models)",
  published: true,
  timeoutMs: 5_000,
  retryDelaysMs: [60_000],
  maxRedirects: 0,
  retryAfterStatuses: [],
  stopStatuses: [410],
};

/** The User-Agent of Intercom's notifications (the docs' example request). */
export const INTERCOM_USER_AGENT = 'intercom-parrot-service-client/1.0';

/** A body as Intercom writes it: two-space indents and `" : "` between a key and its value (the docs' example request). */
export function intercomJson(body: JsonObject): string {
  return jackson(body, 0);
}

/**
 * Jackson's DefaultPrettyPrinter, which Intercom's service writes with (a real ping's `"links" : { }`,
 * recorded in a public test): an object's members on lines of their own, two spaces a level,
 * `" : "` after a key; an empty object `{ }`, an array on one line, `[ a, b ]`, an empty one `[ ]`.
 */
function jackson(v: JsonValue, level: number): string {
  if (Array.isArray(v)) return v.length === 0 ? '[ ]' : `[ ${v.map((x) => jackson(x, level)).join(', ')} ]`;
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  const keys = Object.keys(v);
  if (keys.length === 0) return '{ }';
  const pad = '  '.repeat(level + 1);
  const members = keys.map((k) => `${pad}${JSON.stringify(k)} : ${jackson(v[k] as JsonValue, level + 1)}`);
  return `{\n${members.join(',\n')}\n${'  '.repeat(level)}}`;
}

/** Intercom's ids: a notification's `notif_` + a UUID, an object's 24 hex digits (as the docs' examples are). */
const hexId = () => randomBytes(12).toString('hex');

const base = declaredProvider(
  checkDeclaration(
    'intercom',
    {
      title: 'Intercom',
      signature: {
        header: 'X-Hub-Signature',
        algorithm: 'sha1',
        encoding: 'hex',
        content: '{body}',
        value: 'sha1={signature}',
      },
      id: { body: 'id' },
      eventType: { body: 'topic' },
      headers: {
        'User-Agent': INTERCOM_USER_AGENT,
        'X-Hub-Signature': '{signature}',
        Accept: 'application/json',
        'Content-Type': 'application/json',
      },
      timeout: '5s',
      retries: ['1m'],
    },
    'src/providers/intercom.ts',
    '.',
  ),
  {
    profiles: { intercom: profile },
    defaultProfile: 'intercom',
    serialize: intercomJson,
    contract: {
      batching: {
        events: 'one',
        source: 'developers.intercom.com/docs/references/webhooks/webhook-models: one notification_event a request',
      },
      resends: {
        events: 'on-failure',
        source:
          'developers.intercom.com/docs/references/webhooks/webhook-models, "Handling Webhook notifications": a failure (no answer within 5 s, a 4xx but 429, a 5xx) is retried once, after 1 minute',
      },
      endpointChecks: [
        {
          name: 'ping',
          signed: true,
          answer: 'any 2xx (a notification like any other, topic ping)',
          source: 'developers.intercom.com/docs/webhooks/setting-up-webhooks: a ping notification tests the endpoint',
        },
      ],
      answer: {
        kind: 'status',
        source: 'developers.intercom.com/docs/references/webhooks/webhook-models: a 2xx within 5 seconds',
      },
      related: {
        about: 'a company created, then updated',
        first: 'company.created',
        next: 'company.updated',
        path: ['data', 'item', 'id'],
        dedupeOn: 'the notification id',
        source:
          'developers.intercom.com/docs/references/webhooks/webhook-models: each notification has its own id; company.created and company.updated carry the same company in data.item',
      },
    },
    verifier: {
      official: "Intercom's documented rule (X-Hub-Signature: sha1= and the hex HMAC-SHA1 of the raw body with the app's client secret)",
      futureTimestamp: 'refused', // no timestamp: the cases do not apply
      parsesJson: false,
      unknownType: { path: ['topic'], value: 'hookdrill.unknown_topic' },
    },
    freshFields(body: JsonObject): FreshField[] {
      // A new notification each send (its id) about a new object (data.item.id), made now.
      const out: FreshField[] = [];
      if (typeof body.id === 'string') out.push({ path: ['id'], make: () => `notif_${randomUUID()}` });
      const item = isObject(body.data) && isObject(body.data.item) ? body.data.item : undefined;
      if (typeof item?.id === 'string' && /^[0-9a-f]{24}$/.test(item.id)) out.push({ path: ['data', 'item', 'id'], make: hexId });
      if (typeof body.created_at === 'number')
        out.push({ path: ['created_at'], make: (now: number) => Math.floor(now / 1000), clock: true });
      if (typeof body.first_sent_at === 'number')
        out.push({ path: ['first_sent_at'], make: (now: number) => Math.floor(now / 1000), clock: true });
      return out;
    },
  },
);

export const intercom: Provider = {
  ...base,
  // A ping's id is null (a real one, recorded in a public test): keyed on its body's SHA-256, as a
  // receiver with no id to read does.
  deliveryId(headers, rawBody) {
    return base.deliveryId(headers, rawBody) ?? createHash('sha256').update(rawBody).digest('hex');
  },
};
