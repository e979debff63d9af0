import type { GroupCommitOptions } from '../batch.js';
import type { Overview } from '../types.js';

/** Finished jobs are kept this long by default: longer than any sender retries (Stripe: three days). */
export const DEFAULT_RETENTION_MS = 7 * 24 * 3_600_000;

/** The version of hookdrill's own keys beside the queue (the marker, sources, requeue log). */
export const LAYOUT_VERSION = 1;

export interface BullmqOpenOptions {
  /** Create the inbox (mark the queue as hookdrill's) when it is not one yet. Default true. */
  create?: boolean;
  /** Open without writing anything (inspect): put, claim, settle and requeue are refused. */
  readonly?: boolean;
  groupCommit?: GroupCommitOptions;
  /** A put unfinished for this long makes health() say the store is stuck. */
  stuckAfterMs?: number;
  /**
   * How long completed and dead jobs are kept (default 7 days): while a job is kept, a redelivery
   * of its key is recognised as a duplicate; after, it is stored again.
   */
  retentionMs?: number;
  /** How often expired leases are looked for (default: half the first claim's lease, 100 ms to 5 s). */
  stalledIntervalMs?: number;
  /** A call to Redis unanswered this long fails with InboxUnavailableError (default 10 s). */
  timeoutMs?: number;
  /** How long opening waits for Redis (default 3 s). */
  connectTimeoutMs?: number;
  /** Told at once when the store finds something a person must know (Redis lost the queue's data). */
  onWarning?: (text: string) => void;
}

/** The overview, with how long finished jobs are kept (inspect can say it). */
export interface BullmqOverview extends Overview {
  retentionMs: number;
}
