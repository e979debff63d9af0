import { Worker } from 'node:worker_threads';
import type { InboxStats } from '../types.js';
import type { ReaderReply } from './reader.js';

/**
 * The main thread's end of the observation thread (reader.ts): stats() is answered there, on a
 * read-only connection, so a scrape of /metrics never holds the event loop for a count. If the
 * thread stops, the caller's own connection answers instead (slower for the loop, still right).
 */
export class StatsObserver {
  private nextId = 1;
  private readonly calls = new Map<number, { resolve: (v: InboxStats) => void; reject: (e: Error) => void }>();
  private stopped = false;

  private constructor(private readonly thread: Worker) {
    thread.on('message', (m: ReaderReply) => {
      const call = this.calls.get(m.id);
      if (!call) return;
      this.calls.delete(m.id);
      if (m.ok) call.resolve(m.result as InboxStats);
      else call.reject(Object.assign(new Error(m.error.message), { name: m.error.name, code: m.error.code }));
    });
    const gone = () => {
      this.stopped = true;
      for (const call of this.calls.values()) call.reject(new Error('the inbox observation thread stopped'));
      this.calls.clear();
    };
    thread.on('error', gone);
    thread.on('exit', gone);
    // It must never keep a process alive on its own: listen's close() ends it, and so does exit.
    thread.unref();
  }

  /** Start the thread on an inbox file that exists and is migrated; undefined when it cannot open it. */
  static async start(path: string): Promise<StatsObserver | undefined> {
    const thread = new Worker(new URL('./reader.js', import.meta.url), { workerData: { path } });
    const ready = await new Promise<boolean>((resolve) => {
      thread.once('message', (m: { ready: boolean }) => resolve(m.ready));
      thread.once('error', () => resolve(false));
    });
    if (ready) return new StatsObserver(thread);
    await thread.terminate();
    return undefined;
  }

  get running(): boolean {
    return !this.stopped;
  }

  stats(): Promise<InboxStats> {
    if (this.stopped) return Promise.reject(new Error('the inbox observation thread stopped'));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.calls.set(id, { resolve, reject });
      this.thread.postMessage({ id, op: 'stats' });
    });
  }

  async close(): Promise<void> {
    this.stopped = true;
    await this.thread.terminate();
  }
}
