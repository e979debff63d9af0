import { ApiError, PageGuard } from '../remote/client.js';
import { GITHUB_RETENTION_SECONDS, deliveryType, githubDeliveriesPage, githubDeliveryRequest, rateBudget } from '../remote/github.js';
import type { GithubApiOptions, HookDelivery } from '../remote/github.js';
import { OVERLAP_SECONDS } from './feed.js';
import type { Feed, FeedContext, FeedStart, FeedStats, GithubPosition, PulledEvent } from './feed.js';

/**
 * A GitHub hook's deliveries in the order they happened. GitHub records every delivery of a hook,
 * wherever it points and whether or not it was answered, and lists them newest first
 * (https://docs.github.com/en/rest/webhooks/repo-deliveries); each poll walks the list down to a
 * little behind the newest delivery acknowledged, keeps the new guids — not redeliveries, which
 * carry an event already seen — and fetches each one's request (`GET …/deliveries/{id}`: its
 * event, action and payload) just before it is delivered.
 */
export function githubFeed(api: GithubApiOptions, ctx: FeedContext): Feed {
  const o: GithubApiOptions = {
    ...api,
    ...(ctx.signal ? { signal: ctx.signal } : {}),
    ...(ctx.onWait ? { onWait: ctx.onWait } : {}),
    // Under --follow a primary rate limit (up to an hour) is waited out, and said.
    ...(ctx.follow
      ? { transientRetries: Number.POSITIVE_INFINITY, maxRateLimited: Number.POSITIVE_INFINITY, maxWaitMs: Number.POSITIVE_INFINITY }
      : {}),
  };
  const wanted = (type: string) => !ctx.types?.length || ctx.types.some((t) => t === type || t === type.split('.')[0]);
  let position: GithubPosition = { seen: {} };
  let queue: HookDelivery[] = [];
  const stats: FeedStats = { requests: 0 };
  const at = (d: HookDelivery) => Math.floor(Date.parse(d.delivered_at) / 1000);
  const note = (headers: Headers) => {
    stats.requests++;
    const b = rateBudget(headers);
    if (b) stats.budget = b;
  };

  /** Every delivery down to `floor` (unix seconds), newest first, under a page guard. */
  async function list(floor: number): Promise<HookDelivery[]> {
    const guard = new PageGuard('the GitHub API');
    const out: HookDelivery[] = [];
    let cursor: string | undefined;
    for (;;) {
      guard.next(cursor);
      const page = await githubDeliveriesPage(o, cursor ? { cursor } : {});
      note(page.headers);
      let older = false;
      for (const d of page.deliveries) {
        if (at(d) < floor) older = true;
        else out.push(d);
      }
      if (older || !page.next) return out;
      cursor = page.next;
    }
  }

  async function read(): Promise<void> {
    const cursor = position.cursor;
    const floor = cursor ? cursor.at - OVERLAP_SECONDS : (position.floor ?? 0);
    const listed = await list(floor);
    const fresh = new Map<string, HookDelivery>();
    for (const d of listed) {
      if (d.redelivery || position.seen[d.guid] !== undefined || !wanted(deliveryType(d))) continue;
      // Newest first: the last attempt of a guid seen is its first.
      fresh.set(d.guid, d);
    }
    queue = [...fresh.values()].sort((a, b) => a.id - b.id);
    // Nothing to deliver: the cursor moves to the newest delivery listed (not wanted, or a
    // redelivery), so that a hook whose matching events are rare is not listed back to the last
    // match on every poll.
    const newest = listed.reduce<HookDelivery | undefined>((m, d) => (!m || d.id > m.id ? d : m), undefined);
    if (queue.length === 0 && newest && (!position.cursor || newest.id > position.cursor.id)) {
      position.cursor = { id: newest.id, guid: newest.guid, at: at(newest) };
      delete position.floor;
    }
  }

  return {
    provider: 'github',
    async start(from: FeedStart, nowMs: number) {
      const now = Math.floor(nowMs / 1000);
      const kept = now - GITHUB_RETENTION_SECONDS + 60;
      const notes: string[] = [];
      if (from.from === 'position') {
        position = structuredClone(from.position as GithubPosition);
        position.seen ??= {};
        const since = position.cursor?.at ?? position.floor ?? now;
        if (since < kept) {
          notes.push(
            `the last delivery pulled is from ${iso(since)}: GitHub keeps 3 days of deliveries, so those before ${iso(kept)} are gone (redeliver them from the hook's settings)`,
          );
          position = { floor: kept, seen: {} };
        }
      } else if (from.from === 'time') {
        const since = Math.floor(from.at / 1000);
        if (since < kept) notes.push(`--since reaches past the 3 days GitHub keeps deliveries: starting at ${iso(kept)}`);
        position = { floor: Math.max(since, kept), seen: {} };
      } else {
        // The floor a little behind the local clock: a clock ahead of GitHub's must not skip what it records meanwhile.
        position = { floor: now - OVERLAP_SECONDS, seen: {} };
        const listed = await list(now - OVERLAP_SECONDS);
        for (const d of listed) position.seen[d.guid] = at(d);
        const newest = listed.reduce<HookDelivery | undefined>((m, d) => (!m || d.id > m.id ? d : m), undefined);
        if (newest) position.cursor = { id: newest.id, guid: newest.guid, at: at(newest) };
      }
      return notes;
    },
    async next(max) {
      if (queue.length === 0) await read();
      const events: PulledEvent[] = [];
      const gone: { id: string; type: string; error: string }[] = [];
      while (queue.length > 0 && events.length < max) {
        const d = queue[0] as HookDelivery;
        try {
          const req = await githubDeliveryRequest(o, d.id, d.guid);
          stats.requests++;
          events.push({ id: d.guid, type: deliveryType(d), created: at(d), body: req.body, headers: req.headers, attempt: d.id });
        } catch (err) {
          // One delivery GitHub will no longer give (past its retention since it was listed) does
          // not hold the others; an interruption or a refused credential does.
          if (!(err instanceof ApiError) || err.status !== 404) throw err;
          stats.requests++;
          gone.push({ id: d.guid, type: deliveryType(d), error: err.message });
          position.seen[d.guid] = at(d);
        }
        queue.shift();
      }
      return { events, more: queue.length > 0, gone };
    },
    advance(e) {
      const attempt = e.attempt ?? 0;
      position.seen[e.id] = e.created;
      if (!position.cursor || attempt > position.cursor.id) position.cursor = { id: attempt, guid: e.id, at: e.created };
      delete position.floor;
      const keepFrom = position.cursor.at - OVERLAP_SECONDS;
      for (const [guid, t] of Object.entries(position.seen)) if (t < keepFrom) delete position.seen[guid];
    },
    rewind() {
      queue = [];
    },
    position: () => structuredClone(position),
    stats: () => ({ ...stats }),
  };
}

function iso(seconds: number): string {
  return new Date(seconds * 1000).toISOString().replace('.000Z', 'Z');
}
