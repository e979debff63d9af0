import type { NewDelivery } from './types.js';

/** What a backend supplies for group commit: write these rows in one transaction, say which were new. */
export type WriteMany = (rows: readonly NewDelivery[]) => Promise<{ inserted: boolean }[]>;

export interface GroupCommitOptions {
  /** Rows in one transaction at most. */
  maxBatch: number;
  /**
   * How long the first row of a batch waits for others. 0: until the current turn of the event
   * loop is over — every request already read joins, and a lone request is not delayed.
   */
  maxWaitMs: number;
}

interface Waiting {
  row: NewDelivery;
  resolve: (r: { inserted: boolean }) => void;
  reject: (err: unknown) => void;
}

/**
 * Group commit, for any backend: puts that arrive while a batch is being gathered or committed
 * join the next transaction, and each put resolves only after the transaction holding its row
 * has committed — or rejects with that transaction's error, as every put in it does. Duplicates in
 * one batch behave as across batches: the backend's idempotent insert keeps the first and reports
 * the rest as not inserted.
 */
export class GroupCommit {
  private queue: Waiting[] = [];
  private scheduled = false;
  private committing = false;
  /** Sizes of the transactions committed so far (for tests and status). */
  readonly batches: number[] = [];

  constructor(
    private readonly writeMany: WriteMany,
    private readonly o: GroupCommitOptions,
  ) {}

  put(row: NewDelivery): Promise<{ inserted: boolean }> {
    return new Promise((resolve, reject) => {
      this.queue.push({ row, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.committing || this.queue.length === 0) return;
    this.scheduled = true;
    const flush = () => void this.flush();
    if (this.o.maxWaitMs > 0) setTimeout(flush, this.o.maxWaitMs);
    else setImmediate(flush);
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const batch = this.queue.splice(0, this.o.maxBatch);
    if (batch.length === 0) return;
    this.committing = true;
    try {
      const results = await this.writeMany(batch.map((w) => w.row));
      this.batches.push(batch.length);
      batch.forEach((w, i) => {
        const r = results[i];
        if (r) w.resolve(r);
        else w.reject(new Error('the store did not report this row'));
      });
    } catch (err) {
      for (const w of batch) w.reject(err);
    } finally {
      this.committing = false;
      this.schedule();
    }
  }
}
