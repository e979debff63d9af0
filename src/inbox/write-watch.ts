/**
 * Writes in flight and when each began, for health(): a store whose oldest write has waited
 * longer than a receiver's patience is stuck, and /healthz says so while it still answers.
 * (Keyed by a sequence number: two writes begun in the same millisecond are two writes.)
 */
export class WriteWatch {
  private next = 0;
  private readonly began = new Map<number, number>();

  /** A write begins; call the returned function when it has ended, however it ended. */
  begin(): () => void {
    const id = this.next++;
    this.began.set(id, Date.now());
    return () => this.began.delete(id);
  }

  /** Why the store is stuck (its oldest write has waited at least afterMs), or undefined. */
  stuck(location: string, afterMs: number, likely: string): string | undefined {
    // A Map keeps insertion order, and writes are begun in time order: the first is the oldest.
    const oldest = this.began.values().next();
    if (oldest.done) return undefined;
    const waited = Date.now() - oldest.value;
    if (waited < afterMs) return undefined;
    return `inbox ${location}: a write has waited ${(waited / 1000).toFixed(1)} s (${likely}); deliveries are answered 503 until it goes through`;
  }
}
