import type { BackoffOptions } from './backoff.js';
import { backoffDelay } from './backoff.js';

/**
 * How long a route whose forward failed is paused: 1 s doubling per consecutive failure to 1
 * minute, with the same equal jitter as a row's own backoff (backoff.ts). Shorter than a row's
 * (5 s to 10 minutes): a pause only decides when one probe row is tried — the other rows of the
 * route wait without spending an attempt — so a target back up is found within a minute, and a
 * probe costs one attempt of one row.
 */
export const DEFAULT_ROUTE_BACKOFF: BackoffOptions = { baseMs: 1_000, maxMs: 60_000 };

/** A route's pause after its n-th failure in a row (n ≥ 1). Pure: pass `random` to make it deterministic. */
export function routePauseMs(
  consecutiveFailures: number,
  options: BackoffOptions = DEFAULT_ROUTE_BACKOFF,
  random: () => number = Math.random,
): number {
  return backoffDelay(consecutiveFailures, options, random);
}

/**
 * What a route's target has shown. `new`: nothing yet; `healthy`: its last forward was answered
 * 2xx; `paused`: its last forward failed, and no row is tried before `until`; `probing`: the pause
 * ran out, one row at a time is tried until one is done.
 */
export type RouteState = 'new' | 'healthy' | 'paused' | 'probing';

/** A change of a route's state a person is told of (one line in listen's log, the gauge). */
export type RouteChange =
  | { route: string; source: string; state: 'paused'; forMs: number; failures: number; error: string }
  | { route: string; source: string; state: 'resumed'; failures: number };

interface Health {
  failures: number;
  pausedUntil: number;
  inFlight: number;
  answered: boolean;
}

/**
 * Per-route health for the worker: which routes a claim must skip, whether a claimed row may be
 * forwarded now, and what a finished forward changes. A route that has not yet been answered 2xx
 * (new, or failing) gets one forward in flight at a time: a target that hangs until the forward
 * timeout holds one worker slot, not all of them, and the other routes' rows flow meanwhile. Once
 * answered, a route takes as many slots as its rows need (the worker's concurrency). The clock is
 * passed in: the state machine is deterministic.
 */
export class RouteHealth {
  private readonly routes = new Map<string, Health>();

  constructor(
    private readonly options: BackoffOptions = DEFAULT_ROUTE_BACKOFF,
    private readonly random: () => number = Math.random,
  ) {}

  private of(route: string): Health {
    let h = this.routes.get(route);
    if (!h) {
      h = { failures: 0, pausedUntil: 0, inFlight: 0, answered: false };
      this.routes.set(route, h);
    }
    return h;
  }

  state(route: string, now: number): RouteState {
    const h = this.routes.get(route);
    if (!h) return 'new';
    if (h.failures === 0) return h.answered ? 'healthy' : 'new';
    return now < h.pausedUntil ? 'paused' : 'probing';
  }

  /** Whether the route may have one more forward in flight now. */
  private open(route: string, now: number): boolean {
    const state = this.state(route, now);
    if (state === 'healthy') return true;
    if (state === 'paused') return false;
    return (this.routes.get(route)?.inFlight ?? 0) < 1;
  }

  /** The routes a claim skips now: paused ones, and untried or probing ones with their one forward in flight. */
  closed(now: number): string[] {
    return [...this.routes.keys()].filter((r) => !this.open(r, now));
  }

  /** How long until a closed route may take a row again (0: it may now, or as soon as its forward in flight ends). */
  waitMs(route: string, now: number): number {
    const h = this.routes.get(route);
    return h && h.failures > 0 ? Math.max(0, h.pausedUntil - now) : 0;
  }

  /** Take a slot for a claimed row of this route, if it may be forwarded now. */
  admit(route: string, now: number): boolean {
    if (!this.open(route, now)) return false;
    this.of(route).inFlight++;
    return true;
  }

  /**
   * A forward of the route ended: ok (2xx), failed (the target refused, answered non-2xx or did
   * not answer in time), or neither (the row's own fault, a held route: says nothing of the
   * target). Returns the change to tell, if any.
   */
  ended(
    route: string,
    source: string,
    result: { ok: true } | { ok: false; error: string } | undefined,
    now: number,
  ): RouteChange | undefined {
    const h = this.of(route);
    h.inFlight = Math.max(0, h.inFlight - 1);
    if (result === undefined) return undefined;
    if (result.ok) {
      h.answered = true;
      const failures = h.failures;
      h.failures = 0;
      h.pausedUntil = 0;
      return failures > 0 ? { route, source, state: 'resumed', failures } : undefined;
    }
    // A forward that was in flight while the route was paused already (started before the pause)
    // does not pause it again, nor longer: one outage is counted once per probe.
    if (now < h.pausedUntil) return undefined;
    h.failures++;
    const forMs = routePauseMs(h.failures, this.options, this.random);
    h.pausedUntil = now + forMs;
    return { route, source, state: 'paused', forMs, failures: h.failures, error: result.error };
  }

  /** The routes paused now (the /metrics gauge). */
  paused(now: number): string[] {
    return [...this.routes.keys()].filter((r) => this.state(r, now) === 'paused');
  }
}
