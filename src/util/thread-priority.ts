import { setPriority } from 'node:os';

/**
 * Lower the calling thread's CPU priority (nice 10), for the threads that only look — the
 * inspector's, the store's observation thread — so that when cores are short the scheduler gives
 * them to the thread that answers deliveries. Only on Linux, where nice belongs to each thread
 * (setpriority with pid 0 is the calling thread); elsewhere it would lower the whole process,
 * the receiver with it, so it is left alone there.
 */
export function yieldCpuToReceiver(): void {
  if (process.platform !== 'linux') return;
  try {
    setPriority(10);
  } catch {
    // a container that forbids it: the thread runs at the receiver's priority, as before
  }
}
