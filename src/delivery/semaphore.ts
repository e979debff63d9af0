/** A FIFO counting semaphore: `acquire(k)` waits until k slots are free at once. */
export class Semaphore {
  private free: number;
  private readonly waiters: { k: number; resolve: () => void }[] = [];

  constructor(readonly size: number) {
    this.free = size;
  }

  acquire(k = 1): Promise<void> {
    if (k > this.size) throw new RangeError(`cannot take ${k} of ${this.size} slots`);
    if (this.waiters.length === 0 && this.free >= k) {
      this.free -= k;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.waiters.push({ k, resolve }));
  }

  release(k = 1): void {
    this.free += k;
    // FIFO: a large request at the head is not overtaken, so copies of an event cannot starve.
    while (this.waiters.length > 0 && this.free >= (this.waiters[0] as { k: number }).k) {
      const next = this.waiters.shift() as { k: number; resolve: () => void };
      this.free -= next.k;
      next.resolve();
    }
  }
}
