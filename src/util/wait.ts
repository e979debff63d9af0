/** Waiting, in one place: an abortable sleep, and a wait for a condition that fails loudly. */

/** Node's timers cannot wait longer than 2^31 - 1 ms (~24.8 days): longer ones fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * setTimeout for any delay: past Node's limit it waits in steps, so a scaled 40-day retry delay
 * is never cut to nothing. `unref` as for setTimeout.
 */
export function setLongTimeout(fn: () => void, ms: number): { clear(): void; unref(): void } {
  if (ms <= MAX_TIMER_MS) {
    // The common case (every attempt's timeout) stays one plain timer.
    const t = setTimeout(fn, Math.max(0, ms));
    return { clear: () => clearTimeout(t), unref: () => void t.unref() };
  }
  let timer: NodeJS.Timeout;
  let unref = false;
  const due = Date.now() + ms;
  const arm = (left: number) => {
    timer = setTimeout(
      () => {
        const rest = due - Date.now();
        if (rest > 0 && left > MAX_TIMER_MS) arm(rest);
        else fn();
      },
      Math.max(0, Math.min(left, MAX_TIMER_MS)),
    );
    if (unref) timer.unref();
  };
  arm(ms);
  return {
    clear: () => clearTimeout(timer),
    unref: () => {
      unref = true;
      timer.unref();
    },
  };
}

/** Wait ms (any length), unless the signal aborts first; resolves false when aborted. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setLongTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      timer.clear();
      resolve(false);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Poll until check() holds. Throws, naming what it waited for, when it has not held after
 * timeoutMs: a wait that ends quietly would let whatever follows pass for the wrong reason.
 */
export async function waitUntil(check: () => boolean, timeoutMs: number, what: string, pollMs = 10): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() >= end) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(pollMs);
  }
}

/**
 * Poll until check() holds or timeoutMs passes; says which. For waits whose timing out is itself
 * the finding (the demo's ack-first receiver never processes what it lost): the caller decides.
 */
export async function holdsWithin(check: () => boolean, timeoutMs: number, pollMs = 10): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() >= end) return false;
    await sleep(pollMs);
  }
  return true;
}

/**
 * An interrupt that thousands of in-flight attempts can listen to cheaply: a Set of callbacks,
 * linked once to an AbortSignal. (An AbortSignal listener added and removed per attempt cost a
 * quarter of send's throughput at 64 in flight.)
 */
export class Interrupt {
  private readonly listeners = new Set<() => void>();
  aborted = false;

  constructor(signal?: AbortSignal) {
    if (signal?.aborted) this.aborted = true;
    else signal?.addEventListener('abort', () => this.fire(), { once: true });
  }

  /** Call fn on interrupt; returns the function that stops listening. */
  on(fn: () => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private fire(): void {
    this.aborted = true;
    for (const fn of [...this.listeners]) fn();
    this.listeners.clear();
  }
}
