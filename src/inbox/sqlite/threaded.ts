import { StatsObserver } from './observer.js';
import { Worker } from 'node:worker_threads';
import { GroupCommit } from '../batch.js';
import type { GroupCommitOptions } from '../batch.js';
import type {
  Claimed,
  ClaimOptions,
  DeliveryKey,
  DeliveryStatus,
  Inbox,
  InboxStats,
  NewDelivery,
  Overview,
  OverviewOptions,
  RequeueOptions,
  Selector,
  Settlement,
  StoredDelivery,
} from '../types.js';
import { InboxFileGoneError, InboxOpenError, openSqliteInbox, toPutRow } from './index.js';
import type { SqliteInbox, WriteOp } from './index.js';
import { WriteWatch } from '../write-watch.js';
import { pack } from './packing.js';
import { WalSync } from './wal-sync.js';
import type { WriterReply, WriterRequest } from './writer.js';

export interface ThreadedOptions {
  /** Group commit of puts; absent: each put is its own transaction. */
  groupCommit?: GroupCommitOptions;
  /** A write unfinished for this long makes health() say the store is stuck. */
  stuckAfterMs?: number;
  /**
   * Where writes run while the store is healthy: 'main' (the default) commits each gathered
   * batch on the main thread and turns to the writer thread only when the store is locked or
   * slow; 'thread' sends every write to the writer thread (the design before; the benchmark's
   * comparison).
   */
  writes?: 'main' | 'thread';
}

/** A write waiting for its transaction: puts (group-committed), a claim, or outcomes. */
type Pending =
  | { op: 'put'; rows: readonly NewDelivery[] }
  | { op: 'claim'; options: ClaimOptions }
  | { op: 'settle'; outcomes: readonly Settlement[]; now?: number };

interface Queued {
  write: Pending;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  done: (error?: unknown) => void;
}

/** After a locked or slow commit on the main thread, writes go to the writer thread for this long. */
const THREAD_COOL_DOWN_MS = 5_000;
/**
 * Writes, or commits, on the main thread between checkpoints, which the writer thread runs (the
 * main thread's connection does not checkpoint on its own: a checkpoint syncs the disk twice).
 * Every commit appends each page it touched to the WAL (a lone put: five pages, its row and its
 * indexes), so commits count too: about SQLite's own 1,000 pages between checkpoints, which keeps
 * the WAL a few MB and rewritten in place rather than grown (a growing file makes each sync dearer).
 */
const CHECKPOINT_EVERY_WRITES = 1_000;
const CHECKPOINT_EVERY_COMMITS = 200;

/**
 * The SQLite inbox for a receiver. Writes — puts (group-committed), claims and the worker's
 * outcomes — that arrive in one turn of the event loop share one transaction. Reads (stats,
 * select, overview) use their own connection: in WAL mode they never wait for a writer.
 *
 * Where the transaction runs: on the main thread while the store is healthy. Crossing to a thread
 * for every batch (a message each way, the rows packed and unpacked, a thread woken) cost more of
 * a delivery than its share of the commit, and held listen to a third of what the machine
 * verifies and answers. What must never reach the event loop is the disk's wait, so:
 * - the main thread's connection commits without syncing (synchronous = NORMAL), and the WAL is
 *   synced by WalSync: a put is answered only once a sync that began after its commit has
 *   completed — as durable as SQLite's FULL, one sync for every commit made meanwhile. The sync
 *   runs in place while the disk is fast, on libuv's pool once one was slow: a disk that starts to
 *   hang holds the loop for one sync, then 503s at the deadline while /healthz answers;
 * - it never waits for a lock (busy_timeout 0): a write lock held by another process fails the
 *   BEGIN at once, before anything is written, and the batch goes to the writer thread (writer.ts),
 *   which waits for the lock off the event loop with its own fully synced connection;
 * - a commit that took longer than a tenth of stuckAfterMs (a disk that has slowed) sends the
 *   writes of the next 5 s to the thread too;
 * - checkpoints (each syncs the disk twice) run on the thread, every 1,000 writes, and writes wait
 *   for one to end (the event loop does not), so it catches up and the WAL starts over.
 * While the thread holds writes, new ones queue behind them there (one writer at a time), and the
 * main thread takes over again once the thread is idle and the cool-down has passed.
 */
export class ThreadedSqliteInbox implements Inbox {
  private nextId = 1;
  private readonly calls = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: unknown) => void; done: (error?: unknown) => void }
  >();
  private readonly watch = new WriteWatch();
  private readonly group: GroupCommit | undefined;
  private queued: Queued[] = [];
  private drainScheduled = false;
  /** Until when writes go to the writer thread (after a locked or slow main-thread commit). */
  private threadUntil = 0;
  private readonly slowMs: number;
  private readonly sync: WalSync;
  private writesSinceCheckpoint = 0;
  private commitsSinceCheckpoint = 0;
  /** The checkpoint running on the thread: writes wait for it, so it catches up and the WAL can start over. */
  private checkpointing: number | undefined;
  private closed = false;
  private dead: Error | undefined;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly reader: SqliteInbox,
    /** The main thread's write connection: busy_timeout 0, so a lock never holds the event loop. */
    private readonly writer: SqliteInbox,
    private readonly thread: Worker,
    private readonly o: ThreadedOptions,
    /** Where stats() runs: off the event loop (undefined: it could not start, so the reader answers). */
    private readonly observer: StatsObserver | undefined,
  ) {
    this.slowMs = (o.stuckAfterMs ?? 1_000) / 10;
    this.sync = new WalSync(`${reader.location}-wal`);
    // Without group commit, each delivery's own transaction and sync (the per-delivery design,
    // kept for comparison) runs on the thread, as it always did; and so does everything when the
    // file is not in WAL mode (there is no WAL to sync: only SQLite's own FULL commits are durable).
    if (o.writes === 'thread' || !o.groupCommit || !writer.inWalMode) this.threadUntil = Number.POSITIVE_INFINITY;
    thread.on('message', (m: WriterReply) => {
      if (m.id === this.checkpointing) {
        // Done or not (a reader holding an old snapshot, a full disk), writes go on: the next one tries again.
        this.checkpointing = undefined;
        this.scheduleDrain();
        return;
      }
      const call = this.calls.get(m.id);
      if (!call) return;
      this.calls.delete(m.id);
      call.done(m.ok ? undefined : m.error.message);
      if (m.ok) call.resolve(m.result);
      else call.reject(rebuild(m.error));
    });
    // A writer that dies takes every write with it: what is waiting fails now, and so does every
    // later write (503s, a health() that says why) rather than waiting for an answer that never comes.
    const died = (err: unknown) => {
      if (this.closed) return;
      this.dead ??= new Error(
        `inbox ${this.location}: its writer thread stopped (${err instanceof Error ? err.message : String(err)}); restart listen`,
      );
      this.failAll(this.dead);
    };
    thread.on('error', died);
    thread.on('exit', (code) => died(new Error(`exit code ${code}`)));
    // One batch in flight, commit and sync: what arrives meanwhile is the next batch. (More in
    // flight made batches smaller and commits more, which cost more than the waiting: measured.)
    this.group = o.groupCommit ? new GroupCommit((rows) => this.putMany(rows), o.groupCommit) : undefined;
  }

  /** Open (creating and migrating on this thread first, so errors come from one place), then start the writer. */
  static async open(path: string, o: ThreadedOptions = {}): Promise<ThreadedSqliteInbox> {
    const reader = openSqliteInbox(path);
    let writer: SqliteInbox;
    try {
      writer = openSqliteInbox(path, { create: false, busyTimeoutMs: 0, syncCommits: false });
    } catch (err) {
      await reader.close();
      throw err;
    }
    const thread = new Worker(new URL('./writer.js', import.meta.url), { workerData: { path, coalesce: o.groupCommit !== undefined } });
    try {
      await new Promise<void>((resolve, reject) => {
        thread.once('message', (m: { ready: boolean; message?: string }) =>
          m.ready ? resolve() : reject(new InboxOpenError(String(m.message))),
        );
        thread.once('error', reject);
      });
    } catch (err) {
      await thread.terminate();
      await writer.close();
      await reader.close();
      throw err;
    }
    return new ThreadedSqliteInbox(reader, writer, thread, o, await StatsObserver.start(path));
  }

  get location(): string {
    return this.reader.location;
  }

  put(d: NewDelivery): Promise<{ inserted: boolean }> {
    if (this.group) return this.group.put(d);
    return this.putMany([d]).then((r) => r[0] as { inserted: boolean });
  }

  putMany(rows: readonly NewDelivery[]): Promise<{ inserted: boolean }[]> {
    return this.write({ op: 'put', rows });
  }

  claim(options: ClaimOptions): Promise<Claimed[]> {
    return this.write({ op: 'claim', options });
  }

  settle(outcomes: readonly Settlement[], now?: number): Promise<boolean[]> {
    return this.write({ op: 'settle', outcomes, ...(now !== undefined ? { now } : {}) });
  }

  /** Healthy: the file is still the one opened, and no write has been waiting longer than stuckAfterMs. */
  async health(): Promise<{ ok: boolean; problem?: string }> {
    if (this.dead) return { ok: false, problem: this.dead.message };
    if (this.sync.broken) return { ok: false, problem: `inbox ${this.location}: ${this.sync.broken.message}` };
    const file = await this.reader.health();
    if (!file.ok) return file;
    const problem = this.watch.problem(this.location, this.o.stuckAfterMs ?? 1_000, 'a lock held by another process, or a stalled disk');
    return problem ? { ok: false, problem } : { ok: true };
  }

  get(key: DeliveryKey): Promise<StoredDelivery | undefined> {
    return this.reader.get(key);
  }
  list(filter?: { status?: DeliveryStatus; limit?: number }): Promise<StoredDelivery[]> {
    return this.reader.list(filter);
  }
  stats(): Promise<InboxStats> {
    if (!this.observer?.running) return this.reader.stats();
    return this.observer.stats().catch(() => this.reader.stats());
  }
  requeue(keys: readonly DeliveryKey[], options?: { resetAttempts?: boolean; now?: number }): Promise<number> {
    return this.reader.requeue(keys, options);
  }
  select(selector: Selector, page: Parameters<Inbox['select']>[1]): Promise<StoredDelivery[]> {
    return this.reader.select(selector, page);
  }
  count(selector: Selector): Promise<number> {
    return this.reader.count(selector);
  }
  overview(now?: number, options?: OverviewOptions): Promise<Overview> {
    return this.reader.overview(now, options);
  }
  requeueWhere(selector: Selector, options: RequeueOptions): Promise<number> {
    return this.reader.requeueWhere(selector, options);
  }
  prune(before: number): Promise<number> {
    return this.reader.prune(before);
  }

  /** Waits for the writes in flight (their callers are owed an answer), then stops the thread. */
  close(): Promise<void> {
    this.closing ??= (async () => {
      // Puts still gathering, and writes in the thread, are owed their answers: each is bounded by
      // the busy timeout, and a dead thread has none to give.
      const giveUpAt = Date.now() + 30_000;
      while (
        !this.dead &&
        ((this.group?.pending ?? 0) > 0 || this.queued.length > 0 || this.calls.size > 0 || this.sync.waiting > 0) &&
        Date.now() < giveUpAt
      )
        await new Promise((r) => setTimeout(r, 5));
      this.closed = true;
      await this.thread.terminate();
      await this.observer?.close();
      this.sync.close();
      await this.writer.close();
      await this.reader.close();
    })();
    return this.closing;
  }

  /** Queue a write for this turn's transaction. */
  private write<T>(write: Pending): Promise<T> {
    if (this.dead) return Promise.reject(this.dead);
    if (this.closed) return Promise.reject(new Error(`inbox ${this.location} is closed`));
    return new Promise<T>((resolve, reject) => {
      this.queued.push({ write, resolve: resolve as (v: unknown) => void, reject, done: this.watch.begin() });
      this.scheduleDrain();
    });
  }

  private scheduleDrain(): void {
    if (this.drainScheduled || this.queued.length === 0) return;
    this.drainScheduled = true;
    // Whatever else is written in this turn (the worker's claim, its outcomes) joins.
    setImmediate(() => this.drain());
  }

  private drain(): void {
    this.drainScheduled = false;
    if (this.checkpointing !== undefined && !this.dead) return; // resumed when it ends
    const all = this.queued;
    this.queued = [];
    if (all.length === 0) return;
    // --commit-batch 1: one transaction per write, the per-delivery design kept for comparison.
    const groups = this.o.groupCommit ? [all] : all.map((q) => [q]);
    for (const group of groups) {
      if (this.dead) {
        for (const q of group) this.settleQueued(q, this.dead);
      } else if (this.calls.size > 0 || Date.now() < this.threadUntil || this.sync.broken) this.toThread(group);
      else this.onMainThread(group);
    }
    const due = this.writesSinceCheckpoint >= CHECKPOINT_EVERY_WRITES || this.commitsSinceCheckpoint >= CHECKPOINT_EVERY_COMMITS;
    if (due && this.checkpointing === undefined && !this.dead) {
      this.writesSinceCheckpoint = 0;
      this.commitsSinceCheckpoint = 0;
      this.checkpointing = this.nextId++;
      this.thread.postMessage({ id: this.checkpointing, op: 'checkpoint' } satisfies WriterRequest);
    }
  }

  private onMainThread(group: Queued[]): void {
    const ops = group.map((q): WriteOp => (q.write.op === 'put' ? { op: 'put', rows: q.write.rows.map(toPutRow) } : q.write));
    const started = performance.now();
    let results: unknown[];
    try {
      results = this.writer.writeAll(ops);
    } catch (err) {
      const code = String((err as { code?: string }).code ?? '');
      if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
        // Locked by another process: nothing was written. The thread waits for the lock instead.
        this.threadUntil = Date.now() + THREAD_COOL_DOWN_MS;
        this.toThread(group);
        return;
      }
      for (const q of group) this.settleQueued(q, err);
      return;
    }
    if (performance.now() - started > this.slowMs) this.threadUntil = Date.now() + THREAD_COOL_DOWN_MS;
    this.commitsSinceCheckpoint += 1;
    // Rows written: the puts, the outcomes, and the rows a claim took (its limit is only a most).
    this.writesSinceCheckpoint += ops.reduce(
      (n, o, i) => n + (o.op === 'put' ? o.rows.length : o.op === 'claim' ? (results[i] as unknown[]).length : o.outcomes.length),
      0,
    );
    // Committed, not yet on disk: a put is answered only once a sync of the WAL that began after
    // this commit has completed. Claims and outcomes need not wait: one lost to a power cut only
    // makes a row be worked again, which at-least-once delivery allows.
    const synced = ops.some((o) => o.op === 'put') ? this.sync.whenSynced() : undefined;
    group.forEach((q, i) => {
      if (q.write.op !== 'put' || !synced) {
        q.done();
        q.resolve(results[i]);
        return;
      }
      synced.then(
        () => {
          q.done();
          q.resolve(results[i]);
        },
        (err: unknown) => this.settleQueued(q, err),
      );
    });
  }

  /** To the writer thread, which gathers what arrives together into one transaction. */
  private toThread(group: Queued[]): void {
    for (const q of group) {
      const id = this.nextId++;
      const w = q.write;
      const resolve =
        w.op === 'claim'
          ? (rows: unknown) =>
              q.resolve(
                (rows as Claimed[]).map((r) => ({
                  ...r,
                  body: r.body ? Buffer.from(r.body.buffer, r.body.byteOffset, r.body.byteLength) : null,
                })),
              )
          : q.resolve;
      this.calls.set(id, { resolve, reject: q.reject, done: q.done });
      if (w.op === 'put') {
        const { batch, transfer } = pack(w.rows);
        this.thread.postMessage({ id, op: 'putMany', batch } satisfies WriterRequest, transfer);
      } else if (w.op === 'claim') this.thread.postMessage({ id, op: 'claim', options: w.options } satisfies WriterRequest);
      else
        this.thread.postMessage({
          id,
          op: 'settle',
          outcomes: [...w.outcomes],
          ...(w.now !== undefined ? { now: w.now } : {}),
        } satisfies WriterRequest);
    }
  }

  private settleQueued(q: Queued, err: unknown): void {
    q.done(err);
    q.reject(err);
  }

  private failAll(err: unknown): void {
    for (const q of this.queued.splice(0)) this.settleQueued(q, err);
    for (const [id, call] of this.calls) {
      this.calls.delete(id);
      call.done(err);
      call.reject(err);
    }
  }
}

/** The thread's error, with the name that callers act on (a deleted inbox file is not "try again"). */
function rebuild(e: { name: string; message: string; code: string | undefined }): Error {
  const err = e.name === 'InboxFileGoneError' ? new InboxFileGoneError(e.message) : new Error(e.message);
  if (e.code) (err as Error & { code?: string }).code = e.code;
  return err;
}
