/** Waiting, in one place: an abortable sleep, and a wait for a condition that fails loudly. */

/** Wait ms, unless the signal aborts first; resolves false when aborted. */
export function sleep(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
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
