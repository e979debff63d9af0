import { STRIPE_RETENTION_SECONDS, stripeEventsDescending, stripeEventsPage, stripeWebhookBody } from '../remote/stripe.js';
import type { StripeApiOptions, StripeEvent } from '../remote/stripe.js';
import { OVERLAP_SECONDS } from './feed.js';
import type { Feed, FeedContext, FeedStart, PulledEvent, StripePosition } from './feed.js';

/** More events than this behind the position, and the feed walks forward page by page instead of holding them all. */
const BACKLOG_AT = 1_000;

/**
 * Stripe's events in the order they happened. GET /v1/events lists newest first
 * (https://docs.stripe.com/api/events/list); each poll lists `created[gte]` a little behind the
 * newest event acknowledged (OVERLAP_SECONDS: events share a second, and a later event can sort
 * behind the cursor), skips the ids it has seen, and delivers the rest oldest first. A backlog
 * (a restart after hours away) is walked forward from the cursor with `ending_before`, 100 a page,
 * each page the events just newer than the cursor (https://docs.stripe.com/api/pagination), so it
 * is never held in memory whole.
 */
export function stripeFeed(api: StripeApiOptions, ctx: FeedContext): Feed {
  const o: StripeApiOptions = {
    ...api,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
    ...(ctx.onWait ? { onWait: ctx.onWait } : {}),
    ...(ctx.follow ? { transientRetries: Number.POSITIVE_INFINITY, maxRateLimited: Number.POSITIVE_INFINITY } : {}),
  };
  const types = ctx.types?.length ? { types: ctx.types } : {};
  let position: StripePosition = { seen: {} };
  let queue: StripeEvent[] = [];
  let backlog = false;
  // After a backlog walk, one listing behind the cursor before saying "no more": it finds what sorted behind it.
  let recheck = false;
  let requests = 0;

  const page = (q: Parameters<typeof stripeEventsPage>[1]) => {
    requests++;
    return stripeEventsPage(o, { ...q, ...types });
  };
  async function* descending(createdGte: number) {
    for await (const p of stripeEventsDescending(o, { createdGte, ...types })) {
      requests++;
      yield p;
    }
  }
  const fresh = (e: StripeEvent) => position.seen[e.id] === undefined;

  /** The events after the position, oldest first, into the queue. */
  async function read(): Promise<void> {
    const cursor = position.cursor;
    if (backlog && cursor) {
      const p = await page({ endingBefore: cursor.id });
      queue = p.data.filter(fresh).reverse();
      // A page of events all seen already: step over it, or the next page would be this one again.
      const newest = p.data[0];
      if (queue.length === 0 && newest) position.cursor = { id: newest.id, created: newest.created };
      if (!p.hasMore) {
        backlog = false;
        recheck = true;
      }
      return;
    }
    recheck = false;
    const floor = cursor ? cursor.created - OVERLAP_SECONDS : (position.floor ?? 0);
    // Only what was not seen counts: the overlap window may hold a burst already delivered.
    const listed: StripeEvent[] = [];
    let count = 0;
    let oldest: StripeEvent | undefined;
    for await (const p of descending(floor)) {
      const unseen = p.data.filter(fresh);
      count += unseen.length;
      if (count <= BACKLOG_AT) listed.push(...unseen);
      else if (cursor) {
        // Too many to hold: walk forward from the cursor instead.
        backlog = true;
        return read();
      }
      oldest = unseen.at(-1) ?? oldest;
    }
    if (count > BACKLOG_AT && oldest) {
      // No cursor yet (a --since start): the oldest event becomes the first, and the rest is walked forward from it.
      backlog = true;
      queue = [oldest];
      return;
    }
    queue = listed.reverse();
  }

  return {
    provider: 'stripe',
    async start(from: FeedStart, nowMs: number) {
      const now = Math.floor(nowMs / 1000);
      const kept = now - STRIPE_RETENTION_SECONDS + 60;
      const notes: string[] = [];
      if (from.from === 'position') {
        position = structuredClone(from.position as StripePosition);
        position.seen ??= {};
        const since = position.cursor?.created ?? position.floor ?? now;
        if (since < kept) {
          notes.push(
            `the last event delivered is from ${iso(since)}: Stripe lists 30 days of events, so those before ${iso(kept)} are not delivered (reconcile lists what the receiver lacks)`,
          );
          position = { floor: kept, seen: {} };
        }
      } else if (from.from === 'time') {
        const at = Math.floor(from.at / 1000);
        if (at < kept) notes.push(`--since reaches past the 30 days Stripe lists: starting at ${iso(kept)}`);
        position = { floor: Math.max(at, kept), seen: {} };
      } else {
        // From now: what is already in the list (and its overlap window) was there before the start.
        position = { floor: now, seen: {} };
        for await (const p of descending(now - OVERLAP_SECONDS)) for (const e of p.data) position.seen[e.id] = e.created;
        const newest = Object.entries(position.seen).sort((a, b) => b[1] - a[1])[0];
        if (newest) position.cursor = { id: newest[0], created: newest[1] };
      }
      return notes;
    },
    async next(max) {
      if (queue.length === 0) await read();
      const events: PulledEvent[] = queue.splice(0, max).map((e) => ({
        id: e.id,
        type: e.type,
        created: e.created,
        body: stripeWebhookBody(e),
        headers: { 'content-type': 'application/json; charset=utf-8' },
      }));
      return { events, more: queue.length > 0 || backlog || recheck, gone: [] };
    },
    advance(e) {
      position.seen[e.id] = e.created;
      if (!position.cursor || e.created >= position.cursor.created) position.cursor = { id: e.id, created: e.created };
      delete position.floor;
      const keepFrom = position.cursor.created - OVERLAP_SECONDS;
      for (const [id, created] of Object.entries(position.seen)) if (created < keepFrom) delete position.seen[id];
    },
    rewind() {
      queue = [];
    },
    position: () => structuredClone(position),
    stats: () => ({ requests }),
  };
}

function iso(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}
