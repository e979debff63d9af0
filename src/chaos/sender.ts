import { setMaxListeners } from 'node:events';
import type { PreparedEvent } from '../fixtures/index.js';
import type { Provider, RetryReason } from '../providers/index.js';
import { deliver } from '../delivery/deliver.js';
import type { AttemptRecord, DeliveryContext } from '../delivery/deliver.js';
import { parseExpectation } from '../delivery/expect.js';
import { Semaphore } from '../delivery/semaphore.js';
import type { Timing } from '../delivery/timing.js';
import { TargetDispatcher, warmUpHttpClient } from '../delivery/dispatcher.js';
import type { TrackedDelivery } from './accounting.js';
import { Interrupt } from '../util/wait.js';

/** A delivery chaos follows across rounds and restarts: the event, and where its schedule stands. */
export interface ChaosDelivery extends TrackedDelivery {
  event: PreparedEvent;
  nextAttempt: number;
  lastReason: RetryReason | undefined;
}

/** An attempt's answer as chaos counts it: the status, or the transport error's kind. */
export function answerOf(a: AttemptRecord): string {
  return a.status !== undefined ? String(a.status) : (a.error ?? 'no answer');
}

/**
 * The sending side of chaos: send's own delivery engine (signing, timeouts, retry headers) on
 * one connection pool, resuming each delivery's schedule where it stopped before a restart.
 */
export class ChaosSender {
  private readonly dispatcher: TargetDispatcher;
  private readonly slots: Semaphore;
  private runStartMs = performance.now();
  private readonly interrupt = new AbortController();
  private readonly attempts = new Interrupt(this.interrupt.signal);

  constructor(
    private readonly o: {
      provider: Provider;
      secrets: readonly string[];
      url: URL;
      timing: Timing;
      concurrency: number;
      signal?: AbortSignal;
    },
  ) {
    this.dispatcher = new TargetDispatcher(o.url.origin, o.concurrency);
    // Every attempt and wait listens for an interrupt: on a signal of our own, linked to the
    // caller's, that may have as many listeners as there are deliveries without Node warning.
    setMaxListeners(0, this.interrupt.signal);
    if (o.signal?.aborted) this.interrupt.abort();
    o.signal?.addEventListener('abort', () => this.interrupt.abort(), { once: true });
    this.slots = new Semaphore(o.concurrency);
  }

  async warmUp(): Promise<void> {
    await warmUpHttpClient();
    this.runStartMs = performance.now();
  }

  /**
   * Deliver each item from its next attempt on, all at once within the concurrency limit.
   * `retries: false` sends one attempt each (the round itself: retries come after the restart).
   * `onAnswer` is told of each final status synchronously, the moment it is complete.
   */
  async deliverAll(items: readonly ChaosDelivery[], options: { retries: boolean; onAnswer?: (status: number) => void }): Promise<void> {
    const timing = options.retries ? this.o.timing : { ...this.o.timing, retryDelaysMs: [] };
    const ctx: DeliveryContext = {
      provider: this.o.provider,
      secrets: this.o.secrets,
      url: this.o.url,
      timing,
      expectation: parseExpectation('2xx'),
      extraHeaders: [],
      dispatcher: this.dispatcher,
      slots: this.slots,
      runStartMs: this.runStartMs,
      signal: this.interrupt.signal,
      interrupt: this.attempts,
      ...(options.onAnswer ? { onAnswer: options.onAnswer } : {}),
    };
    await Promise.all(
      items.map(async (item, i) => {
        await this.slots.acquire();
        const record = await deliver(
          item.event,
          {
            seq: i,
            copy: 1,
            fixture: item.event.eventType,
            firstAttempt: item.nextAttempt,
            ...(item.lastReason ? { lastReason: item.lastReason } : {}),
          },
          ctx,
        );
        item.answers.push(...record.attempts.map(answerOf));
        item.nextAttempt += record.attempts.length;
        item.lastReason = record.attempts.at(-1)?.reason;
        if (record.outcome === 'acknowledged') item.acked = true;
      }),
    );
  }

  /**
   * One more copy of each of these acknowledged deliveries, signed afresh (as a provider re-sends
   * one whose answer it never saw): the same id, the same bytes, one attempt. Their own records
   * are left as they were; what each copy got is returned.
   */
  async deliverCopies(items: readonly ChaosDelivery[]): Promise<string[]> {
    const copies = items.map((item) => ({ ...item, answers: [] as string[], acked: false }));
    await this.deliverAll(copies, { retries: false });
    return copies.map((c) => c.answers.at(-1) ?? 'no answer');
  }

  /** After a restart: the unacknowledged get the rest of their provider's schedule. */
  async retryUnacknowledged(items: readonly ChaosDelivery[]): Promise<void> {
    const due = items.filter((t) => !t.acked && t.nextAttempt <= this.o.timing.retryDelaysMs.length + 1);
    if (due.length > 0) await this.deliverAll(due, { retries: true });
  }

  close(): Promise<void> {
    return this.dispatcher.close();
  }
}
