import { Batcher } from '../inbox/batch.js';
import type { Claimed, DeliveryKey, Inbox, Settlement } from '../inbox/index.js';
import type { BackoffOptions } from './backoff.js';
import { DEFAULT_BACKOFF, backoffDelay } from './backoff.js';
import { WORKER_DEFAULTS } from './defaults.js';
import type { RouteChange } from './route-health.js';
import { DEFAULT_ROUTE_BACKOFF, RouteHealth } from './route-health.js';

export { backoffDelay, deadAfter, DEFAULT_BACKOFF } from './backoff.js';
export type { BackoffOptions } from './backoff.js';
export { DEFAULT_ROUTE_BACKOFF, RouteHealth, routePauseMs } from './route-health.js';
export type { RouteChange, RouteState } from './route-health.js';

/** Thrown by a handler (or found by the worker) when retrying cannot help: the row goes dead at once. */
export class PermanentError extends Error {
  override readonly name = 'PermanentError';
}

/** What a handler is given: the stored delivery, and its body parsed as JSON. */
export interface WorkItem extends Claimed {
  json: unknown;
}

export type Handler = (item: WorkItem) => Promise<void>;

/** What every outcome says: which row, which attempt, and (with routes) which route it took. */
interface OutcomeBase {
  key: DeliveryKey;
  attempt: number;
  eventType: string | undefined;
  route?: string;
}

export type WorkOutcome =
  | (OutcomeBase & { outcome: 'done'; ms: number })
  | (OutcomeBase & { outcome: 'retry'; ms: number; error: string; retryInMs: number })
  | (OutcomeBase & { outcome: 'dead'; ms: number; error: string })
  /** The lease ran out and another worker took the row over: this result was discarded. */
  | (OutcomeBase & { outcome: 'fenced'; ms: number });

export interface WorkerOptions {
  inbox: Inbox;
  handler: Handler;
  /** Rows processed at once. */
  concurrency?: number;
  /** How long a claim holds a row; a worker that dies releases it when this runs out. */
  leaseMs?: number;
  /** Attempts before a row is buried as dead. */
  maxAttempts?: number;
  backoff?: BackoffOptions;
  /** How often an idle worker looks for due rows (wake() skips the wait). */
  pollMs?: number;
  random?: () => number;
  onOutcome?: (o: WorkOutcome) => void;
  /**
   * The route a row takes, said in its outcome (listen with routes). With it, each route has a
   * backoff of its own (route-health.ts): a route whose target fails is paused and then probed one
   * row at a time, and its rows are skipped meanwhile — the other routes' rows flow.
   */
  routeOf?: (row: Claimed) => string;
  /** How long a failing route is paused (default DEFAULT_ROUTE_BACKOFF, each bound no longer than backoff's). */
  routeBackoff?: BackoffOptions;
  /** A route paused or resumed (with routeOf). */
  onRoute?: (change: RouteChange) => void;
  /** Reports failures of the inbox itself (claim/complete/fail threw); the worker keeps going. */
  onError?: (err: unknown) => void;
}

/**
 * Claims due rows, runs the handler, and records the outcome — fenced on the attempt number, so a
 * worker that lost its lease cannot overwrite the outcome of the one that took over. Failures are
 * retried with backoff until maxAttempts, then buried; an unparseable body is buried at once.
 */
export class Worker {
  private readonly o: Required<Omit<WorkerOptions, 'onOutcome' | 'onError' | 'routeOf' | 'routeBackoff' | 'onRoute'>> &
    Pick<WorkerOptions, 'onOutcome' | 'onError' | 'routeOf' | 'onRoute'>;
  private readonly health: RouteHealth | undefined;
  private readonly inFlight = new Set<Promise<void>>();
  /** Rows being put back untried (release): stop waits for them too. */
  private readonly releasing = new Set<Promise<void>>();
  private running: Promise<void> | undefined;
  private stopping = false;
  private wakeUp: (() => void) | undefined;
  private claimFailures = 0;
  /** The inbox error said last: the same cause is said once, whether a claim or a settle met it. */
  private lastError: string | undefined;
  /**
   * Outcomes finished together are recorded in one transaction: with a claim of many rows, a
   * delivery costs a share of two disk syncs, not two of its own.
   */
  private readonly settler: Batcher<Settlement, boolean>;

  constructor(options: WorkerOptions) {
    this.o = {
      ...WORKER_DEFAULTS,
      backoff: DEFAULT_BACKOFF,
      random: Math.random,
      ...options,
    };
    this.settler = new Batcher((items) => this.o.inbox.settle(items), { maxBatch: 1_000, maxWaitMs: 0 });
    // A route is never paused longer than its rows' own backoff would wait (--backoff-base and
    // --backoff-max of 200 ms and 400 ms probe a failing route that often, not every minute).
    const routeBackoff = options.routeBackoff ?? {
      baseMs: Math.min(DEFAULT_ROUTE_BACKOFF.baseMs, this.o.backoff.baseMs),
      maxMs: Math.min(DEFAULT_ROUTE_BACKOFF.maxMs, this.o.backoff.maxMs),
    };
    this.health = options.routeOf ? new RouteHealth(routeBackoff, this.o.random) : undefined;
  }

  start(): void {
    this.stopping = false;
    this.running ??= this.loop().finally(() => (this.running = undefined));
  }

  /** Look for due rows now (the receiver calls it after a store). */
  wake(): void {
    this.wakeUp?.();
  }

  /** Graceful: claim nothing new, let the rows in hand finish, then resolve. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake();
    await this.running;
    await Promise.all(this.inFlight);
    // A release not yet recorded would leave its row under a lease, to be claimed again as one more attempt.
    await Promise.all(this.releasing);
  }

  /** Process until nothing is due and nothing is in hand (tests, the demo). */
  async drain(): Promise<void> {
    for (;;) {
      const started = await this.claimAndStart();
      if (started === 0 && this.inFlight.size === 0) return;
      if (started === 0) await Promise.race(this.inFlight);
    }
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      const started = await this.claimAndStart();
      if (this.stopping) break;
      if (started === 0 || this.inFlight.size >= this.o.concurrency) {
        await this.idle(this.inFlight.size >= this.o.concurrency ? Promise.race(this.inFlight) : undefined);
      }
    }
  }

  private idle(alsoOn?: Promise<void>): Promise<void> {
    // While the inbox cannot be reached, look less often: double the wait per failure, up to 5 s.
    const wait = this.claimFailures > 0 ? Math.min(this.o.pollMs * 2 ** this.claimFailures, 5_000) : this.o.pollMs;
    return new Promise((resolve) => {
      const timer = setTimeout(done, wait);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeUp = done;
      alsoOn?.then(done, done);
    });
  }

  private async claimAndStart(): Promise<number> {
    const free = this.o.concurrency - this.inFlight.size;
    if (free <= 0) return 0;
    let claimed: Claimed[];
    const closed = this.health?.closed(Date.now()) ?? [];
    try {
      claimed = await this.o.inbox.claim({ limit: free, leaseMs: this.o.leaseMs, ...(closed.length > 0 ? { excludeRoutes: closed } : {}) });
    } catch (err) {
      this.claimFailures++;
      this.inboxFailed(err);
      return 0;
    }
    this.claimFailures = 0;
    this.lastError = undefined;
    let started = 0;
    for (const row of claimed) {
      const route = this.o.routeOf?.(row);
      if (route !== undefined && this.health && !this.health.admit(route, Date.now())) {
        this.release(row, route);
        continue;
      }
      const p = this.process(row, route).finally(() => this.inFlight.delete(p));
      this.inFlight.add(p);
      started++;
    }
    return started;
  }

  /**
   * A row of a route that may not be tried now (paused, or its one probe in flight), which the
   * claim could not skip (its route is worked out now, not recorded; BullMQ hands jobs out in
   * order): put back untried — its attempt not spent — due when the route may take it again.
   */
  private release(row: Claimed, route: string): void {
    const retryInMs = Math.max(this.o.pollMs, this.health?.waitMs(route, Date.now()) ?? 0);
    const p = this.settler
      .add({ key: { source: row.source, deliveryId: row.deliveryId }, fence: row.fence, outcome: 'release', retryInMs })
      .then(
        () => undefined,
        (err: unknown) => this.inboxFailed(err),
      )
      .finally(() => this.releasing.delete(p));
    this.releasing.add(p);
  }

  private async process(row: Claimed, route: string | undefined): Promise<void> {
    const started = performance.now();
    const key = { source: row.source, deliveryId: row.deliveryId };
    const base: OutcomeBase = { key, attempt: row.attempt, eventType: row.eventType, ...(route !== undefined ? { route } : {}) };
    let error: unknown;
    try {
      await this.o.handler({ ...row, json: parseBody(row) });
    } catch (err) {
      error = err;
    }
    const ms = Math.round(performance.now() - started);
    if (route !== undefined && this.health) {
      // The row's own fault (not JSON, pruned) or a held route says nothing of the target.
      const result =
        error === undefined
          ? ({ ok: true } as const)
          : error instanceof PermanentError
            ? undefined
            : ({ ok: false, error: error instanceof Error ? error.message : String(error) } as const);
      const change = this.health.ended(route, row.source, result, Date.now());
      if (change) this.o.onRoute?.(change);
    }
    let settlement: Settlement;
    let outcome: WorkOutcome;
    if (error === undefined) {
      settlement = { key, fence: row.fence, outcome: 'done' };
      outcome = { ...base, outcome: 'done', ms };
    } else {
      const message = error instanceof Error ? error.message : String(error);
      if (error instanceof PermanentError || row.attempt >= this.o.maxAttempts) {
        settlement = { key, fence: row.fence, outcome: 'dead', error: message };
        outcome = { ...base, outcome: 'dead', ms, error: message };
      } else {
        const retryInMs = backoffDelay(row.attempt, this.o.backoff, this.o.random);
        settlement = { key, fence: row.fence, outcome: 'retry', error: message, retryInMs };
        outcome = { ...base, outcome: 'retry', ms, error: message, retryInMs };
      }
    }
    try {
      const kept = await this.settler.add(settlement);
      this.lastError = undefined;
      this.o.onOutcome?.(kept ? outcome : { ...base, outcome: 'fenced', ms });
    } catch (err) {
      // The inbox failed to record the outcome: the lease runs out and the row is claimed again.
      this.inboxFailed(err);
    }
  }

  /**
   * Said once per cause, not once per poll or per row in hand: a database that is down for a
   * minute, with twelve outcomes in flight, is one line — said again only after the inbox worked.
   */
  private inboxFailed(err: unknown): void {
    const message = err instanceof Error ? err.message : String(err);
    if (message !== this.lastError) this.o.onError?.(err);
    this.lastError = message;
  }
}

/**
 * The body as JSON; a body that is not JSON cannot get better on retry, so it is permanent. A
 * form (Slack's slash commands and interactivity, a GitHub hook set to `form`) is read as its
 * sender means it: the JSON of its one `payload=` field, else its fields as an object.
 */
function parseBody(row: Claimed): unknown {
  if (row.body === null) throw new PermanentError('payload was pruned');
  const text = row.body.toString('utf8');
  const form = (row.headers['content-type'] ?? '').startsWith('application/x-www-form-urlencoded');
  try {
    if (!form) return JSON.parse(text);
    const fields = new URLSearchParams(text);
    const payload = fields.get('payload');
    return payload !== null ? JSON.parse(payload) : Object.fromEntries(fields);
  } catch (err) {
    throw new PermanentError(`body is not JSON${form ? ' (in its form payload)' : ''}: ${(err as Error).message}`);
  }
}
