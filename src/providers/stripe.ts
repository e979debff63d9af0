import { randomUUID } from 'node:crypto';
import { UsageError } from '../util/errors.js';
import type { FreshField, JsonObject, JsonValue, Provider, TimingProfile } from './types.js';
import { SignatureError } from './types.js';
import {
  HOUR,
  MINUTE,
  checkTimestamp,
  hmac,
  isObject,
  PEOPLE,
  parseJson,
  randomAlnum,
  requireHeader,
  requireSecrets,
  safeEqual,
  stringField,
  unixSeconds,
  otherStringSecret,
} from './util.js';

const HEADER = 'Stripe-Signature';

/**
 * Stripe publishes only "exponential back off for up to three days" (live) and "three times over a
 * few hours" (test mode); the intervals and the per-attempt timeout are not published. hookdrill
 * doubles from one minute: 12 retries, the last 34 h after the one before, 68 h in all. The 20 s
 * timeout is our choice too. Override with --retry-delays and --timeout.
 */
const liveDelays = Array.from({ length: 12 }, (_, i) => MINUTE * 2 ** i);

const live: TimingProfile = {
  name: 'stripe',
  summary: 'live mode: 20s timeout (chosen), 12 retries doubling from 1m over ~3 days (chosen; Stripe publishes no intervals)',
  published: false,
  timeoutMs: 20_000,
  retryDelaysMs: liveDelays,
  maxRedirects: 0,
  retryAfterStatuses: [],
  stopStatuses: [],
};

const testMode: TimingProfile = {
  ...live,
  name: 'stripe-test',
  summary: 'test mode: 20s timeout (chosen), 3 retries after 1h, 2h, 4h (chosen; Stripe says "three times over a few hours")',
  retryDelaysMs: [HOUR, 2 * HOUR, 4 * HOUR],
};

/** The envelope's keys in the order Stripe writes them (every captured delivery has this order). */
const ENVELOPE_ORDER = ['id', 'object', 'api_version', 'created', 'data', 'livemode', 'pending_webhooks', 'request', 'type'];

/**
 * A thin event's keys in the order of the event-destinations guide's example (id, object, type,
 * livemode, created, related_object); Stripe documents no capture of one, so its layout is taken
 * to be the snapshot events' (pretty, two spaces).
 */
const THIN_ORDER = ['id', 'object', 'type', 'livemode', 'created', 'context', 'reason', 'related_object'];

/** A thin event (an event destination's unversioned payload): `object` is `v2.core.event`. */
export const isThin = (body: JsonValue): boolean => isObject(body) && body.object === 'v2.core.event';

/**
 * A body as Stripe writes it: pretty-printed JSON, two spaces, `\n` line ends, the envelope's
 * keys in Stripe's order (stripe-node#1981, stripe-dotnet#1506, stripe-php#884: receivers that
 * join the body's lines, or re-serialise it, before verifying, fail on exactly this). Non-ASCII
 * text is written as itself, `/` unescaped, as Stripe's own deliveries are.
 */
export function stripeJson(body: JsonObject): string {
  const ordered: JsonObject = {};
  for (const key of isThin(body) ? THIN_ORDER : ENVELOPE_ORDER) if (Object.hasOwn(body, key)) ordered[key] = body[key] as JsonValue;
  for (const [key, value] of Object.entries(body)) if (!Object.hasOwn(ordered, key)) ordered[key] = value;
  return JSON.stringify(ordered, null, 2);
}

/**
 * Whether a body is a test-mode event: its top-level `livemode` (the last one in the text, after
 * `data`) is false. Read from the bytes at each signing, so replays and pulls get it right too.
 */
function isTestMode(rawBody: Buffer): boolean {
  const at = rawBody.lastIndexOf('"livemode"');
  if (at < 0) return false;
  return /^"livemode"\s*:\s*false/.test(rawBody.subarray(at, at + 32).toString('latin1'));
}

/**
 * Stripe's test-mode deliveries carry a `v0=` entry beside `v1=` (a captured test-mode request;
 * stripe-dotnet#1853), signed with a key the endpoint does not hold: every verifier must ignore it,
 * and none can check it. So a stand-in of its shape does: the v1 signature's hex digits reversed,
 * which is never v1 and reveals nothing v1 does not. (A second HMAC cost a third of each signing.)
 */
function v0Signature(v1: string): string {
  let out = '';
  for (let i = v1.length - 1; i >= 0; i--) out += v1[i];
  return out;
}

function signature(rawBody: Buffer, secret: string, t: number): string {
  // The key is the whole secret, `whsec_` prefix included, as UTF-8 — not base64-decoded.
  return hmac('sha256', secret, `${t}.`, rawBody).toString('hex');
}

export const stripe: Provider = {
  name: 'stripe',
  title: 'Stripe',
  signatureHeader: HEADER,
  signedHeaders: [HEADER],
  otherSecret: otherStringSecret,
  timestamped: true,
  rotation: true,
  contract: {
    batching: { events: 'one', source: 'docs.stripe.com/webhooks: "an Event object" per POST' },
    resends: {
      events: 'on-failure',
      source: 'docs.stripe.com/webhooks#retries: live mode retries for up to three days with an exponential back off',
    },
    endpointChecks: [],
    answer: { kind: 'status', source: 'docs.stripe.com/webhooks: "return a successful status code (2xx) prior to any complex logic"' },
    related: {
      about: 'a customer created, then updated',
      first: 'customer.created',
      next: 'customer.updated',
      path: ['data', 'object', 'id'],
      dedupeOn: "the event's id (evt_…)",
      source:
        'docs.stripe.com/api/events: every change to an object is an Event of its own, with its own id; docs.stripe.com/webhooks#handle-duplicate-events: "logging the event IDs you\'ve processed"',
    },
  },
  profiles: { stripe: live, 'stripe-test': testMode },
  defaultProfile: 'stripe',
  verifier: {
    official: "stripe's webhooks.constructEvent",
    // stripe-node and stripe-python refuse only an old timestamp (timestampAge > tolerance).
    futureTimestamp: 'accepted',
    // constructEvent returns JSON.parse(body): a malformed body throws, and the docs answer 400.
    parsesJson: true,
    // Test mode adds a v0= entry (signed with a test key); every verifier ignores schemes but v1.
    withOtherScheme: (value) => `${value},v0=${'6ffbb59b2300aae63f272406069a9788598b792a944a07aba816edb039989a39'}`,
    firstSignatureOnly: (value) => {
      const items = value.split(',');
      return [items.find((i) => i.startsWith('t=')), items.find((i) => i.startsWith('v1='))].filter(Boolean).join(',');
    },
    editSignatures: (value, edit) =>
      value
        .split(',')
        .map((item) => (item.startsWith('v1=') ? `v1=${edit(item.slice(3))}` : item))
        .join(','),
    unknownType: { path: ['type'], value: 'hookdrill.unknown_event_type' },
  },

  checkSecret(secret) {
    if (secret.length === 0) throw new UsageError('stripe: the secret is empty');
  },

  serialize: stripeJson,

  sign(rawBody, secrets, ctx) {
    const t = unixSeconds(ctx.nowMs);
    const signatures = secrets.map((s) => signature(rawBody, s, t));
    const v1 = signatures.map((sig) => `v1=${sig}`).join(',');
    const v0 = isTestMode(rawBody) ? `,v0=${v0Signature(signatures[0] ?? '')}` : '';
    // Names, values and order as Stripe hands a delivery over (stripe-cli#909 shows them before
    // any HTTP client adds its own; the Accept is Ruby rest-client's default, stripe-cli#1167), and
    // the Accept-Encoding captured direct deliveries carry (test/wire/stripe.json has the sources).
    return {
      'Content-Type': 'application/json; charset=utf-8',
      'Cache-Control': 'no-cache',
      'User-Agent': 'Stripe/1.0 (+https://stripe.com/docs/webhooks)',
      Accept: '*/*; q=0.5, application/xml',
      [HEADER]: `t=${t},${v1}${v0}`,
      'Accept-Encoding': 'gzip',
    };
  },

  verify(rawBody, headers, secrets, opts = {}) {
    requireSecrets(secrets);
    const value = requireHeader(headers, HEADER);
    let t: string | undefined;
    const candidates: string[] = [];
    for (const item of value.split(',')) {
      const eq = item.indexOf('=');
      if (eq < 1) throw new SignatureError('malformed_header', `${HEADER} has an item without "=": "${item.trim()}"`);
      const key = item.slice(0, eq).trim();
      const val = item.slice(eq + 1).trim();
      if (key === 't') t = val;
      else if (key === 'v1') candidates.push(val); // every other scheme is ignored, as Stripe's libraries do
    }
    if (t === undefined) throw new SignatureError('malformed_header', `${HEADER} has no t= timestamp`);
    if (candidates.length === 0) throw new SignatureError('malformed_header', `${HEADER} has no v1= signature`);
    const ts = checkTimestamp(t, HEADER, opts.nowMs ?? Date.now(), opts.toleranceSec ?? 300);
    if (opts.headersOnly) return;
    for (const secret of secrets) {
      const expected = signature(rawBody, secret, ts);
      if (candidates.some((c) => safeEqual(c, expected))) return;
    }
    throw new SignatureError('no_match', `no ${HEADER} v1 signature matches the body for any secret`);
  },

  eventTypeOf(_headers, rawBody) {
    return stringField(parseJson(rawBody), 'type');
  },

  deliveryId(_headers, rawBody) {
    return stringField(parseJson(rawBody), 'id');
  },

  freshFields(body: JsonObject) {
    if (isThin(body)) {
      // A thin event's id is longer (`evt_test_65…`, 46 characters after the mode) and its
      // `created` an ISO time with milliseconds (the v2 API's timestamps).
      const mode = body.livemode === true ? '' : 'test_';
      return [
        { path: ['id'], make: () => `evt_${mode}65${randomAlnum(44)}` },
        { path: ['created'], make: (now: number) => new Date(now).toISOString(), clock: true as const },
      ];
    }
    const fields: FreshField[] = [
      { path: ['id'], make: () => `evt_${randomAlnum(24)}` },
      { path: ['created'], make: (now) => unixSeconds(now), clock: true },
    ];
    // The customer's name on an invoice, new each send and in every UTF-8 width (PEOPLE).
    const object = isObject(body.data) && isObject(body.data.object) ? body.data.object : undefined;
    if (object && object.object === 'invoice' && 'customer_name' in object)
      fields.push({ path: ['data', 'object', 'customer_name'], make: (_now, r) => PEOPLE[r % PEOPLE.length]?.join(' ') ?? '' });
    const request = body.request;
    if (isObject(request)) {
      // Null in events the Dashboard or Stripe itself caused; only API-caused events carry them.
      if (typeof request.id === 'string') fields.push({ path: ['request', 'id'], make: () => `req_${randomAlnum(14)}` });
      if (typeof request.idempotency_key === 'string') fields.push({ path: ['request', 'idempotency_key'], make: () => randomUUID() });
    }
    return fields;
  },

  describe(body: JsonValue, fixtureName: string) {
    const id = stringField(body, 'id');
    return { eventType: stringField(body, 'type') ?? fixtureName, ...(id ? { deliveryId: id } : {}) };
  },

  newDeliveryId() {
    return `evt_${randomAlnum(24)}`;
  },
};
