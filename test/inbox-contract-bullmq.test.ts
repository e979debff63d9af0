import { openInbox } from '../src/inbox/index.js';
import { inboxContract } from './contract/inbox.contract.js';
import { freshQueue, redisMissing } from './helpers/redis.js';

/**
 * BullMQ keeps time itself — a lease is a lock that Redis expires, a retry is due by the workers'
 * clocks — so the BullMQ inbox refuses a chosen `now` (UsageError) rather than ignore it. Cases
 * that pass one only in passing run on the real clock (ownClock); the two whose checks are about
 * the clock (leases expiring at a chosen moment, a retry due at an exact time) are checked on the
 * real clock in test/bullmq.test.ts instead.
 */
const CLOCK =
  "BullMQ keeps time itself (Redis expires a lease's lock; a retry is due by the workers' clocks), so a claim, settle or requeue at a chosen `now` is refused";

inboxContract({
  name: 'bullmq',
  missing: redisMissing,
  ownClock: true,
  cannot: {
    'claim takes the oldest due rows with a lease; an expired lease is claimed again with a new fence': `${CLOCK}: rows not yet due at 10 s and a lease expired at 11 s need that clock (test/bullmq.test.ts: an expired lease on the real clock)`,
    'a claim skips rows recorded with the routes it excludes; a row with no route is claimed':
      "BullMQ hands jobs out in the order they wait (its worker's atomic move to active takes no filter): the worker puts a claimed row of a paused route back untried (a release, its attempt given back), which the release case holds",
    'settle is fenced per outcome: a late worker cannot overwrite the outcome of the one that took over': `${CLOCK}: a lease expired at 5.2 s and a retry due at exactly 9 s need that clock (test/bullmq.test.ts: fenced settles on the real clock)`,
  },
  open: async (o) => {
    const q = freshQueue();
    return {
      inbox: await openInbox(q.url, o?.groupCommit ? { receiver: { groupCommit: { maxBatch: 64, maxWaitMs: 0 } } } : {}),
      cleanup: q.drop,
    };
  },
});
