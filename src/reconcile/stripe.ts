import { UsageError } from '../errors.js';
import { sleep } from '../wait.js';

/** One event in the sender's record. */
export interface SentEvent {
  id: string;
  type: string;
  /** Unix seconds. */
  created: number;
  /** The event as the API returned it (what --fix stores), when the API gave it. */
  raw?: unknown;
}

export interface StripeListOptions {
  apiBase: string;
  apiKey: string;
  /** Unix seconds, inclusive. */
  since: number;
  until: number;
  /** Only what Stripe itself saw fail to deliver (delivery_success=false). */
  onlyFailed?: boolean;
  /** How often a 429 is waited out before giving up (default 6). */
  maxRateLimited?: number;
  signal?: AbortSignal;
}

/**
 * Stripe's record of the events it created in a time range, newest first, every page:
 * GET /v1/events with created[gte]/[lte], limit=100, and starting_after the last id while
 * has_more (https://docs.stripe.com/api/events/list, https://docs.stripe.com/api/pagination).
 * A 429 is waited out (Retry-After when given, else doubling from 1 s), as Stripe asks
 * (https://docs.stripe.com/rate-limits). Any other error is one line with Stripe's own message;
 * the key is never in it.
 */
export async function* listStripeEvents(o: StripeListOptions): AsyncGenerator<SentEvent> {
  let after: string | undefined;
  for (;;) {
    const url = new URL('/v1/events', o.apiBase);
    url.searchParams.set('limit', '100');
    url.searchParams.set('created[gte]', String(o.since));
    url.searchParams.set('created[lte]', String(o.until));
    if (o.onlyFailed) url.searchParams.set('delivery_success', 'false');
    if (after) url.searchParams.set('starting_after', after);
    const page = await getPage(url, o);
    for (const e of page.data) yield { id: e.id, type: e.type, created: e.created, raw: e };
    if (!page.has_more || page.data.length === 0) return;
    after = page.data[page.data.length - 1]?.id;
  }
}

interface Page {
  data: SentEvent[];
  has_more: boolean;
}

async function getPage(url: URL, o: StripeListOptions): Promise<Page> {
  for (let attempt = 0; ; attempt++) {
    let res: Response;
    try {
      res = await fetch(url, {
        headers: { authorization: `Bearer ${o.apiKey}`, 'stripe-version': '2025-09-30.clover' },
        signal: o.signal ?? AbortSignal.timeout(30_000),
      });
    } catch (err) {
      throw new UsageError(`the Stripe API at ${url.origin} did not answer: ${(err as Error).message}`);
    }
    if (res.status === 429 && attempt < (o.maxRateLimited ?? 6)) {
      await res.arrayBuffer();
      const retryAfter = Number(res.headers.get('retry-after'));
      await sleep(Number.isFinite(retryAfter) && retryAfter >= 0 ? retryAfter * 1_000 : 1_000 * 2 ** attempt, o.signal);
      continue;
    }
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    if (!res.ok) {
      const message = (body as { error?: { message?: string } } | undefined)?.error?.message ?? text.slice(0, 200);
      throw new UsageError(`the Stripe API answered ${res.status}: ${mask(message, o.apiKey)}`);
    }
    const page = body as Page | undefined;
    if (!page || !Array.isArray(page.data))
      throw new UsageError(`the Stripe API at ${url.origin} answered something that is not a list of events`);
    return page;
  }
}

/** Stripe echoes part of a bad key (sk_test_****1234); the key we hold is never shown whole or in part. */
function mask(text: string, key: string): string {
  return key ? text.split(key).join('***') : text;
}
