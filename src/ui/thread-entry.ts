/**
 * `listen --ui`'s inspector, as a worker_threads entry point: its server, its queries (SQLite is
 * synchronous: an overview of a million rows holds its thread for seconds) and its JSON all run on
 * this thread, never on the loop that reads deliveries and answers them. What only listen holds —
 * the requests it refused lately — is asked of the main thread by message (thread.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { yieldCpuToReceiver } from '../util/thread-priority.js';
import { startUi } from './server.js';
import type { RefusedDetail, UiHandle, UiOptions } from './server.js';
import type { RefusedView } from './refused.js';
import type { RefusedCapture } from '../receiver/index.js';
import { explainRefused } from './refused-detail.js';
import type { AskWhat, ThreadToMain, MainToThread, ThreadOptions } from './thread.js';

yieldCpuToReceiver();
const port = parentPort;
if (!port) throw new Error('thread-entry.js runs as a worker thread');
const o = workerData as ThreadOptions;

let next = 1;
const waiting = new Map<number, (value: unknown) => void>();
function ask<T>(what: AskWhat): Promise<T> {
  const askId = next++;
  return new Promise<T>((resolve) => {
    waiting.set(askId, resolve as (value: unknown) => void);
    port?.postMessage({ type: 'ask', ...what, askId } as ThreadToMain);
  });
}

let handle: UiHandle | undefined;
port.on('message', (m: MainToThread) => {
  if (m.type === 'answer') {
    waiting.get(m.askId)?.(m.value);
    waiting.delete(m.askId);
    return;
  }
  if (m.type === 'close')
    void (handle?.close() ?? Promise.resolve()).then(() => port.postMessage({ type: 'closed' } satisfies ThreadToMain));
});

const options: UiOptions = {
  ...o.ui,
  ...(o.withRefused
    ? {
        refused: () => ask<RefusedView>({ what: 'refused' }),
        // Judged here, on the inspector's thread: "why?" asked again and again never holds up an acknowledgement.
        refusedRequest: async (id: string): Promise<RefusedDetail | undefined> => {
          const c = await ask<RefusedCapture | undefined>({ what: 'refusedCapture', id });
          return c ? explainRefused(c, id, o.explainWith ?? { secrets: [] }) : undefined;
        },
      }
    : {}),
};
startUi(options).then(
  (h) => {
    handle = h;
    port.postMessage({ type: 'ready', url: h.url, pageUrl: h.pageUrl, token: h.token } satisfies ThreadToMain);
  },
  (err: unknown) => {
    port.postMessage({
      type: 'failed',
      name: err instanceof Error ? err.name : 'Error',
      message: err instanceof Error ? err.message : String(err),
    } satisfies ThreadToMain);
  },
);
