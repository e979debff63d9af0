import { Worker } from 'node:worker_threads';
import { UsageError } from '../util/errors.js';
import type { RefusedCapture } from '../receiver/index.js';
import type { ExplainWith } from './refused-detail.js';
import type { RefusedView } from './refused.js';
import type { UiHandle, UiOptions } from './server.js';

/** What the inspector's thread is started with: the options that cross a thread (no functions). */
export interface ThreadOptions {
  ui: Omit<UiOptions, 'refused' | 'refusedRequest'>;
  withRefused: boolean;
  /** With withRefused: what "why?" judges with, on the inspector's thread. */
  explainWith?: ExplainWith;
}

/** listen --ui's inspector: the refused requests are listen's; "why?" is judged on the inspector's thread. */
export interface UiThreadOptions extends Omit<UiOptions, 'refusedRequest'> {
  /** One refused request as it arrived, by id (undefined once pushed out). */
  refusedCapture?: (id: string) => RefusedCapture | undefined;
  explainWith?: ExplainWith;
}

export type AskWhat = { what: 'refused' } | { what: 'refusedCapture'; id: string };
export type ThreadAsk = { askId: number } & AskWhat;
export type ThreadToMain =
  | ({ type: 'ask' } & ThreadAsk)
  | { type: 'ready'; url: string; pageUrl: string; token: string }
  | { type: 'failed'; name: string; message: string }
  | { type: 'closed' };
export type MainToThread = { type: 'answer'; askId: number; value: unknown } | { type: 'close' };

/**
 * The inspector on a thread of its own (thread-entry.ts), for `listen --ui`: a slow query, a
 * large page of rows or a user typing a filter costs that thread, never the receiver's event loop
 * and so never an acknowledgement. The refused requests stay on the main thread, where listen
 * keeps them, and are answered from here when the page asks.
 */
export async function startUiThread(o: UiThreadOptions): Promise<UiHandle> {
  const { refused, refusedCapture, explainWith, ...ui } = o;
  const thread = new Worker(new URL('./thread-entry.js', import.meta.url), {
    workerData: { ui, withRefused: refused !== undefined, ...(explainWith ? { explainWith } : {}) } satisfies ThreadOptions,
  });
  // Only what listen holds is answered here, and cheaply: the judging is the thread's.
  const answer = async (m: ThreadAsk): Promise<RefusedView | RefusedCapture | undefined> =>
    m.what === 'refused' ? refused?.() : refusedCapture?.(m.id);
  let closed: (() => void) | undefined;
  const ready = new Promise<UiHandle>((resolve, reject) => {
    thread.on('message', (m: ThreadToMain) => {
      if (m.type === 'ask')
        void answer(m).then(
          (value) => thread.postMessage({ type: 'answer', askId: m.askId, value } satisfies MainToThread),
          () => thread.postMessage({ type: 'answer', askId: m.askId, value: undefined } satisfies MainToThread),
        );
      else if (m.type === 'ready')
        resolve({
          url: m.url,
          pageUrl: m.pageUrl,
          token: m.token,
          close: async () => {
            const done = new Promise<void>((r) => (closed = r));
            thread.postMessage({ type: 'close' } satisfies MainToThread);
            // A thread that cannot close its server in time is ended all the same.
            await Promise.race([done, new Promise((r) => setTimeout(r, 2_000).unref())]);
            await thread.terminate();
          },
        });
      else if (m.type === 'failed') {
        void thread.terminate();
        reject(m.name === 'UsageError' ? new UsageError(m.message) : new Error(m.message));
      } else if (m.type === 'closed') closed?.();
    });
    thread.once('error', reject);
  });
  return ready;
}
