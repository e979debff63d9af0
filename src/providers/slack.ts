import { createHash } from 'node:crypto';
import { UsageError } from '../util/errors.js';
import type { FreshField, JsonObject, JsonValue, OutgoingHeaders, Provider, TimingProfile } from './types.js';
import { SignatureError } from './types.js';
import {
  MINUTE,
  checkTimestamp,
  hmac,
  isObject,
  parseJson,
  randomAlnum,
  requireHeader,
  requireSecrets,
  safeEqual,
  stringField,
  unixSeconds,
  otherStringSecret,
} from './util.js';

const HEADER = 'X-Slack-Signature';
/** A fixture whose body is a form (a slash command, an interaction): `{ "hookdrill_form": { fields } }` (fixtures/index.ts). */
const FORM = 'hookdrill_form';

/**
 * A form-encoded request (a slash command's fields, or one `payload=` of JSON for interactivity):
 * its type and the id it is keyed by — the trigger_id Slack gives every command and most
 * interactions, else a hash of the payload — or undefined for a JSON body.
 */
export function formRequest(rawBody: Buffer): { type: string; id: string | undefined } | undefined {
  if (rawBody.length === 0 || rawBody[0] === 0x7b) return undefined;
  const form = new URLSearchParams(rawBody.toString('utf8'));
  const payloadText = form.get('payload');
  if (payloadText !== null) {
    const payload = parseJson(Buffer.from(payloadText));
    if (!isObject(payload)) return { type: 'payload', id: undefined };
    const type = stringField(payload, 'type') ?? 'payload';
    // No trigger_id (view_closed, block_suggestion): the payload itself, hashed, so that the same
    // request twice is one delivery and two different ones are two.
    const id = stringField(payload, 'trigger_id') ?? `${type}:${createHash('sha256').update(payloadText).digest('hex').slice(0, 32)}`;
    return { type, id };
  }
  if (form.has('command')) return { type: 'command', id: form.get('trigger_id') ?? undefined };
  if (form.has('ssl_check')) return { type: 'ssl_check', id: undefined };
  return undefined;
}

/**
 * Slack's certificate check of a slash command's URL: a form `ssl_check=1&token=…`, sent with no
 * X-Slack-Signature (a captured request in slackapi/bolt-js#1397). @slack/bolt's HTTPReceiver
 * answers it 200 before verifying when the body is a form and `ssl_check` is exactly `1`
 * (HTTPModuleFunctions.parseAndVerifyHTTPRequest; `0`, `true` or a JSON body are verified as usual).
 */
export function isSslCheck(rawBody: Buffer, contentType: string | undefined): boolean {
  if (rawBody[0] === 0x7b || (contentType !== undefined && !contentType.startsWith('application/x-www-form-urlencoded'))) return false;
  return new URLSearchParams(rawBody.toString('utf8')).get('ssl_check') === '1';
}
/** `ssl_check=1&token=` and a verification token are tens of bytes; room to spare. */
const SSL_CHECK_MAX_BYTES = 4096;
const TS_HEADER = 'X-Slack-Request-Timestamp';

/** JSON as Slack writes it (PHP's json_encode): compact, every `/` escaped as `\/`. */
export function slackJson(value: JsonValue): string {
  return JSON.stringify(value).replace(/\//g, '\\/');
}

/**
 * A form value as Slack encodes it (PHP's urlencode): every byte but letters, digits and `-_.`
 * percent-encoded, a space as `+` — so `*` is `%2A` and `'` is `%27` (a recorded interaction:
 * `%2AToday%27s+Events%2A`), where URLSearchParams leaves `*` as it is.
 */
export function slackEncode(text: string): string {
  return encodeURIComponent(text)
    .replace(/%20/g, '+')
    .replace(/[!'()*~]/g, (c) => `%${(c.codePointAt(0) as number).toString(16).toUpperCase()}`);
}

const events: TimingProfile = {
  name: 'slack',
  summary: 'Events API: answer within 3s; 3 retries: at once, after 1m, after 5m; follows 2 redirects',
  published: true,
  timeoutMs: 3_000,
  retryDelaysMs: [0, MINUTE, 5 * MINUTE],
  maxRedirects: 2,
  retryAfterStatuses: [],
  stopStatuses: [],
  stopHeader: { name: 'x-slack-no-retry', value: '1' },
};

function signature(rawBody: Buffer, secret: string, ts: number): string {
  return `v0=${hmac('sha256', secret, `v0:${ts}:`, rawBody).toString('hex')}`;
}

export const slack: Provider = {
  name: 'slack',
  title: 'Slack',
  signatureHeader: HEADER,
  signedHeaders: [HEADER, TS_HEADER],
  otherSecret: otherStringSecret,
  timestamped: true,
  rotation: false,
  contract: {
    batching: { events: 'one', source: 'api.slack.com/apis/events-api#callback-field: one event_callback a request' },
    resends: {
      events: 'on-failure',
      never: ['slash commands', 'interactions'],
      source:
        'api.slack.com/apis/events-api#retries (3 retries: immediately, 1 min, 5 min); slash commands and interactivity are not retried (api.slack.com/interactivity/handling#acknowledgment_response)',
    },
    endpointChecks: [
      {
        name: 'url_verification',
        signed: true,
        answer: 'its challenge, as text or {"challenge"}',
        source: 'api.slack.com/events/url_verification',
      },
      {
        name: 'ssl_check',
        signed: false,
        answer: 'any 200 (to a slash command URL)',
        source: 'api.slack.com/interactivity/slash-commands#ssl',
      },
    ],
    answer: {
      kind: 'status',
      source: 'api.slack.com/apis/events-api#responding: an HTTP 2xx within three seconds (a command may answer with a message)',
    },
    personAnswer: {
      fixture: 'command',
      what: 'a 200 with an empty body (an acknowledgment: nothing is posted) or a message (text, or JSON with text or blocks)',
      deadlineMs: 3_000,
      source:
        'api.slack.com/interactivity/slash-commands#responding_basic_receipt: a 200 within 3000 ms; tools.slack.dev/java-slack-sdk/guides/slash-commands: "If the response body is empty, the response will be recognized as just an acknowledgment. No message will be posted"',
    },
    related: {
      about: 'one message as a message event and an app_mention',
      first: 'message',
      next: 'app_mention',
      path: ['event', 'ts'],
      dedupeOn: 'event_id',
      source:
        'docs.slack.dev/reference/events/app_mention: an app subscribed to message events too receives both for one message, each an event_callback with its own event_id',
    },
  },
  profiles: { slack: events },
  defaultProfile: 'slack',
  verifier: {
    official: "@slack/bolt's request verification",
    // Slack documents |now - ts| > 5 min as a replay; bolt-js refuses only the stale side.
    futureTimestamp: 'accepted-documented-refused',
    // bolt parses the body it verified (JSON, or a form's payload=) and refuses what does not parse.
    parsesJson: true,
    editSignatures: (value, edit) => edit(value),
    unknownType: { path: ['event', 'type'], value: 'hookdrill_unknown_event_type' },
  },

  checkSecret(secret) {
    if (secret.length === 0) throw new UsageError('slack: the signing secret is empty');
  },

  // Slack checks a new endpoint by asking it to echo a challenge; there is nothing to store.
  /**
   * A slash command's answer is posted as a message unless it is empty: an empty body, text, or
   * JSON with text, blocks or attachments is one Slack takes; JSON without them is no message
   * (listen's old {"ok": true}). Other requests' answers are not judged.
   */
  judgeAnswer(rawBody, answer) {
    if (formRequest(rawBody)?.type !== 'command' || answer === '') return undefined;
    const got = parseJson(Buffer.from(answer));
    if (got === undefined) return undefined; // text: posted as it is
    if (isObject(got) && ['text', 'blocks', 'attachments'].some((k) => k in got)) return undefined;
    return `${JSON.stringify(answer.slice(0, 40))} is JSON with no text, blocks or attachments: no message`;
  },

  /** What listen answers a stored command or interaction with: an empty 200, as Bolt's ack() does (the Events API's answer is not read). */
  deferredAnswer(rawBody) {
    return formRequest(rawBody) ? '' : undefined;
  },

  challengeAnswer(rawBody) {
    const body = parseJson(rawBody);
    if (!isObject(body) || body.type !== 'url_verification' || typeof body.challenge !== 'string') return undefined;
    return { challenge: body.challenge };
  },

  mayBeUnsignedCheck(headers) {
    // A form of a few fields with a declared length: anything larger, or chunked, is no ssl_check.
    const type = headers['content-type'];
    const contentType = Array.isArray(type) ? type[0] : type;
    const length = Number(headers['content-length'] ?? Number.NaN);
    return (contentType === undefined || contentType.startsWith('application/x-www-form-urlencoded')) && length <= SSL_CHECK_MAX_BYTES;
  },

  unsignedCheck(rawBody, headers) {
    const type = headers['content-type'];
    return isSslCheck(rawBody, Array.isArray(type) ? type[0] : type);
  },

  isNotice(body) {
    // Sent when Slack stops delivering an app's events for a minute (> 30,000 an hour from one
    // workspace): no event_id, no event; a receiver may log it and drop it.
    return isObject(body) && body.type === 'app_rate_limited';
  },

  sign(rawBody, secrets, ctx): OutgoingHeaders {
    const ts = unixSeconds(ctx.nowMs);
    const json = rawBody[0] === 0x7b;
    if (isSslCheck(rawBody, undefined)) {
      // Unsigned, as Slack sends it: a receiver that verifies first refuses it (bolt answers 200).
      return {
        'User-Agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
        'Accept-Encoding': 'gzip,deflate',
        Accept: 'application/json,*/*',
        'Content-Type': 'application/x-www-form-urlencoded',
      };
    }
    // Names, values and order of captured deliveries (test/wire/slack.json): the Events API asks
    // for `*/*`, commands and interactivity for `application/json,*/*`; both gzip or deflate.
    return {
      'User-Agent': 'Slackbot 1.0 (+https://api.slack.com/robots)',
      'Accept-Encoding': 'gzip,deflate',
      Accept: json ? '*/*' : 'application/json,*/*',
      [HEADER]: signature(rawBody, secrets[0] ?? '', ts),
      [TS_HEADER]: String(ts),
      // Slash commands and interactivity arrive form-encoded; the Events API as JSON.
      'Content-Type': json ? 'application/json' : 'application/x-www-form-urlencoded',
    };
  },

  verify(rawBody, headers, secrets, opts = {}) {
    requireSecrets(secrets);
    const tsText = requireHeader(headers, TS_HEADER);
    const value = requireHeader(headers, HEADER);
    if (!/^v0=[0-9a-f]{64}$/.test(value)) {
      throw new SignatureError('malformed_header', `${HEADER} must be "v0=" and 64 hex digits`);
    }
    const ts = checkTimestamp(tsText, TS_HEADER, opts.nowMs ?? Date.now(), opts.toleranceSec ?? 300);
    if (opts.headersOnly) return;
    for (const secret of secrets) {
      if (safeEqual(value, signature(rawBody, secret, ts))) return;
    }
    throw new SignatureError('no_match', `${HEADER} does not match the body for any secret`);
  },

  eventTypeOf(_headers, rawBody) {
    const form = formRequest(rawBody);
    if (form) return form.type;
    return slack.describe(parseJson(rawBody) ?? null, '').eventType || undefined;
  },

  deliveryId(_headers, rawBody) {
    const form = formRequest(rawBody);
    if (form) return form.id;
    const body = parseJson(rawBody);
    // A rate-limit notice has no event_id: one per workspace and minute, so Slack's retries of it are one.
    if (isObject(body) && body.type === 'app_rate_limited' && typeof body.minute_rate_limited === 'number')
      return `app_rate_limited:${stringField(body, 'team_id') ?? ''}:${body.minute_rate_limited}`;
    return stringField(body, 'event_id');
  },

  retryHeaders(retryNum, reason, rawBody) {
    // Slack retries Events API deliveries only: a slash command or an interaction that fails is
    // not sent again (the user sees an error), so neither carries retry headers.
    if (rawBody[0] !== 0x7b) return undefined;
    return { 'X-Slack-Retry-Num': String(retryNum), 'X-Slack-Retry-Reason': reason };
  },

  /**
   * Events API bodies as Slack writes them (PHP's json_encode): compact, every `/` escaped as `\/`
   * — in URLs, in `tz` ("America\/Chicago"), in message text (captured event_callback bodies from
   * 2017 to 2023; test/wire/slack.json). Non-ASCII is written as itself: no capture shows Slack's
   * choice there.
   */
  serialize: slackJson,
  jsonValue: slackJson,

  encodeForm(fields) {
    // Inside `payload=`, Slack's JSON escapes `/` as `\/` (recorded block_actions bodies: the
    // response_url reads "https:\/\/hooks.slack.com\/actions\/…"): a receiver that compares or
    // re-serialises the JSON instead of verifying the raw bytes breaks on it.
    return Object.entries(fields)
      .map(([k, v]) => `${slackEncode(k)}=${slackEncode(typeof v === 'string' ? v : slackJson(v))}`)
      .join('&');
  },

  freshFields(body: JsonObject) {
    const form = body[FORM];
    if (isObject(form)) {
      // Each command or interaction has a trigger_id of its own: the key it is stored under.
      const trigger = () => `${Date.now()}.${randomAlnum(10, '0123456789')}.${randomAlnum(32, '0123456789abcdef')}`;
      const payload = form.payload;
      if (isObject(payload)) {
        const fields: FreshField[] = [];
        if (typeof payload.trigger_id === 'string') fields.push({ path: [FORM, 'payload', 'trigger_id'], make: trigger });
        // No trigger_id (view_closed, block_suggestion): the view's hash, new on every view state.
        else if (isObject(payload.view) && typeof payload.view.hash === 'string')
          fields.push({
            path: [FORM, 'payload', 'view', 'hash'],
            make: (now: number) => `${unixSeconds(now)}.${randomAlnum(8, '0123456789abcdef')}`,
          });
        // A legacy action or dialog's moment (dialog_submission has no trigger_id: its action_ts
        // makes one submission differ from the next, as on Slack).
        if (typeof payload.action_ts === 'string')
          fields.push({
            path: [FORM, 'payload', 'action_ts'],
            make: (now: number, r: number) => `${unixSeconds(now)}.${String(r % 1_000_000).padStart(6, '0')}`,
          });
        return fields;
      }
      return typeof form.trigger_id === 'string' ? [{ path: [FORM, 'trigger_id'], make: trigger }] : [];
    }
    if (body.type === 'url_verification') return [{ path: ['challenge'], make: () => randomAlnum(48) }];
    // The minute the limit began, rounded down (Slack's app_rate_limited).
    if (body.type === 'app_rate_limited')
      return [{ path: ['minute_rate_limited'], make: (now) => unixSeconds(now) - (unixSeconds(now) % 60) }];
    const fields: FreshField[] = [];
    if (typeof body.event_id === 'string') fields.push({ path: ['event_id'], make: () => slack.newDeliveryId() });
    if (typeof body.event_time === 'number') fields.push({ path: ['event_time'], make: (now) => unixSeconds(now), clock: true });
    const event = body.event;
    if (isObject(event)) {
      // A new message has ts == event_ts: both derive from the event's one random number.
      const ts = (now: number, r: number) => `${unixSeconds(now)}.${String(r % 1_000_000).padStart(6, '0')}`;
      if (typeof event.event_ts === 'string') fields.push({ path: ['event', 'event_ts'], make: ts });
      if (typeof event.ts === 'string') fields.push({ path: ['event', 'ts'], make: ts });
    }
    return fields;
  },

  describe(body: JsonValue, fixtureName: string) {
    const form = isObject(body) ? body[FORM] : undefined;
    if (isObject(form)) {
      const payload = isObject(form.payload) ? form.payload : undefined;
      // Its key is read from the final bytes when it is made (formRequest, via compileFixture).
      return { eventType: payload ? (stringField(payload, 'type') ?? fixtureName) : 'ssl_check' in form ? 'ssl_check' : 'command' };
    }
    const type = stringField(body, 'type');
    const inner = isObject(body) ? stringField(body.event, 'type') : undefined;
    const id = stringField(body, 'event_id');
    return {
      eventType: type === 'event_callback' && inner ? inner : (type ?? fixtureName),
      ...(id ? { deliveryId: id } : {}),
    };
  },

  newDeliveryId() {
    return `Ev${randomAlnum(10, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789')}`;
  },
};
