import type { NewDelivery } from './types.js';

/** What a backend supplies for group commit: write these rows in one transaction, say which were new. */
export type WriteMany = (rows: readonly NewDelivery[]) => Promise<{ inserted: boolean }[]>;

export interface GroupCommitOptions {
  /** Items in one transaction at most. */
  maxBatch: number;
  /**
   * How long the first item of a batch waits for others. 0: until the current turn of the event
   * loop is over — everything already read joins, and a lone item is not delayed.
   */
  maxWaitMs: number;
  /**
   * Transactions in flight at once (default 1). A server database commits concurrent transactions
   * together and each waits a network round trip, so more than one keeps it busy; SQLite has one
   * writer, so there one is right.
   */
  maxInFlight?: number;
  /** Items waiting at most (default 10,000); past it a call fails at once. */
  maxQueued?: number;
  /** Told the size of each transaction once it has committed (listen's /metrics). */
  onBatch?: (size: number) => void;
}

const RECENT = 1_000;

interface Waiting<I, O> {
  item: I;
  resolve: (r: O) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit, for any backend and any write: items that arrive while a batch is being gathered
 * or committed join the next transaction, and each call resolves only after the transaction
 * holding its item has committed — or rejects with that transaction's error, as every call in it
 * does. With one batch in flight at a time (the default) transactions commit in the order of calls.
 */
export class Batcher<I, O> {
  private queue: Waiting<I, O>[] = [];
  private scheduled = false;
  private inFlight = 0;
  /**
   * Sizes of the most recent transactions (for tests and status), at most RECENT of them: a
   * receiver commits hundreds a second for weeks, and a full history would grow without end.
   */
  readonly batches: number[] = [];

  constructor(
    private readonly writeMany: (items: readonly I[]) => Promise<O[]>,
    private readonly o: GroupCommitOptions,
  ) {}

  add(item: I): Promise<O> {
    // A store that has stopped answering must not make the queue (and the bodies it holds) grow
    // without end: past the cap, a call fails at once (a receiver answers 503).
    const cap = this.o.maxQueued ?? 10_000;
    if (this.queue.length >= cap)
      return Promise.reject(new Error(`the store is not keeping up: ${this.queue.length} writes already waiting for a transaction`));
    return new Promise((resolve, reject) => {
      this.queue.push({ item, resolve, reject });
      this.schedule();
    });
  }

  /** Items waiting for a transaction, and whether one is in flight. */
  get pending(): number {
    return this.queue.length + this.inFlight;
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= (this.o.maxInFlight ?? 1) || this.queue.length === 0) return;
    this.scheduled = true;
    const flush = () => void this.flush();
    if (this.o.maxWaitMs > 0) setTimeout(flush, this.o.maxWaitMs);
    else setImmediate(flush);
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const batch = this.queue.splice(0, this.o.maxBatch);
    if (batch.length === 0) return;
    this.inFlight++;
    try {
      const results = await this.writeMany(batch.map((w) => w.item));
      this.batches.push(batch.length);
      this.o.onBatch?.(batch.length);
      if (this.batches.length > RECENT) this.batches.splice(0, this.batches.length - RECENT);
      batch.forEach((w, i) => {
        if (i < results.length) w.resolve(results[i] as O);
        else w.reject(new Error('the store did not report this item'));
      });
    } catch (err) {
      for (const w of batch) w.reject(err);
    } finally {
      this.inFlight--;
      this.schedule();
    }
  }
}

/**
 * Group commit of deliveries: duplicates in one batch behave as across batches — the backend's
 * idempotent insert keeps the first and reports the rest as not inserted.
 */
export class GroupCommit extends Batcher<NewDelivery, { inserted: boolean }> {
  put(row: NewDelivery): Promise<{ inserted: boolean }> {
    return this.add(row);
  }
}
