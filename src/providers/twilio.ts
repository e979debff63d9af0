import { createHash, randomUUID } from 'node:crypto';
import { checkDeclaration } from './declaration.js';
import { declaredProvider } from './declared.js';
import type { FreshField, JsonObject, JsonValue, Provider, TimingProfile } from './types.js';
import { isObject } from './util.js';
import { isJsonText } from './declared-canonical.js';

/**
 * Twilio's webhooks (Messaging, Voice and their status callbacks), on the declaration engine's
 * canonical-string scheme (providers/declared-canonical.ts). Sources:
 *   - twilio.com/docs/usage/webhooks/webhooks-security and the `twilio` package's
 *     lib/webhooks/webhooks.js (getExpectedTwilioSignature, validateRequest; twilio 6.3.1):
 *     X-Twilio-Signature is the base64 HMAC-SHA1, keyed with the account's auth token as text, of
 *     the URL Twilio posts to (its query string included) followed by each POST parameter sorted
 *     by name, written as name + value (a name sent twice: each distinct value, sorted).
 *     validateRequest also tries the URL with its default port written and left out. A receiver
 *     behind a proxy must sign over the URL Twilio was given, not the one it sees.
 *   - The same file: a body that is not a form (application/json, from Twilio's newer products)
 *     is signed over a URL carrying `bodySHA256=<hex SHA-256 of the body>` with no parameters
 *     (validateRequestWithBody: the URL's signature, then the raw body's hash against bodySHA256);
 *     twilio.com/docs/api/errors/57012 says so of every application/json webhook. verify (listen,
 *     verify) takes such a body where the hash is its own, and send and check send one: the
 *     declared scheme signs a JSON body so (declared-canonical.ts's sign, queryPlaced).
 *   - Event Streams' webhook sink (twilio.com/docs/events/webhook-quickstart, and Twilio's blog
 *     "How to Validate Twilio Event Streams Webhooks in Rust", whose example delivery is the body of
 *     fixtures/twilio/stream.test-event.json): the body is a JSON array of CloudEvents (specversion
 *     1.0, type com.twilio.…, source, id, dataschema, datacontenttype, time, data), signed as above
 *     — Studio's flow events among them (twilio/twilio-php issue 744: a Studio sink's events fail a
 *     form validator);
 *     a sink answers within 5 s, and connection overrides are not supported. The stream.message.*
 *     fixtures' data are Messaging.MessageStatus/3's fields as Elastic's Twilio integration shows a
 *     sample event. twilio.com/docs/events/event-delivery-and-duplication: at-least-once, retried
 *     with backoff and jitter for up to four hours; a receiver dedupes — on each CloudEvent's id
 *     (the CloudEvents 1.0 spec: source + id identify an event), which deliveryId reads. Not found
 *     public: a recorded delivery with its headers (hookdrill sends its form webhooks' headers with
 *     Content-Type application/json) and the retry schedule. A sink with batch_events true gets
 *     several CloudEvents an array, up to 64 kB (twilio.com/docs/events/event-streams/sink-resource,
 *     its earlier text); hookdrill sends one, and the contract's batching stays its form webhooks'
 *     `one` (a list would batch the form fixtures too), so listen keeps a batch as one row.
 *   - twilio.com/docs/messaging/twiml#twilios-request-to-your-application and
 *     twilio.com/docs/voice/twiml#twilios-request-to-your-application: the parameters of an
 *     incoming message (MessageSid, SmsSid, AccountSid, MessagingServiceSid, From, To, Body,
 *     NumMedia, NumSegments, the From- and To- geographic fields) and of an incoming call (CallSid,
 *     AccountSid, From, To, CallStatus, ApiVersion, Direction, Caller, Called, …), posted as
 *     application/x-www-form-urlencoded; twilio.com/docs/messaging/guides/track-outbound-message-status
 *     and twilio.com/docs/voice/api/call-resource#statuscallback: the status callbacks' parameters.
 *   - The answer: an incoming message or call is answered with TwiML, `<Response>…</Response>`
 *     served as text/xml or application/xml; anything else is Twilio's error 12300 "Invalid
 *     Content-Type" (JSON, HTML, text/plain) or 12100 "Document parse failure" (XML that is not
 *     TwiML) — Twilio's help center, "Error 12300 Invalid Content-Type for Incoming Webhooks":
 *     "This requirement applies specifically to incoming SMS and Voice webhooks … Outbound status
 *     callbacks and event webhooks can safely return JSON." An empty 200 sends no reply.
 *   - twilio.com/docs/usage/webhooks/webhooks-connection-overrides: Twilio waits 15 s for an
 *     answer (rt and tt default 15000 ms); by default it tries once more only when the connection
 *     itself failed (rc=1, rp=ct), and on a 5xx or a timeout only where the URL asks
 *     (#rc=<count>&rp=<policy>, e.g. rp=5xx,rt), else it fails over to the Fallback URL.
 *   - Not published (in what was found): that I-Twilio-Idempotency-Token stays the same on a
 *     retry. Its name says it is the request's idempotency key; hookdrill keeps it on every
 *     attempt of one request and a receiver dedupes on it.
 *   - A recorded delivery: brianwatroba/kinship-aws __tests__/fixtures/events.ts
 *     (twilioWebhookEvents.valid): an incoming SMS through API Gateway, 2023-04-24, its headers
 *     (Accept: any type, Content-Type, I-Twilio-Idempotency-Token, User-Agent TwilioProxy/1.1,
 *     X-Home-Region us1, X-Twilio-Signature) and its form body, fields in Twilio's order.
 *   - Not published: the order of Twilio's headers (every capture found sorts them).
 */

const profile: TimingProfile = {
  name: 'twilio',
  summary:
    'Twilio: 15s timeout; one retry on a failed connection, others only where the URL asks (#rc=…&rp=…), then the Fallback URL (connection overrides)',
  published: true,
  timeoutMs: 15_000,
  retryDelaysMs: [],
  maxRedirects: 0,
  retryAfterStatuses: [],
  stopStatuses: [],
};

/** A fixture whose body is a form: `{ "hookdrill_form": { fields } }` (fixtures/index.ts). */
const FORM = 'hookdrill_form';

/**
 * A fixture of an Event Streams delivery: `{ "hookdrill_cloudevents": [ CloudEvent, … ] }`, sent as
 * the JSON array alone (serialize). A fixture file holds one JSON object; the array is the body.
 */
export const CLOUDEVENTS = 'hookdrill_cloudevents';

/** The CloudEvents of a fixture body (the wrapper) or of a received one (the array), or undefined. */
function cloudEventsOf(body: JsonValue | undefined): JsonObject[] | undefined {
  const list = Array.isArray(body) ? body : isObject(body) && Array.isArray(body[CLOUDEVENTS]) ? body[CLOUDEVENTS] : undefined;
  return list?.every(isObject) ? (list as JsonObject[]) : undefined;
}

/** The CloudEvents of a request's bytes: a JSON array of objects, or undefined (a form). */
function cloudEventsIn(rawBody: Buffer): JsonObject[] | undefined {
  if (!isJsonText(rawBody)) return undefined;
  try {
    return cloudEventsOf(JSON.parse(rawBody.toString('utf8')) as JsonValue);
  } catch {
    return undefined;
  }
}

const text = (v: JsonValue | undefined) => (typeof v === 'string' ? v : undefined);

/** The region Twilio says a delivery comes from (X-Home-Region), as the recorded delivery's. */
export const TWILIO_HOME_REGION = 'us1';

/** The event of a Twilio request, from its parameters: message.<status> or call.<status>. */
function typeOf(fields: Readonly<Record<string, JsonValue | undefined>>): string | undefined {
  const text = (k: string) => (typeof fields[k] === 'string' ? (fields[k] as string) : undefined);
  if (text('CallSid')) return `call.${text('CallStatus') ?? 'unknown'}`;
  if (text('MessageSid') || text('SmsSid')) return `message.${text('MessageStatus') ?? text('SmsStatus') ?? 'unknown'}`;
  return undefined;
}

const fieldsOfBody = (rawBody: Buffer) => Object.fromEntries(new URLSearchParams(rawBody.toString('utf8')));

/**
 * Whether a request is one Twilio answers with TwiML: an incoming message (status received) or
 * an incoming call (ringing). A status callback needs a 2xx, nothing more.
 */
export function needsTwiml(rawBody: Buffer): boolean {
  const type = typeOf(fieldsOfBody(rawBody));
  return type === 'message.received' || type === 'call.ringing';
}

/** What is wrong with an answer Twilio reads as TwiML, in Twilio's words; undefined when it takes it. */
export function twimlProblem(answer: string, contentType: string | undefined): string | undefined {
  if (answer.trim() === '') return undefined; // an empty 200: no reply, no error
  const type = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (type !== 'text/xml' && type !== 'application/xml')
    return `${type ? `Content-Type ${type}` : 'no Content-Type'}: Twilio's error 12300 Invalid Content-Type (TwiML is text/xml or application/xml)`;
  const xml = answer
    .replace(/^\uFEFF/, '')
    .replace(/^\s*<\?xml[^>]*\?>/, '')
    .trim();
  if (!/^<Response(\s[^>]*)?(\/>|>[\s\S]*<\/Response>)$/.test(xml))
    return `${JSON.stringify(answer.slice(0, 40))} is not a <Response> document: Twilio's error 12100 Document parse failure`;
  return undefined;
}

/** A Twilio SID: its two letters and 32 hex digits, the same for one r (MessageSid = SmsSid = SmsMessageSid; an event's EZ id). */
const sid = (prefix: string, r: number) => `${prefix}${createHash('sha256').update(`${prefix}${r}`).digest('hex').slice(0, 32)}`;

const base = declaredProvider(
  checkDeclaration(
    'twilio',
    {
      title: 'Twilio',
      signature: {
        scheme: 'canonical',
        header: 'X-Twilio-Signature',
        algorithm: 'sha1',
        encoding: 'base64',
        content: '{url}{params}',
        bodyHash: 'bodySHA256',
      },
      id: { header: 'I-Twilio-Idempotency-Token' },
      headers: {
        'User-Agent': 'TwilioProxy/1.1',
        Accept: '*/*',
        'Content-Type': 'application/x-www-form-urlencoded',
        'I-Twilio-Idempotency-Token': '{id}',
        'X-Home-Region': TWILIO_HOME_REGION,
        'X-Twilio-Signature': '{signature}',
      },
      timeout: '15s',
    },
    'src/providers/twilio.ts',
    '.',
  ),
  {
    profiles: { twilio: profile },
    defaultProfile: 'twilio',
    contract: {
      batching: {
        events: 'one',
        source: "twilio.com/docs/messaging/twiml#twilios-request-to-your-application: one message's or call's parameters a request",
      },
      resends: {
        events: 'opt-in',
        source:
          'twilio.com/docs/usage/webhooks/webhooks-connection-overrides: a failed connection is tried once more (rc=1, rp=ct); a 5xx or a timeout only where the URL asks (#rc=…&rp=…), otherwise the Fallback URL is requested',
      },
      endpointChecks: [],
      answer: {
        kind: 'body',
        what: 'TwiML (<Response>…</Response> as text/xml or application/xml) or an empty 200, to an incoming message or call',
        deadlineMs: 15_000,
        otherwise: 'logs error 12300 (or 12100) and requests the Fallback URL',
        fix: 'answer an incoming message or call with <Response/> as text/xml (or an empty 200) and do the work after; status callbacks may answer anything 2xx',
        source:
          "Twilio's help center, Error 12300 Invalid Content-Type for Incoming Webhooks (TwiML as text/xml or application/xml for incoming SMS and Voice; status callbacks may return JSON); twilio.com/docs/usage/webhooks/webhooks-connection-overrides (15 s)",
      },
    },
    verifier: {
      official: "twilio's validateRequest (twilio 6.3.1, lib/webhooks/webhooks.js)",
      futureTimestamp: 'refused', // no timestamp: the cases do not apply
      parsesJson: false,
      unknownType: { path: [FORM, 'SmsStatus'], value: 'hookdrill_unknown' },
    },
    newDeliveryId: randomUUID,
    freshFields(body: JsonObject): FreshField[] {
      const events = cloudEventsOf(body);
      if (events) return events.flatMap((e, i) => freshCloudEvent(e, i));
      // A new message or call each send: its SIDs made new, the message's three alike.
      const fields = isObject(body[FORM]) ? body[FORM] : {};
      const out: FreshField[] = [];
      for (const [name, prefix] of [
        ['MessageSid', 'SM'],
        ['SmsSid', 'SM'],
        ['SmsMessageSid', 'SM'],
        ['CallSid', 'CA'],
      ] as const)
        if (typeof fields[name] === 'string') out.push({ path: [FORM, name], make: (_now: number, r: number) => sid(prefix, r) });
      return out;
    },
  },
);

/**
 * An Event Streams event made new each send: its id (EZ + 32 hex digits, what a receiver dedupes
 * on), the message's or call's SID in its data and its source path, and its times (now).
 */
function freshCloudEvent(e: JsonObject, i: number): FreshField[] {
  const out: FreshField[] = [];
  // The id keeps its SID prefix: EZ for a messaging event, the account's AC for Event Streams' test event.
  const id = text(e.id);
  if (id) out.push({ path: [CLOUDEVENTS, i, 'id'], make: (_now: number, r: number) => sid(/^[A-Z]{2}/.exec(id)?.[0] ?? 'EZ', r + i) });
  const data = isObject(e.data) ? e.data : {};
  const sidOf = (r: number) => sid(text(data.messageSid) ? 'SM' : 'CA', r + i);
  for (const k of ['messageSid', 'callSid'])
    if (typeof data[k] === 'string') out.push({ path: [CLOUDEVENTS, i, 'data', k], make: (_now: number, r: number) => sidOf(r) });
  const source = text(e.source);
  const inSource = source ? /(SM|CA)[0-9a-f]{32}/.exec(source) : null;
  if (source && inSource)
    out.push({ path: [CLOUDEVENTS, i, 'source'], make: (_now: number, r: number) => source.replace(inSource[0], sidOf(r)) });
  const when = (now: number) => new Date(now).toISOString();
  if (typeof e.time === 'string') out.push({ path: [CLOUDEVENTS, i, 'time'], make: when, clock: true });
  if (typeof data.timestamp === 'string') out.push({ path: [CLOUDEVENTS, i, 'data', 'timestamp'], make: when, clock: true });
  return out;
}

export const twilio: Provider = {
  ...base,
  ...(base.queryPlaced ? { queryPlaced: { ...base.queryPlaced, verifiedBy: "twilio's validateRequestWithBody" } } : {}),
  // An Event Streams fixture goes out as its array of CloudEvents, compact (Twilio's blog's example delivery).
  serialize(body) {
    const events = isObject(body) && Array.isArray(body[CLOUDEVENTS]) ? body[CLOUDEVENTS] : undefined;
    return JSON.stringify(events ?? body);
  },
  describe(body, fixtureName) {
    const [first] = cloudEventsOf(body) ?? [];
    if (first) return { eventType: text(first.type) ?? fixtureName, ...(text(first.id) ? { deliveryId: text(first.id) as string } : {}) };
    const fields = isObject(body) && isObject(body[FORM]) ? body[FORM] : {};
    return { eventType: typeOf(fields) ?? fixtureName };
  },
  eventTypeOf(_headers, rawBody) {
    const events = cloudEventsIn(rawBody);
    if (events) return text(events[0]?.type);
    return typeOf(fieldsOfBody(rawBody));
  },
  // Event Streams' dedupe key is each CloudEvent's id (twilio.com/docs/events/event-delivery-and-duplication).
  deliveryId(headers, rawBody) {
    const events = cloudEventsIn(rawBody);
    if (events) return text(events[0]?.id);
    return base.deliveryId(headers, rawBody);
  },
  // A phone number's webhooks and Event Streams' sink are two endpoints: check's other-types sends one kind.
  subscriptionKind(body) {
    return cloudEventsOf(body) ? 'event-streams' : 'webhooks';
  },
  judgeAnswer(rawBody, answer, contentType) {
    return needsTwiml(rawBody) ? twimlProblem(answer, contentType) : undefined;
  },
  // listen answers an incoming message or call with an empty 200 (no reply); a status callback's answer is not read.
  deferredAnswer(rawBody) {
    return needsTwiml(rawBody) ? '' : undefined;
  },
};
