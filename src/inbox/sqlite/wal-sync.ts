import { closeSync, fdatasync, fdatasyncSync, fstatSync, openSync } from 'node:fs';

/**
 * Makes commits durable by syncing the WAL file ourselves, many commits to one sync.
 *
 * In WAL mode, synchronous = FULL differs from NORMAL by one thing: FULL syncs the WAL at each
 * commit, NORMAL leaves the committed frames in the OS's cache until the next checkpoint (which
 * syncs the WAL before copying it, in both modes). A commit made under NORMAL followed by a
 * completed fdatasync of the WAL file is therefore exactly as durable as a FULL commit — SQLite's
 * recovery replays every frame up to the last checksummed commit record.
 *
 * Where the sync runs: in place, while the disk syncs fast — a fraction of a millisecond of the
 * event loop per batch, and no thread to wake (on a 2-core machine under load, the wake-ups of a
 * sync on libuv's pool cost 18% of listen's acks at c=64 and a quarter at c=1: measured, bench/).
 * A sync that took longer than SLOW_SYNC_MS sends the syncs of the next COOL_DOWN_MS to the pool,
 * where the event loop goes on while the disk waits: a disk that starts to hang holds the loop
 * for that one sync, and from then on deliveries get their 503 at the deadline and /healthz answers.
 *
 * The rule callers keep: acknowledge a commit only once a sync that began after it has completed
 * (whenSynced, called right after the commit, gives exactly that promise).
 */
const SLOW_SYNC_MS = 10;
const COOL_DOWN_MS = 5_000;

export class WalSync {
  private fd: number | undefined;
  /** Until when syncs run on the pool (after a slow one). */
  private poolUntil = 0;
  /** Callers waiting for the sync in flight. */
  private inFlight: Waiter[] | undefined;
  /** Callers whose commits came after the sync in flight began: they need the next one. */
  private next: Waiter[] = [];
  /** A sync that failed: the WAL's cached pages may be lost, so nothing here can be vouched for again. */
  private failed: Error | undefined;

  constructor(private readonly walPath: string) {}

  /** Whether a sync failed: from then on, no commit of this connection can be acknowledged. */
  get broken(): Error | undefined {
    return this.failed;
  }

  /** Resolves once a sync of the WAL that began after this call has completed. */
  whenSynced(): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => {
      this.next.push({ resolve, reject });
      if (!this.inFlight) this.start();
    });
  }

  /** Syncs waiting or in flight. */
  get waiting(): number {
    return this.next.length + (this.inFlight?.length ?? 0);
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private start(): void {
    const waiters = this.next;
    this.next = [];
    this.inFlight = waiters;
    let fd: number;
    try {
      fd = this.file();
    } catch (err) {
      this.finish(err as Error);
      return;
    }
    if (Date.now() >= this.poolUntil) {
      const started = performance.now();
      try {
        fdatasyncSync(fd);
      } catch (err) {
        this.finish(err as Error);
        return;
      }
      if (performance.now() - started > SLOW_SYNC_MS) this.poolUntil = Date.now() + COOL_DOWN_MS;
      this.finish(undefined);
      return;
    }
    fdatasync(fd, (err) => this.finish(err ?? undefined));
  }

  private finish(err: Error | undefined): void {
    const waiters = this.inFlight ?? [];
    this.inFlight = undefined;
    if (err) {
      this.failed = new Error(`syncing the inbox's write-ahead log failed (${err.message}): the disk cannot be trusted to keep deliveries`);
      for (const w of [...waiters, ...this.next.splice(0)]) w.reject(this.failed);
      return;
    }
    for (const w of waiters) w.resolve();
    if (this.next.length > 0) this.start();
  }

  /**
   * The WAL file, opened once SQLite has made it (at the first commit). A WAL unlinked under us
   * (deleted by hand) would make our sync vouch for a file no one will ever read: refused.
   */
  private file(): number {
    this.fd ??= openSync(this.walPath, 'r');
    if (fstatSync(this.fd).nlink === 0) {
      closeSync(this.fd);
      this.fd = undefined;
      throw new Error(`${this.walPath} was deleted while in use`);
    }
    return this.fd;
  }
}

interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
}
