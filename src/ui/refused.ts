import { MINUTES } from '../inbox/per-minute.js';
import type { RefusedCapture } from '../receiver/index.js';

/** A request listen refused: when, its answer, and why in words (and the signature failure's code). */
export interface RefusedRequest {
  /** r1, r2, …: by which the page and `hookdrill verify --ui URL --refused ID` ask for it. */
  id: string;
  /** Its request is still held whole (headers and body), so it can be explained. */
  kept: boolean;
  at: number;
  status: number;
  result: 'rejected' | 'too_large';
  reason: string;
  code?: string;
  bytes?: number;
}

/** What the page is shown of the requests listen refused: no inbox row holds them. */
export interface RefusedView {
  /** The latest, newest first (at most 100). */
  recent: readonly RefusedRequest[];
  /** How many were refused in each minute of the last hour, oldest first: the overview chart's "refused". */
  perMinute: number[];
}

/**
 * The requests listen refused lately, kept in memory for `listen --ui`: the last 100 with their
 * reasons, and a count per minute over the last hour, so a flood of bad signatures shows in the
 * chart at its true size even though only the last hundred are kept whole.
 */
export class RefusedLog {
  private readonly kept: RefusedRequest[] = [];
  /**
   * Refusals per second (since the epoch) over the last hour: seconds, not minutes, so they fall
   * into the overview's minutes, which start wherever `now` puts them, to within a second.
   */
  private readonly seconds = new Map<number, number>();

  /** The requests of the latest refused signatures, newest last, within a byte budget. */
  private readonly captures = new Map<string, RefusedCapture>();
  private captureBytes = 0;
  private next = 0;

  /**
   * keep: entries listed; maxBytes: the bodies held whole, all together (a flood of large forged
   * bodies must not grow listen's memory); one body above maxBodyBytes is listed but not held.
   */
  constructor(
    private readonly keep = 100,
    private readonly maxBytes = 16 * 1024 * 1024,
    private readonly maxBodyBytes = 1024 * 1024,
  ) {}

  add(entry: Omit<RefusedRequest, 'id' | 'kept'>, capture?: RefusedCapture): RefusedRequest {
    const id = `r${++this.next}`;
    const held = capture !== undefined && capture.body.length <= this.maxBodyBytes;
    if (held) {
      this.captures.set(id, capture);
      this.captureBytes += capture.body.length;
      for (const [old, c] of this.captures) {
        if (this.captureBytes <= this.maxBytes && this.captures.size <= this.keep) break;
        this.captures.delete(old);
        this.captureBytes -= c.body.length;
      }
    }
    const r: RefusedRequest = { id, kept: held, ...entry };
    this.kept.unshift(r);
    if (this.kept.length > this.keep) this.kept.length = this.keep;
    const second = Math.floor(r.at / 1000);
    const had = this.seconds.get(second);
    this.seconds.set(second, (had ?? 0) + 1);
    // A new second: forget those older than the hour (a Map keeps insertion order, oldest first).
    if (had === undefined)
      for (const s of this.seconds.keys()) {
        if (s > second - MINUTES * 60) break;
        this.seconds.delete(s);
      }
    return r;
  }

  /** The request of a refusal still held, or undefined (never held, or pushed out since). */
  capture(id: string): RefusedCapture | undefined {
    return this.captures.get(id);
  }

  /** The minutes line up with the inbox overview's: the hour before `now`, minute 0 the oldest. */
  view(now = Date.now()): RefusedView {
    const from = now - MINUTES * 60_000;
    const perMinute = Array.from({ length: MINUTES }, () => 0);
    for (const [second, n] of this.seconds) {
      const at = second * 1000;
      if (at < from || at >= now) continue;
      const i = Math.floor((at - from) / 60_000);
      perMinute[i] = (perMinute[i] ?? 0) + n;
    }
    return { recent: this.kept.map((r) => (r.kept && !this.captures.has(r.id) ? { ...r, kept: false } : r)), perMinute };
  }
}
