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
  RequeueOptions,
  Selector,
  Settlement,
  StoredDelivery,
} from '../types.js';
import { InboxFileGoneError, InboxOpenError, openSqliteInbox } from './index.js';
import type { SqliteInbox } from './index.js';
import { WriteWatch } from '../write-watch.js';
import { pack } from './packing.js';
import type { WriterReply, WriterRequest } from './writer.js';

type Op = WriterRequest extends infer R ? (R extends { op: infer O } ? O : never) : never;

export interface ThreadedOptions {
  /** Group commit of puts; absent: each put is its own transaction (still off the event loop). */
  groupCommit?: GroupCommitOptions;
  /** A write unfinished for this long makes health() say the store is stuck. */
  stuckAfterMs?: number;
}

/**
 * The SQLite inbox with every write on a writer thread (see writer.ts): put (group-committed),
 * claim and the worker's outcomes. Reads (stats, select, overview) stay on a connection of the
 * main thread: in WAL mode they never wait for a writer. The event loop never waits on the disk,
 * so a stuck store is answered 503 within the receiver's deadline and /healthz still answers.
 */
export class ThreadedSqliteInbox implements Inbox {
  private nextId = 1;
  private readonly calls = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: unknown) => void; done: (error?: unknown) => void }
  >();
  private readonly watch = new WriteWatch();
  private readonly group: GroupCommit | undefined;
  private closed = false;
  private dead: Error | undefined;
  private closing: Promise<void> | undefined;

  private constructor(
    private readonly reader: SqliteInbox,
    private readonly thread: Worker,
    private readonly o: ThreadedOptions,
  ) {
    thread.on('message', (m: WriterReply) => {
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
    this.group = o.groupCommit ? new GroupCommit((rows) => this.putMany(rows), o.groupCommit) : undefined;
  }

  /** Open (creating and migrating on this thread first, so errors come from one place), then start the writer. */
  static async open(path: string, o: ThreadedOptions = {}): Promise<ThreadedSqliteInbox> {
    const reader = openSqliteInbox(path);
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
      await reader.close();
      throw err;
    }
    return new ThreadedSqliteInbox(reader, thread, o);
  }

  get location(): string {
    return this.reader.location;
  }

  put(d: NewDelivery): Promise<{ inserted: boolean }> {
    if (this.group) return this.group.put(d);
    return this.putMany([d]).then((r) => r[0] as { inserted: boolean });
  }

  putMany(rows: readonly NewDelivery[]): Promise<{ inserted: boolean }[]> {
    const { batch, transfer } = pack(rows);
    return this.call('putMany', { batch }, transfer);
  }

  async claim(options: ClaimOptions): Promise<Claimed[]> {
    const rows = await this.call<Claimed[]>('claim', { options });
    return rows.map((r) => ({ ...r, body: r.body ? Buffer.from(r.body.buffer, r.body.byteOffset, r.body.byteLength) : null }));
  }

  settle(outcomes: readonly Settlement[], now?: number): Promise<boolean[]> {
    return this.call('settle', { outcomes, ...(now !== undefined ? { now } : {}) });
  }

  /** Healthy: the file is still the one opened, and no write has been waiting longer than stuckAfterMs. */
  async health(): Promise<{ ok: boolean; problem?: string }> {
    if (this.dead) return { ok: false, problem: this.dead.message };
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
    return this.reader.stats();
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
  overview(now?: number): Promise<Overview> {
    return this.reader.overview(now);
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
      while (!this.dead && ((this.group?.pending ?? 0) > 0 || this.calls.size > 0) && Date.now() < giveUpAt)
        await new Promise((r) => setTimeout(r, 5));
      this.closed = true;
      await this.thread.terminate();
      await this.reader.close();
    })();
    return this.closing;
  }

  private call<T>(op: Op, args: object, transfer: ArrayBuffer[] = []): Promise<T> {
    if (this.dead) return Promise.reject(this.dead);
    if (this.closed) return Promise.reject(new Error(`inbox ${this.location} is closed`));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      this.calls.set(id, { resolve: resolve as (v: unknown) => void, reject, done: this.watch.begin() });
      this.thread.postMessage({ id, op, ...args } as WriterRequest, transfer);
    });
  }

  private failAll(err: unknown): void {
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
