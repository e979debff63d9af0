import { UsageError } from '../util/errors.js';

/** Opening failed for a reason the user can fix (wrong file or schema, newer hookdrill, no permission): exit 2. */
export class InboxOpenError extends UsageError {}

/** The store cannot be reached or cannot write now (Postgres down, a disk error): 503 for a receiver, exit 2 for a command. */
export class InboxUnavailableError extends Error {
  override readonly name = 'InboxUnavailableError';
}

/**
 * The durable inbox: what the receiver stores before it answers, what the worker claims, and what
 * inspect / requeue / replay read. Every backend implements this interface; nothing outside
 * src/inbox/ holds a database handle.
 */

export type DeliveryStatus = 'pending' | 'working' | 'done' | 'dead';
export const STATUSES: readonly DeliveryStatus[] = ['pending', 'working', 'done', 'dead'];

/** A delivery is identified by its source (the provider) and the provider's delivery id. */
export interface DeliveryKey {
  source: string;
  deliveryId: string;
}

export interface NewDelivery extends DeliveryKey {
  eventType: string | undefined;
  /**
   * The raw body bytes exactly as received: the signature covers these, not a re-serialisation.
   * Where the scheme carries its secret in the body, unsigned (Graph's clientState), the body
   * without it (providers/kept-body.ts).
   */
  body: Buffer;
  /** The request headers needed to re-verify or replay (lowercased names, credentials left out). */
  headers: Record<string, string>;
  /** Unix milliseconds. */
  receivedAt: number;
  /** The route listen gave it (`listen --route`, the project file's routes): kept with the row. */
  route?: string;
}

export interface StoredDelivery extends DeliveryKey {
  eventType: string | undefined;
  /** Null once pruned: the key stays (for dedupe), the payload goes. */
  body: Buffer | null;
  headers: Record<string, string>;
  receivedAt: number;
  status: DeliveryStatus;
  attempts: number;
  /** Pending: when it is due. Working: when its lease runs out. */
  nextAttemptAt: number;
  lastError: string | undefined;
  finishedAt: number | undefined;
  /** The route it was given when stored; absent: none (stored without routes, or requeued to be routed anew). */
  route?: string;
}

/**
 * A claimed row. `fence` is what complete/fail check, so a worker that lost its lease cannot
 * overwrite the outcome of the one that took over; `attempt` counts attempts since the last
 * `requeue --reset-attempts` (for max attempts, backoff and logs).
 */
export interface Claimed extends DeliveryKey {
  eventType: string | undefined;
  body: Buffer | null;
  headers: Record<string, string>;
  receivedAt: number;
  attempt: number;
  fence: number;
  route?: string;
}

export interface InboxStats {
  counts: Record<DeliveryStatus, number>;
  total: number;
  /** received_at of the oldest pending row: the number to alert on. */
  oldestPendingAt: number | undefined;
}

export interface ClaimOptions {
  limit: number;
  leaseMs: number;
  now?: number;
  /**
   * Skip rows recorded with these routes (the worker's paused routes, and those with their one
   * probe in flight): they stay pending, their attempts unspent. SQLite and Postgres skip them in
   * the claim; BullMQ hands jobs out in order and may return them (the worker releases those).
   */
  excludeRoutes?: readonly string[];
}

export type FailOutcome = { retryAt: number } | { dead: true };

/**
 * The outcome of one claimed row, as the worker records it. Fenced: it changes the row only if this
 * claim (its fence) still holds it. A retry's delay is relative, so the backend's own clock sets
 * the time it is due — on SQLite and Postgres workers on hosts with skewed clocks agree; on BullMQ
 * the due time is the settling worker's clock (BullMQ's own way), so skew there matters.
 */
export type Settlement =
  | { key: DeliveryKey; fence: number; outcome: 'done' }
  | { key: DeliveryKey; fence: number; outcome: 'retry'; error: string; retryInMs: number }
  | { key: DeliveryKey; fence: number; outcome: 'dead'; error: string }
  /**
   * Put back untried, due after the delay: the claim is not counted as an attempt (a row of a
   * paused route the claim could not skip must not lose an attempt, nor go dead, for it). The
   * fence still moves on: a late outcome of this claim changes nothing.
   */
  | { key: DeliveryKey; fence: number; outcome: 'release'; retryInMs: number };

/** Which rows a command acts on. Every field narrows; an empty selector selects everything. */
export interface Selector {
  source?: string;
  ids?: readonly string[];
  statuses?: readonly DeliveryStatus[];
  type?: string;
  /** received_at >= since (unix ms). */
  since?: number;
  /** received_at < until (unix ms). */
  until?: number;
  /** last_error contains this text. */
  error?: string;
  /** Only rows listen gave this route. */
  route?: string;
  /** Only rows with no recorded error (the group "(no error recorded)"): an empty `error` selects everything. */
  noError?: true;
  /**
   * Rows `hookdrill check` sent, by the X-Hookdrill-Check header it marks them with: `true` only
   * those, `false` none of them, a run id only that run's.
   */
  check?: boolean | string;
}

/** Which rows a list shows first: by receipt (received_at, then source and delivery id). */
export type RowOrder = 'newest' | 'oldest';
export const ROW_ORDERS: readonly RowOrder[] = ['newest', 'oldest'];

/** A row's place in the receipt order: where a page ended, and so where the next one starts. */
export interface RowCursor {
  receivedAt: number;
  source: string;
  deliveryId: string;
}

export interface Page {
  limit: number;
  /** Default oldest: the order a worker or a requeue goes in; a person looking at rows wants newest. */
  order?: RowOrder;
  /** Only rows after this one in the page's order (older than it, for newest first). */
  after?: RowCursor;
}

/**
 * The largest body any door stores — listen's default limit, import's and reconcile --fix's:
 * above the largest event any provider sends (GitHub caps payloads at 25 MB; Stripe's large
 * invoices and sessions run past 1 MiB).
 */
export const STORED_BODY_MAX_BYTES = 32 * 1024 * 1024;

/** The header `hookdrill check` marks every request with (its value: the run id), as stored. */
export const CHECK_HEADER = 'x-hookdrill-check';

export interface Overview {
  stats: InboxStats;
  /** Deliveries received per minute over the last hour, oldest minute first (60 numbers). */
  perMinute: number[];
  /**
   * The same minutes split by outcome: where each row received in that minute stands now (pending,
   * working, done or dead). Each status's 60 numbers add up, minute by minute, to perMinute.
   */
  perMinuteByStatus: Record<DeliveryStatus, number[]>;
  /**
   * Dead rows grouped by their last error, most first: when the newest and the oldest of each died,
   * and how many of them `hookdrill check` sent (its deliberate failures are not an incident).
   */
  deadByError: { error: string; count: number; exampleId: string; newestAt: number; oldestAt: number; checkRows: number }[];
  /**
   * Pending rows that have failed at least once, grouped by their last error, most first, with the
   * soonest next attempt among them: what an outage of the app behind the receiver looks like
   * before anything is dead.
   */
  retryingByError: { error: string; count: number; exampleId: string; nextAt: number; checkRows: number }[];
  /** The groups and attempts leave out rows `hookdrill check` sent (counts and the chart are the whole inbox's). */
  excludeCheck?: boolean;
  /** How many attempts rows that are not done have had: attempts → rows. */
  attempts: Record<number, number>;
  requeues: RequeueRecord[];
  /**
   * How long finished (done and dead) rows are kept before the store removes them itself, when it
   * does (BullMQ); a sender's retry after that is stored anew instead of counted a duplicate.
   */
  retentionMs?: number;
}

/**
 * One step of a backend's schema. Append-only: a migration, once released, is never edited; a
 * change is a new one, and a ledger records which ran.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export interface OverviewOptions {
  /** Leave rows `hookdrill check` sent out of the groups and attempts (`inspect --exclude-check`). */
  excludeCheck?: boolean;
}

export interface RequeueOptions {
  resetAttempts?: boolean;
  /** Forget the route each row was given: the worker routes it by the routes it has now. */
  reroute?: boolean;
  /** Rows per transaction (default 500). */
  batchSize?: number;
  now?: number;
  /** Awaited before each batch (requeue --rate spaces batches with it). */
  beforeBatch?: () => Promise<void>;
  onBatch?: (moved: number) => void;
  /**
   * The rows chosen to move, counted when they are chosen, before the first batch: what "matched"
   * means for the requeue (a count taken earlier, for a preview, is stale if a worker buried rows since).
   */
  onChosen?: (rows: number) => void;
}

export interface RequeueRecord {
  at: number;
  moved: number;
  selector: Selector;
  resetAttempts: boolean;
}

export interface Inbox {
  readonly location: string;
  /** Store a delivery; a second put of the same key changes nothing. Resolves after the commit. */
  put(delivery: NewDelivery): Promise<{ inserted: boolean }>;
  /** Store many in one transaction (all or none); copies of a key among them: the first is stored. */
  putMany(deliveries: readonly NewDelivery[]): Promise<{ inserted: boolean }[]>;
  /** Take the oldest due rows (pending and due, or working with an expired lease) in one statement. */
  claim(options: ClaimOptions): Promise<Claimed[]>;
  /**
   * Record outcomes of claimed rows, all in one transaction (the worker batches them so that
   * processing a delivery does not cost a disk sync of its own). Says, per outcome, whether its
   * fence still held — false: the lease ran out and another claim owns the row; nothing changed.
   */
  settle(outcomes: readonly Settlement[], now?: number): Promise<boolean[]>;
  get(key: DeliveryKey): Promise<StoredDelivery | undefined>;
  stats(): Promise<InboxStats>;
  /** Rows matching the selector, in the page's order (oldest first unless it says newest). */
  select(selector: Selector, page: Page): Promise<StoredDelivery[]>;
  count(selector: Selector): Promise<number>;
  /** The default view of inspect: everything an on-call engineer looks at first, in one call. */
  overview(now?: number, options?: OverviewOptions): Promise<Overview>;
  /**
   * Move finished rows matching the selector back to pending, due now, in transactions of
   * `batchSize` rows; rows under a lease are never touched. Pending rows the selector names by
   * status (`statuses: ['pending']`) are made due now ("retry now"). Recorded in the requeue log.
   */
  requeueWhere(selector: Selector, options: RequeueOptions): Promise<number>;
  /**
   * What the store's own settings put at risk of a crash, as lines for a person (Redis without
   * AOF: an acknowledged job lives only in memory). Absent or empty: nothing to say.
   */
  durabilityWarnings?(): Promise<string[]>;
  /**
   * Whether what is written now will be kept (the receiver's /healthz says so); absent means
   * always. Warnings: what happened that a person must know although writes work (data lost).
   */
  health?(): Promise<{ ok: boolean; problem?: string; warnings?: string[] }>;
  close(): Promise<void>;
}
