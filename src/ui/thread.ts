import { Worker } from 'node:worker_threads';
import { UsageError } from '../util/errors.js';
import type { RefusedView } from './refused.js';
import type { RefusedDetail, UiHandle, UiOptions } from './server.js';

/** What the inspector's thread is started with: the options that cross a thread (no functions). */
export interface ThreadOptions {
  ui: Omit<UiOptions, 'refused' | 'refusedRequest'>;
  withRefused: boolean;
}

export type AskWhat = { what: 'refused' } | { what: 'refusedRequest'; id: string };
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
export async function startUiThread(o: UiOptions): Promise<UiHandle> {
  const { refused, refusedRequest, ...ui } = o;
  const thread = new Worker(new URL('./thread-entry.js', import.meta.url), {
    workerData: { ui, withRefused: refused !== undefined } satisfies ThreadOptions,
  });
  const answer = async (m: ThreadAsk): Promise<RefusedView | RefusedDetail | undefined> =>
    m.what === 'refused' ? refused?.() : refusedRequest?.(m.id);
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
