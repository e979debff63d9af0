import { STRIPE_RETENTION_SECONDS, stripeEventsDescending, stripeEventsPage, stripeWebhookBody } from '../remote/stripe.js';
import type { StripeApiOptions, StripeEvent } from '../remote/stripe.js';
import { PageGuard } from '../remote/client.js';
import { OVERLAP_SECONDS } from './feed.js';
import type { Feed, FeedContext, FeedStart, PulledEvent, StripePosition } from './feed.js';

/** More events than this behind the position, and the feed walks forward page by page instead of holding them all. */
const BACKLOG_AT = 1_000;

/**
 * Stripe's events in the order they happened. GET /v1/events lists newest first
 * (https://docs.stripe.com/api/events/list); each poll lists `created[gte]` a little behind the
 * newest event acknowledged (OVERLAP_SECONDS: events share a second, and a later event can sort
 * behind the cursor), skips the ids it has seen, and delivers the rest oldest first. A backlog of
 * more than 1,000 unseen events (a restart after hours away) starts at its oldest and is walked
 * forward with `ending_before`, 100 a page, each page the events just newer than the last
 * (https://docs.stripe.com/api/pagination), so it is never held in memory whole.
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
  /**
   * A forward walk through a backlog: the events newer, in Stripe's order, than `from`, a page at a
   * time. `from` moves to the page's newest once the whole page is delivered, and back to the last
   * one acknowledged after a failure. Apart from the cursor: the walk may start behind it.
   */
  let walk: { from: string; guard: PageGuard; pageNewest?: string; lastAcked?: string; last: boolean } | undefined;
  /** The oldest unseen event of a backlog, delivered first: the walk starts from it once acknowledged. */
  let anchor: StripeEvent | undefined;
  // After a walk, one listing behind the cursor before saying "no more": it finds what sorted behind it.
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
    if (anchor) {
      queue = [anchor];
      return;
    }
    if (walk) {
      walk.guard.next(walk.from);
      const p = await page({ endingBefore: walk.from });
      const newest = p.data[0]?.id;
      if (!newest) {
        // Nothing newer (whatever has_more says): the walk is over.
        walk = undefined;
        recheck = true;
        queue = [];
        return;
      }
      queue = p.data.filter(fresh).reverse();
      walk.lastAcked = undefined;
      walk.last = !p.hasMore;
      walk.pageNewest = newest;
      return;
    }
    recheck = false;
    const cursor = position.cursor;
    const floor = cursor ? cursor.created - OVERLAP_SECONDS : (position.floor ?? 0);
    // Only what was not seen counts: the overlap window may hold a burst already delivered.
    const listed: StripeEvent[] = [];
    let count = 0;
    let oldest: StripeEvent | undefined;
    for await (const p of descending(floor)) {
      const unseen = p.data.filter(fresh);
      count += unseen.length;
      if (count <= BACKLOG_AT) listed.push(...unseen);
      oldest = unseen.at(-1) ?? oldest;
    }
    if (count > BACKLOG_AT && oldest) {
      // Too many to hold: the oldest unseen event first (it may sort behind the cursor), then a
      // walk forward from it, a page at a time.
      anchor = oldest;
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
        // The floor a little behind the local clock: a clock ahead of Stripe's must not skip what it creates meanwhile.
        position = { floor: now - OVERLAP_SECONDS, seen: {} };
        for await (const p of descending(now - OVERLAP_SECONDS)) for (const e of p.data) position.seen[e.id] = e.created;
        const newest = Object.entries(position.seen).sort((a, b) => b[1] - a[1])[0];
        if (newest) position.cursor = { id: newest[0], created: newest[1] };
      }
      return notes;
    },
    async next(max) {
      if (queue.length === 0 && walk?.pageNewest) {
        // The whole page was delivered: the walk goes on after it, or ends with it.
        walk.from = walk.pageNewest;
        delete walk.pageNewest;
        if (walk.last) {
          walk = undefined;
          recheck = true;
        }
      }
      if (queue.length === 0) await read();
      const events: PulledEvent[] = queue.splice(0, max).map((e) => ({
        id: e.id,
        type: e.type,
        created: e.created,
        body: stripeWebhookBody(e),
        headers: { 'content-type': 'application/json; charset=utf-8' },
      }));
      return { events, more: queue.length > 0 || walk !== undefined || anchor !== undefined || recheck, gone: [] };
    },
    advance(e) {
      if (anchor?.id === e.id) {
        anchor = undefined;
        walk = { from: e.id, guard: new PageGuard('the Stripe API'), last: false };
      } else if (walk) walk.lastAcked = e.id;
      position.seen[e.id] = e.created;
      if (!position.cursor || e.created >= position.cursor.created) position.cursor = { id: e.id, created: e.created };
      delete position.floor;
      const keepFrom = position.cursor.created - OVERLAP_SECONDS;
      for (const [id, created] of Object.entries(position.seen)) if (created < keepFrom) delete position.seen[id];
    },
    rewind() {
      queue = [];
      if (walk) {
        // Start again just after the last event acknowledged: the failed one is the first of the next page.
        if (walk.lastAcked) walk.from = walk.lastAcked;
        delete walk.pageNewest;
        walk.last = false;
        walk.guard = new PageGuard('the Stripe API');
      }
    },
    position: () => structuredClone(position),
    stats: () => ({ requests }),
  };
}

function iso(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}
