import { createHash } from 'node:crypto';
import type { JsonObject, Provider } from './types.js';
/**
 * A provider is its delivery contract, not only its signature: how it groups events in a body,
 * what it re-sends and what it never does, what a redelivery changes, the endpoint checks it sends
 * and the answer each needs, the answer a delivery needs. send, check, chaos, listen and profiles
 * read these facts, so no command asks a provider's name — and every fact names its source, as
 * the wire facts do (`hookdrill profiles PROVIDER` shows them).
 */

/** Where a fact comes from: the provider's docs, its SDK, a recorded delivery — or "chosen" where it publishes none. */
export interface Sourced {
  source: string;
}

/** One event a body (Stripe), or a list of them at a path of the body (LINE's `events`; SendGrid's and HubSpot's body is the list). */
export type Batching =
  | { events: 'one' }
  | {
      events: 'list';
      /** Where the list is: [] for a body that is the list itself. */
      path: readonly string[];
      /** The most events the provider puts in one body. */
      max: number;
      /** Within one event: its id, what a receiver dedupes each event on. */
      id: readonly string[];
      /** Within one event: its type. */
      type: readonly string[];
      /** How many events `send` and check's batch case put in a body by default: a realistic batch, not the most. */
      typical: number;
    };

/**
 * Whether the provider sends a request again when it was not answered 2xx in time: on a schedule
 * (its profile's retries), only where the account turns redelivery on, only by a person's hand,
 * or never. `never` lists the kinds it never re-sends even so (Slack's slash commands).
 */
export interface Resends {
  events: 'on-failure' | 'opt-in' | 'by-hand' | 'never';
  never?: readonly string[];
}

/** What a redelivered event carries that the first attempt did not: a flag, or a count of attempts. */
export interface RedeliveryMarker {
  /** Within one event (a batch's each). */
  path: readonly string[];
  /** `true`: the field is true on a redelivery (LINE's isRedelivery); `count`: it counts attempts up (HubSpot's attemptNumber). */
  becomes: 'true' | 'count';
  /** The field's value on the first attempt. */
  first: boolean | number;
}

/** A request the provider sends to check an endpoint, not to deliver an event. */
export interface EndpointCheck {
  /** As the provider names it: url_verification, endpoint.url_validation, PING, Verify. */
  name: string;
  /** Signed like any delivery: a receiver must verify it before answering, and refuse it forged. */
  signed: boolean;
  /** The answer it needs, in words. */
  answer: string;
  /** What check sends as it, where the contract makes it: a batch body with no events (LINE's Verify). */
  request?: 'empty-batch';
  /**
   * What answering it unverified gives away, where the provider says to verify it first and the
   * answer itself is what it asks for (Twitch: a stranger's subscription enabled on your URL):
   * forged-check fails such a receiver, where it only warns one that answers a check nothing hangs on.
   */
  unverified?: string;
}

/**
 * Deliveries about one thing (a customer created then updated, two events about one message):
 * distinct deliveries, each with its own id, that a receiver must all keep. A receiver that
 * dedupes on the thing instead of the delivery drops every one after the first.
 */
export interface Related {
  /** In words: "an issue created, then updated". */
  about: string;
  /** The shipped fixtures of the first delivery and the next one. */
  first: string;
  next: string;
  /** Within one event: the id of the thing both are about — what a wrong receiver dedupes on. */
  path: readonly string[];
  /** What to dedupe on instead, as the provider names it. */
  dedupeOn: string;
}

/** What a delivery needs back: a 2xx, or a body of a given kind within a deadline. */
export type DeliveryAnswer =
  /**
   * `only`: the statuses the provider takes as success (Mailgun's 200; Pub/Sub's 102, 200, 201, 202
   * and 204); any other 2xx is retried.
   */
  | { kind: 'status'; only?: number | readonly number[] }
  | {
      kind: 'body';
      what: string;
      deadlineMs: number;
      /** What the provider does with a wrong answer, in its words (Discord: shows "This interaction failed"). */
      otherwise?: string;
      /** How a receiver answers right (Discord: a deferred response, {"type": 5}, and the work after). */
      fix?: string;
    };

/** Whether the provider takes this answer as a delivery made: a 2xx, or exactly the status it names. */
export function answerTaken(c: DeliveryContract, status: number | undefined): boolean {
  if (status === undefined || status < 200 || status >= 300) return false;
  const only = onlyTaken(c);
  return only === undefined || only.includes(status);
}

/** The statuses alone the provider takes as success, where it does not take every 2xx. */
export function onlyTaken(c: DeliveryContract): readonly number[] | undefined {
  if (c.answer.kind !== 'status' || c.answer.only === undefined) return undefined;
  return typeof c.answer.only === 'number' ? [c.answer.only] : c.answer.only;
}

/** Those statuses in words: "200", or "200, 201, 202 or 204" (`and` to list them as a set). */
export function statusesInWords(statuses: readonly number[], last: 'or' | 'and' = 'or'): string {
  return statuses.length === 1 ? String(statuses[0]) : `${statuses.slice(0, -1).join(', ')} ${last} ${String(statuses.at(-1))}`;
}

export interface DeliveryContract {
  batching: Batching & Sourced;
  resends: Resends & Sourced;
  redelivery?: RedeliveryMarker & Sourced;
  endpointChecks: readonly (EndpointCheck & Sourced)[];
  answer: DeliveryAnswer & Sourced;
  /**
   * A request a person waits on (Slack's slash commands), where the events need only a 2xx: the
   * shipped fixture that is one, and the answer the provider takes for it.
   */
  personAnswer?: { fixture: string; what: string; deadlineMs: number } & Sourced;
  /** Deliveries the provider sends about one thing, each its own delivery. */
  related?: Related & Sourced;
  /**
   * How a receiver refuses a forged delivery where that is not a 4xx: it discards it — keeps none
   * of it — and still answers 2xx (Microsoft Graph: every POST is answered 202 within 3 s, an item
   * whose clientState is wrong is dropped). check judges such a refusal by the store, not the status.
   */
  refusal?: { kind: 'discard'; what: string } & Sourced;
  /** How what is signed is normalised before signing, where it is (HubSpot v3 decodes parts of the URL). */
  normalises?: { what: string } & Sourced;
}

/** The events of a body under a contract: the list, or the body itself as one event. */
export function eventsOf(c: DeliveryContract, body: unknown): unknown[] {
  if (c.batching.events === 'one') return [body];
  let v = body;
  for (const key of c.batching.path)
    v = typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>)[key] : undefined;
  return Array.isArray(v) ? v : [];
}

/** Where a path inside one event is in the body: under the batch's list (its first event) for a batching provider. */
export function bodyPathOf(c: DeliveryContract, path: readonly string[]): string[] {
  return c.batching.events === 'list' ? [...c.batching.path, '0', ...path] : [...path];
}

/** A value at a path inside an event, where it is text or a number. */
export function fieldOf(event: unknown, path: readonly string[]): string | undefined {
  let v = event;
  for (const key of path) v = typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>)[key] : undefined;
  return typeof v === 'string' || typeof v === 'number' ? String(v) : undefined;
}

/** Whether the provider may deliver the same request twice: the dedupe cases mean something only then. */
export function mayResend(c: DeliveryContract): boolean {
  return c.resends.events !== 'never';
}

/** The contract's facts as lines, each with its source: what `profiles PROVIDER` shows. */
export function describeContract(c: DeliveryContract): { fact: string; source: string }[] {
  const b = c.batching;
  const out = [
    {
      fact:
        b.events === 'one'
          ? 'one event a request'
          : `several events in one body: ${b.path.length ? `a list at ${b.path.join('.')}` : 'the body is a list'}, up to ${b.max}; each event's own id at ${b.id.join('.')}`,
      source: b.source,
    },
    {
      fact: {
        'on-failure': 're-sends a request not answered 2xx in time, on its schedule',
        'opt-in': 'redelivers only where the account turns redelivery on',
        'by-hand': 'never re-sends by itself: a person redelivers by hand',
        never: 'never sends a request twice',
      }[c.resends.events].concat(c.resends.never?.length ? `; never re-sends ${c.resends.never.join(', ')}` : ''),
      source: c.resends.source,
    },
  ];
  if (c.redelivery)
    out.push({
      fact: `a redelivery says so: ${c.redelivery.path.join('.')} ${c.redelivery.becomes === 'true' ? 'is true' : 'counts the attempts'} (${String(c.redelivery.first)} on the first)`,
      source: c.redelivery.source,
    });
  for (const e of c.endpointChecks)
    out.push({
      fact: `endpoint check ${e.name} (${e.signed ? 'signed' : 'unsigned'}): ${e.answer}${e.unverified ? `; answered unverified, ${e.unverified}` : ''}`,
      source: e.source,
    });
  out.push({
    fact:
      c.answer.kind === 'status'
        ? c.answer.only !== undefined
          ? `a delivery needs ${statusesInWords(onlyTaken(c) ?? [])} exactly; any other answer, another 2xx too, is retried`
          : 'a delivery needs a 2xx, nothing more'
        : `a delivery needs ${c.answer.what} within ${c.answer.deadlineMs / 1000} s`,
    source: c.answer.source,
  });
  if (c.personAnswer)
    out.push({
      fact: `a ${c.personAnswer.fixture} request, which a person waits on, needs ${c.personAnswer.what} within ${c.personAnswer.deadlineMs / 1000} s`,
      source: c.personAnswer.source,
    });
  if (c.related)
    out.push({
      fact: `sends several deliveries about one thing (${c.related.about}), each with its own id: dedupe on ${c.related.dedupeOn}, never on ${c.related.path.join('.')}`,
      source: c.related.source,
    });
  if (c.refusal) out.push({ fact: `a forged delivery is discarded, not refused: ${c.refusal.what}`, source: c.refusal.source });
  if (c.normalises) out.push({ fact: `signs ${c.normalises.what}`, source: c.normalises.source });
  return out;
}

/** One event of a batch, as its own delivery: its id, its type, and the provider's envelope around it alone. */
export interface BatchPart {
  deliveryId: string;
  eventType: string | undefined;
  body: Buffer;
}

/**
 * A batch body split into its events, each in the provider's envelope on its own (LINE's
 * {destination, events: [e]}, SendGrid's and HubSpot's [e]): what listen stores, a row an event.
 * Undefined for a provider that sends one event a request, or a body that is not such a batch;
 * an empty list for a batch of no events (LINE's Verify).
 */
export function splitBatch(
  c: DeliveryContract,
  rawBody: Buffer,
  /** How the provider writes a body (SendGrid's `[{…}]\r\n`): each row as the provider would send its event alone. */
  serialize: (body: unknown) => string = JSON.stringify,
): BatchPart[] | undefined {
  const b = c.batching;
  if (b.events === 'one') return undefined;
  let body: unknown;
  try {
    body = JSON.parse(rawBody.toString('utf8'));
  } catch {
    return undefined;
  }
  const container = b.path.length
    ? (b.path.slice(0, -1).reduce<unknown>((v, k) => (isRecord(v) ? v[k] : undefined), body) as unknown)
    : undefined;
  const last = b.path[b.path.length - 1];
  const list = b.path.length === 0 ? body : isRecord(container) && last !== undefined ? container[last] : undefined;
  if (!Array.isArray(list)) return undefined;
  return list.map((event) => {
    const alone = withList(body, b.path, [event]);
    const text = serialize(alone);
    return {
      // An event without its id is keyed by its own bytes: its redeliveries still dedupe.
      deliveryId: fieldOf(event, b.id) ?? `sha256:${createHash('sha256').update(JSON.stringify(event)).digest('hex')}`,
      eventType: fieldOf(event, b.type),
      body: Buffer.from(text),
    };
  });
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A copy of the body with the list at `path` replaced; at [] the list is the body. */
export function withList(body: unknown, path: readonly string[], list: unknown[]): unknown {
  if (path.length === 0) return list;
  const out = structuredClone(body) as Record<string, unknown>;
  let at = out;
  for (const key of path.slice(0, -1)) at = at[key] as Record<string, unknown>;
  at[path[path.length - 1] as string] = list;
  return out;
}

/**
 * The body of a redelivery, as the provider writes it: each event's marker set (LINE's
 * deliveryContext.isRedelivery true, HubSpot's attemptNumber the retry's count). The same bytes
 * where the contract has no marker, or the body is not JSON.
 */
export function markRedelivery(c: DeliveryContract, body: Buffer, retry: number): Buffer {
  const m = c.redelivery;
  if (!m || retry < 1) return body;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return body;
  }
  const events = eventsOf(c, parsed);
  if (events.length === 0) return body;
  for (const event of events) {
    if (!isRecord(event)) continue;
    let at: Record<string, unknown> = event;
    for (const key of m.path.slice(0, -1)) {
      if (!isRecord(at[key])) at[key] = {};
      at = at[key] as Record<string, unknown>;
    }
    at[m.path[m.path.length - 1] as string] = m.becomes === 'true' ? true : retry;
  }
  return Buffer.from(JSON.stringify(parsed));
}

/** A body written as the provider writes its bodies (Stripe's pretty-printed, SendGrid's CRLFs), a list of events too. */
export const serialized = (provider: Pick<Provider, 'serialize'>, body: unknown): string =>
  provider.serialize ? provider.serialize(body as JsonObject) : JSON.stringify(body);
