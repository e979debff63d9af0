import { UsageError } from '../util/errors.js';
import { apiGet, apiUrl } from './api.js';
import type { FetchedEvent, SenderRecord, SentEvent } from './types.js';

export interface StripeListOptions {
  apiBase: string;
  apiKey: string;
  /** Unix seconds, inclusive. */
  since: number;
  until: number;
  /** Only what Stripe itself saw fail to deliver (delivery_success=false). */
  onlyFailed?: boolean;
  /** Only these event types (types[]: at most 20, `invoice.*` allowed). */
  types?: readonly string[];
  /** How often a 429 is waited out (default 6). */
  maxRateLimited?: number;
  signal?: AbortSignal;
}

interface StripeEvent {
  id: string;
  type: string;
  created: number;
}

/**
 * Stripe's record of the events it created in a time range, newest first, every page:
 * GET /v1/events with created[gte]/[lte], limit=100, and starting_after the last id while
 * has_more (https://docs.stripe.com/api/events/list, https://docs.stripe.com/api/pagination).
 * A 429 is waited out, as Stripe asks (https://docs.stripe.com/rate-limits). The list carries
 * each event whole, so fetching one costs no request.
 */
export function stripeRecord(o: StripeListOptions): SenderRecord {
  const raw = new Map<string, unknown>();
  return {
    provider: 'stripe',
    async *list(onListed) {
      let after: string | undefined;
      let read = 0;
      for (;;) {
        const url = apiUrl(o.apiBase, '/v1/events');
        url.searchParams.set('limit', '100');
        url.searchParams.set('created[gte]', String(o.since));
        url.searchParams.set('created[lte]', String(o.until));
        if (o.onlyFailed) url.searchParams.set('delivery_success', 'false');
        for (const t of o.types ?? []) url.searchParams.append('types[]', t);
        if (after) url.searchParams.set('starting_after', after);
        const { body } = await apiGet(url, {
          name: 'the Stripe API',
          headers: { authorization: `Bearer ${o.apiKey}`, 'stripe-version': '2025-09-30.clover' },
          secret: o.apiKey,
          ...(o.maxRateLimited !== undefined ? { maxRateLimited: o.maxRateLimited } : {}),
          ...(o.signal ? { signal: o.signal } : {}),
        });
        const page = body as { data?: StripeEvent[]; has_more?: boolean };
        if (!Array.isArray(page.data))
          throw new UsageError(`the Stripe API at ${url.origin} answered something that is not a list of events`);
        read += page.data.length;
        onListed?.(read);
        for (const e of page.data) {
          raw.set(e.id, e);
          yield { id: e.id, type: e.type, created: e.created };
        }
        if (!page.has_more || page.data.length === 0) return;
        after = page.data[page.data.length - 1]?.id;
      }
    },
    async fetch(e: SentEvent): Promise<FetchedEvent> {
      const event = raw.get(e.id);
      if (event === undefined) throw new UsageError(`event ${e.id} was not in Stripe's list`);
      return { body: Buffer.from(JSON.stringify(event)), headers: { 'content-type': 'application/json' } };
    },
  };
}
