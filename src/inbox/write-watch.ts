/**
 * Writes in flight and when each began, and how the last one ended, for health(): a store whose
 * oldest write has waited longer than a receiver's patience is stuck, and one whose last write
 * failed (a read-only database, a full disk, Redis at maxmemory) refuses what it is given —
 * /healthz says so while it still answers, whatever a read or a PING would say.
 * (Keyed by a sequence number: two writes begun in the same millisecond are two writes.)
 */
/** How long a failed write keeps health() unhealthy when nothing has been written since. */
const FAILED_WRITE_MEMORY_MS = 30_000;

export class WriteWatch {
  private next = 0;
  private readonly began = new Map<number, number>();
  private failure: { at: number; message: string } | undefined;

  /** A write begins; call the returned function when it has ended, with its error if it failed. */
  begin(): (error?: unknown) => void {
    const id = this.next++;
    this.began.set(id, Date.now());
    return (error?: unknown) => {
      this.began.delete(id);
      if (error === undefined) this.failure = undefined;
      else this.failure = { at: Date.now(), message: error instanceof Error ? error.message : String(error) };
    };
  }

  /**
   * Why what is written now would not be kept — a write waiting past `stuckAfterMs` (`likely` says
   * what usually holds it), or the last write refused lately — or undefined when neither: each
   * backend's health() asks this first, then probes what only it can (a read-only Postgres, a full Redis).
   */
  problem(location: string, stuckAfterMs: number, likely: string): string | undefined {
    return this.stuck(location, stuckAfterMs, likely) ?? this.failing(location, FAILED_WRITE_MEMORY_MS);
  }

  /** Why the store is stuck (its oldest write has waited at least afterMs), or undefined. */
  private stuck(location: string, afterMs: number, likely: string): string | undefined {
    // A Map keeps insertion order, and writes are begun in time order: the first is the oldest.
    const oldest = this.began.values().next();
    if (oldest.done) return undefined;
    const waited = Date.now() - oldest.value;
    if (waited < afterMs) return undefined;
    return `inbox ${location}: a write has waited ${(waited / 1000).toFixed(1)} s (${likely}); deliveries are answered 503 until it goes through`;
  }

  /**
   * Why the store refuses writes: its last write failed within the last `withinMs` and none has
   * succeeded since. Forgotten after withinMs, so a store that recovered while nothing was sent
   * (a load balancer that took the receiver out sends nothing) is not held unhealthy for ever.
   */
  private failing(location: string, withinMs: number): string | undefined {
    const f = this.failure;
    if (!f || Date.now() - f.at > withinMs) return undefined;
    return `inbox ${location}: the last write failed ${((Date.now() - f.at) / 1000).toFixed(1)} s ago (${f.message}); deliveries are answered 503 until one goes through`;
  }
}
