/**
 * The SQLite inbox's observation thread (a worker_threads entry point): the counts behind
 * /metrics, /healthz's detail and listen's summary, on a read-only connection of its own. A
 * count over a million rows holds whichever thread runs it for tens of milliseconds; here that is
 * not the thread that reads requests and answers them. In WAL mode a reader never waits for the
 * writer, nor the writer for it.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { yieldCpuToReceiver } from '../../util/thread-priority.js';
import { openSqliteInbox } from './index.js';
import type { SqliteInbox } from './index.js';

export type ReaderRequest = { id: number; op: 'stats' };
export type ReaderReply =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: { name: string; message: string; code: string | undefined } };

yieldCpuToReceiver();
const port = parentPort;
if (!port) throw new Error('reader.js runs as a worker thread');
const { path } = workerData as { path: string };

let inbox: SqliteInbox;
try {
  inbox = openSqliteInbox(path, { create: false, readonly: true });
  port.postMessage({ ready: true });
} catch (err) {
  port.postMessage({ ready: false, message: (err as Error).message });
  process.exit(0);
}

port.on('message', (m: ReaderRequest) => {
  inbox.stats().then(
    (result) => port.postMessage({ id: m.id, ok: true, result } satisfies ReaderReply),
    (err: unknown) =>
      port.postMessage({
        id: m.id,
        ok: false,
        error: {
          name: (err as Error).name ?? 'Error',
          message: (err as Error).message ?? String(err),
          code: (err as { code?: string }).code,
        },
      } satisfies ReaderReply),
  );
});
