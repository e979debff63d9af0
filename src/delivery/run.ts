import { TargetDispatcher, warmUpHttpClient } from './dispatcher.js';
import type { TlsOptions } from './dispatcher.js';
import { setMaxListeners } from 'node:events';
import { Interrupt, sleep } from '../util/wait.js';
import type { PreparedEvent } from '../fixtures/index.js';
import type { Provider } from '../providers/index.js';
import { deliver } from './deliver.js';
import type { DeliveryContext, DeliveryRecord, RetryScheduled, WireExchange } from './deliver.js';
import type { Expectation } from './expect.js';
import { Semaphore } from './semaphore.js';
import type { Timing } from './timing.js';

export interface RunPlan {
  provider: Provider;
  secrets: readonly string[];
  url: URL;
  /** The URL the provider posts to, behind a proxy that forwards to `url` (send --public-url). */
  publicUrl?: URL;
  timing: Timing;
  expectation: Expectation;
  /** Where the events come from: fixtures (send) or stored deliveries (replay). */
  events: EventSource;
  /** Events in all. */
  count: number;
  /** Requests in flight at most; waits between retries hold no slot. */
  concurrency: number;
  /** New events started per second at most (retries keep their own schedule). */
  ratePerSec?: number;
  /** Copies of each event, sent at the same moment (the same id and body). */
  duplicates: number;
  /**
   * Start no new event once one has failed (pull keeps its events in order: with concurrency 1,
   * nothing after a failed event is sent). Events never started have no record.
   */
  haltOnFailure?: boolean;
  /**
   * Events started and not yet final, at most (waits between retries included): with 1, an event
   * starts only once the one before it is acknowledged or given up — pull's order.
   */
  maxUnfinished?: number;
  /** Deliver in a random order, seeded so that a failing order can be replayed. */
  shuffleSeed?: number;
  extraHeaders: readonly (readonly [string, string])[];
  signal?: AbortSignal;
  onProgress?: (p: Progress) => void;
  /** How to trust the receiver's certificate (--ca, --insecure). */
  tls?: TlsOptions;
  /** Each delivery as soon as it is final (the CLI prints its line then, not at the end). */
  onDelivery?: (record: DeliveryRecord) => void;
  onRetryScheduled?: (retry: RetryScheduled) => void;
  onWire?: (w: WireExchange) => void;
}

export interface EventSource {
  /** The event to send as number `seq`, made when asked (fresh ids and timestamps for fixtures). */
  make(seq: number): PreparedEvent;
  /** What to call it in reports: the fixture name, or the stored row's source. */
  label(seq: number): string;
}

export interface Progress {
  done: number;
  total: number;
  failed: number;
}

export interface RunOutput {
  deliveries: DeliveryRecord[];
  /** Event seqs in the order they were sent (differs from 0..n-1 only with --shuffle). */
  order: number[];
  elapsedMs: number;
  /** Cut short (Ctrl-C): some events were never sent, or some retries never made. */
  interrupted: boolean;
}

/** Send every event of the plan and collect one record per delivered copy, in seq order. */
export async function runDeliveries(plan: RunPlan): Promise<RunOutput> {
  await warmUpHttpClient();
  const copies = plan.duplicates;
  // All copies of an event go out together, so there must be room for them at once.
  const slots = new Semaphore(Math.max(plan.concurrency, copies));
  const dispatcher = new TargetDispatcher(plan.url.origin, Math.max(plan.concurrency, copies), plan.tls);
  const runStartMs = performance.now();
  // One listener on the caller's signal; every waiting delivery listens to ours instead, which may
  // have thousands of listeners without Node warning of a leak.
  const interrupt = new AbortController();
  setMaxListeners(0, interrupt.signal);
  const signal = interrupt.signal;
  if (plan.signal?.aborted) interrupt.abort();
  const onAbort = () => interrupt.abort();
  plan.signal?.addEventListener('abort', onAbort, { once: true });
  const ctx: DeliveryContext = {
    provider: plan.provider,
    secrets: plan.secrets,
    url: plan.url,
    ...(plan.publicUrl ? { publicUrl: plan.publicUrl } : {}),
    timing: plan.timing,
    expectation: plan.expectation,
    extraHeaders: plan.extraHeaders,
    dispatcher,
    slots,
    runStartMs,
    signal,
    interrupt: new Interrupt(signal),
    ...(plan.onRetryScheduled ? { onRetryScheduled: plan.onRetryScheduled } : {}),
    ...(plan.onWire ? { onWire: plan.onWire } : {}),
  };

  const order = Array.from({ length: plan.count }, (_, i) => i);
  // Out-of-order delivery means events made in one order arrive in another, so with --shuffle the
  // events are made first, in order (ids and timestamps ascending), and only then sent shuffled.
  let premade: PreparedEvent[] | undefined;
  if (plan.shuffleSeed !== undefined) {
    premade = order.map((seq) => plan.events.make(seq));
    shuffle(order, plan.shuffleSeed);
  }

  const total = plan.count * copies;
  const progress: Progress = { done: 0, total, failed: 0 };
  // Records are collected as deliveries finish; one promise for the lot, not one kept per delivery.
  const deliveries: DeliveryRecord[] = [];
  let started = 0;
  let producing = true;
  let finishAll: () => void = () => undefined;
  let failAll: (err: unknown) => void = () => undefined;
  const allDone = new Promise<void>((resolve, reject) => {
    finishAll = resolve;
    failAll = reject;
  });
  allDone.catch(() => undefined); // awaited below; a failure before then must not go unhandled
  let halted = false;
  const unfinished = plan.maxUnfinished ? new Semaphore(plan.maxUnfinished) : undefined;
  const onDone = (record: DeliveryRecord) => {
    // Before the next event may start: it checks `halted` once it holds its place.
    if (!record.met && plan.haltOnFailure) halted = true;
    unfinished?.release();
    deliveries.push(record);
    progress.done++;
    if (!record.met) progress.failed++;
    plan.onDelivery?.(record);
    plan.onProgress?.(progress);
    if (!producing && deliveries.length === started) finishAll();
  };
  const intervalMs = plan.ratePerSec ? 1000 / plan.ratePerSec : 0;
  let nextStart = performance.now();

  try {
    for (const seq of order) {
      if (plan.signal?.aborted) break;
      if (intervalMs > 0) {
        const wait = nextStart - performance.now();
        if (wait > 0) await sleep(wait, signal);
        if (plan.signal?.aborted) break;
        nextStart = Math.max(nextStart + intervalMs, performance.now());
      }
      if (halted) break;
      if (unfinished) {
        await unfinished.acquire(copies);
        if (plan.signal?.aborted || halted) {
          unfinished.release(copies);
          break;
        }
      }
      await slots.acquire(copies);
      if (plan.signal?.aborted || halted) {
        slots.release(copies);
        unfinished?.release(copies);
        break;
      }
      const event = premade ? (premade[seq] as PreparedEvent) : plan.events.make(seq);
      const fixture = plan.events.label(seq);
      for (let copy = 1; copy <= copies; copy++) {
        started++;
        deliver(event, { seq, copy, fixture }, ctx).then(onDone, failAll);
      }
    }
    producing = false;
    if (deliveries.length === started) finishAll();
    await allDone;
    deliveries.sort((a, b) => a.seq - b.seq || a.copy - b.copy);
    const interrupted = (deliveries.length < total && !halted) || deliveries.some((d) => d.outcome === 'interrupted');
    return { deliveries, order, elapsedMs: performance.now() - runStartMs, interrupted };
  } finally {
    // A caller that runs many plans on one signal (pull: a plan per batch) must not collect listeners.
    plan.signal?.removeEventListener('abort', onAbort);
    await dispatcher.close();
  }
}

/** Fisher–Yates with mulberry32: the same seed gives the same order on every machine. */
export function shuffle<T>(items: T[], seed: number): void {
  let state = seed >>> 0;
  const random = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  for (let i = items.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [items[i], items[j]] = [items[j] as T, items[i] as T];
  }
}
