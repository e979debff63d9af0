import { jsonText } from '../util/json-text.js';
import { UsageError } from '../util/errors.js';
import { PageGuard, apiGet, apiUrl } from './client.js';
import type { RequestLimits } from './client.js';
import type { FetchedEvent, SenderRecord, SentEvent } from './types.js';

export interface StripeApiOptions extends RequestLimits {
  apiBase: string;
  apiKey: string;
  /**
   * Stripe-Version for the requests, which renders each event's data at that API version. Absent:
   * the account's default version, which is also what a webhook endpoint created without one gets.
   */
  apiVersion?: string;
}

/** Stripe's List Events covers the last 30 days (https://docs.stripe.com/api/events/list). */
export const STRIPE_RETENTION_SECONDS = 30 * 24 * 3600;

/** An event as Stripe's API lists it: the whole event, as a webhook would carry it. */
export interface StripeEvent {
  id: string;
  type: string;
  created: number;
  [key: string]: unknown;
}

export interface StripePage {
  data: StripeEvent[];
  hasMore: boolean;
  headers: Headers;
}

/** The query of one page of GET /v1/events (https://docs.stripe.com/api/events/list). */
export interface StripePageQuery {
  createdGte?: number;
  createdLte?: number;
  startingAfter?: string;
  endingBefore?: string;
  limit?: number;
  onlyFailed?: boolean;
  types?: readonly string[];
}

/** One page of Stripe's events, newest first, checked to be a list of events. */
export async function stripeEventsPage(o: StripeApiOptions, q: StripePageQuery): Promise<StripePage> {
  const url = apiUrl(o.apiBase, '/v1/events');
  url.searchParams.set('limit', String(q.limit ?? 100));
  if (q.createdGte !== undefined) url.searchParams.set('created[gte]', String(q.createdGte));
  if (q.createdLte !== undefined) url.searchParams.set('created[lte]', String(q.createdLte));
  if (q.onlyFailed) url.searchParams.set('delivery_success', 'false');
  for (const t of q.types ?? []) url.searchParams.append('types[]', t);
  if (q.startingAfter) url.searchParams.set('starting_after', q.startingAfter);
  if (q.endingBefore) url.searchParams.set('ending_before', q.endingBefore);
  const { apiBase: _b, apiKey, apiVersion, ...limits } = o;
  const { body, headers } = await apiGet(url, {
    ...limits,
    name: 'the Stripe API',
    headers: { authorization: `Bearer ${apiKey}`, ...(apiVersion ? { 'stripe-version': apiVersion } : {}) },
    secret: apiKey,
  });
  const page = body as { data?: unknown; has_more?: unknown };
  if (!Array.isArray(page.data) || page.data.some((e) => !isEvent(e)))
    throw new UsageError(`the Stripe API at ${url.origin} answered something that is not a list of events`);
  return { data: page.data as StripeEvent[], hasMore: page.has_more === true, headers };
}

function isEvent(e: unknown): boolean {
  const v = e as Partial<StripeEvent> | null;
  return typeof v === 'object' && v !== null && typeof v.id === 'string' && typeof v.type === 'string' && typeof v.created === 'number';
}

/**
 * Every page of a descending listing (starting_after the last id while has_more), under a page
 * guard: at most so many pages, and never the same cursor twice.
 */
export async function* stripeEventsDescending(o: StripeApiOptions, q: Omit<StripePageQuery, 'startingAfter' | 'endingBefore'>) {
  const guard = new PageGuard('the Stripe API');
  let after: string | undefined;
  for (;;) {
    guard.next(after);
    const page = await stripeEventsPage(o, { ...q, ...(after ? { startingAfter: after } : {}) });
    yield page;
    if (!page.hasMore || page.data.length === 0) return;
    after = page.data[page.data.length - 1]?.id;
  }
}

/**
 * The body of a Stripe webhook for an event: the event object as JSON, indented by two spaces, as
 * Stripe's deliveries are.
 */
export function stripeWebhookBody(event: StripeEvent): Buffer {
  return Buffer.from(jsonText(event, `Stripe event ${event.id}`, 2));
}

export interface StripeListOptions extends StripeApiOptions {
  /** Unix seconds, inclusive. */
  since: number;
  until: number;
  /** Only what Stripe itself saw fail to deliver (delivery_success=false). */
  onlyFailed?: boolean;
  /** Only these event types (types[]: at most 20, `invoice.*` allowed). */
  types?: readonly string[];
}

/**
 * Stripe's record of the events it created in a time range, newest first, every page:
 * GET /v1/events with created[gte]/[lte], limit=100, and starting_after the last id while
 * has_more (https://docs.stripe.com/api/events/list, https://docs.stripe.com/api/pagination).
 * A 429 is waited out, as Stripe asks (https://docs.stripe.com/rate-limits). The list carries
 * each event whole, so fetching one costs no request.
 */
export function stripeRecord(o: StripeListOptions): SenderRecord {
  const raw = new Map<string, StripeEvent>();
  const { since, until, onlyFailed, types, ...api } = o;
  return {
    provider: 'stripe',
    async *list(onListed) {
      let read = 0;
      const pages = stripeEventsDescending(api, {
        createdGte: since,
        createdLte: until,
        ...(onlyFailed ? { onlyFailed } : {}),
        ...(types ? { types } : {}),
      });
      for await (const page of pages) {
        read += page.data.length;
        onListed?.(read);
        for (const e of page.data) {
          raw.set(e.id, e);
          yield { id: e.id, type: e.type, created: e.created };
        }
      }
    },
    async fetch(e: SentEvent): Promise<FetchedEvent> {
      const event = raw.get(e.id);
      if (event === undefined) throw new UsageError(`event ${e.id} was not in Stripe's list`);
      return { body: stripeWebhookBody(event), headers: { 'content-type': 'application/json' } };
    },
  };
}
