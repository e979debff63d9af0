/**
 * How often listen answers `GET /metrics`: at most SCRAPES_PER_SECOND, evenly spaced. A scrape
 * past that waits for its turn (a timer costs the loop nothing), and one past MAX_WAITING turns is
 * told 429 with Retry-After. Prometheus scrapes every 15 s and never notices; a scraper looping
 * back to back — measured at 4,200 scrapes/s beside the load, halving its acks — gets 20 a second
 * and costs the receiver a few milliseconds of each.
 */
export const SCRAPES_PER_SECOND = 20;
export const MAX_WAITING = 64;

export class ScrapePace {
  private next = Number.NEGATIVE_INFINITY;
  private waiting = 0;

  constructor(
    private readonly perSecond = SCRAPES_PER_SECOND,
    private readonly maxWaiting = MAX_WAITING,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Resolves true when this scrape's turn has come, false at once when too many wait already. */
  async turn(): Promise<boolean> {
    const t = this.now();
    const slot = Math.max(t, this.next);
    if (slot > t && this.waiting >= this.maxWaiting) return false;
    this.next = slot + 1000 / this.perSecond;
    if (slot <= t) return true;
    this.waiting++;
    try {
      await new Promise((r) => setTimeout(r, slot - t));
    } finally {
      this.waiting--;
    }
    return true;
  }
}
