import type { ApiWait } from '../remote/client.js';

/** One event read from the provider's API, ready to deliver as the provider would. */
export interface PulledEvent {
  /** The id the receiver keys it by: Stripe's event id, GitHub's X-GitHub-Delivery guid. */
  id: string;
  type: string;
  /** Unix seconds: when the provider created (Stripe) or first delivered (GitHub) it. */
  created: number;
  /** The body as the provider sends it. */
  body: Buffer;
  /** Headers that say what it is (never a signature): what an inbox keeps. */
  headers: Record<string, string>;
  /** GitHub: the attempt's own id in the hook's list (they grow with time): where the position moves to. */
  attempt?: number;
}

/** Where a feed is: what the state file keeps between runs. */
export type FeedPosition = StripePosition | GithubPosition;

export interface StripePosition {
  /** The newest event acknowledged (id and created): the next listing starts from it. */
  cursor?: { id: string; created: number };
  /** With no cursor yet: events created at or after this (unix seconds). */
  floor?: number;
  /** Events acknowledged (or there before a --from-now start) inside the overlap window: id → created. */
  seen: Record<string, number>;
}

export interface GithubPosition {
  /** The newest delivery acknowledged: its attempt id (GitHub's ids grow) and when it was delivered. */
  cursor?: { id: number; guid: string; at: number };
  floor?: number;
  /** Guids acknowledged (or there before a --from-now start) inside the overlap window: guid → at. */
  seen: Record<string, number>;
}

/** Where a run starts: the saved position, a time (--since), or now (--from-now, and a first run). */
export type FeedStart = { from: 'position'; position: FeedPosition } | { from: 'time'; at: number } | { from: 'now' };

/** What the feed tells the status line. */
export interface FeedStats {
  /** Requests made to the provider's API so far. */
  requests: number;
  /** GitHub: what is left of this credential's hourly budget, as its last answer said. */
  budget?: { remaining: number; limit: number; resetAt: number };
}

/**
 * A provider's events as a stream with a position: read the next ones in order, move past each
 * one only when it was acknowledged, and start again from the position after a failure.
 */
export interface Feed {
  readonly provider: 'stripe' | 'github';
  /** Set the start; returns what the user should know about it (a gap wider than the provider keeps). */
  start(from: FeedStart, nowMs: number): Promise<string[]>;
  /** The next events after the position, oldest first, at most `max`; `more`: more are waiting now. */
  next(max: number): Promise<{ events: PulledEvent[]; more: boolean; gone: { id: string; type: string; error: string }[] }>;
  /** The event was acknowledged (or skipped with --skip-failed): the position moves past it. */
  advance(event: PulledEvent): void;
  /** Forget what was read past the position (after a failure): the next read starts at the position. */
  rewind(): void;
  position(): FeedPosition;
  stats(): FeedStats;
}

/** What every feed's API requests share: interruption, and who hears the waits. */
export interface FeedContext {
  signal?: AbortSignal;
  onWait?: (wait: ApiWait) => void;
  /** --follow: an API that is down, or a rate limit of any length, is waited out, never given up on. */
  follow: boolean;
  /** Only these event types. */
  types?: readonly string[];
}

/**
 * How far back each listing reaches behind the position: an event can appear in the provider's
 * list a moment after a newer one (events share a second; lists are eventually consistent), so
 * every poll looks again this far behind the newest event acknowledged, and skips what it has seen.
 */
export const OVERLAP_SECONDS = 10;
