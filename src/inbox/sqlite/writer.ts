/**
 * The SQLite inbox's writer thread (a worker_threads entry point). better-sqlite3 is synchronous:
 * on the main thread every commit holds the event loop while the disk syncs, and a write lock held
 * by another process holds it for the whole busy timeout — no request is read, no signature
 * checked, /healthz does not answer. Here the writes wait instead, on their own connection, while
 * the main thread goes on. Messages are handled one at a time, each a transaction.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { ClaimOptions, Settlement } from '../types.js';
import { openSqliteInbox } from './index.js';
import type { SqliteInbox } from './index.js';
import { unpack } from './packing.js';
import type { PackedRows } from './packing.js';

export type WriterRequest =
  | { id: number; op: 'putMany'; batch: PackedRows }
  | { id: number; op: 'claim'; options: ClaimOptions }
  | { id: number; op: 'settle'; outcomes: Settlement[] };

export type WriterReply =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: { name: string; message: string; code: string | undefined } };

const port = parentPort;
if (!port) throw new Error('writer.js runs as a worker thread');
const { path } = workerData as { path: string };

let inbox: SqliteInbox;
try {
  // The main thread has created and migrated the file; this connection only opens it.
  inbox = openSqliteInbox(path, { create: false });
  port.postMessage({ ready: true });
} catch (err) {
  port.postMessage({ ready: false, message: (err as Error).message });
  process.exit(0);
}

port.on('message', (m: WriterRequest) => {
  void handle(m).then(
    (result) => port.postMessage({ id: m.id, ok: true, result } satisfies WriterReply),
    (err: unknown) =>
      port.postMessage({
        id: m.id,
        ok: false,
        error: {
          name: (err as Error).name ?? 'Error',
          message: (err as Error).message ?? String(err),
          code: (err as { code?: string }).code,
        },
      } satisfies WriterReply),
  );
});

function handle(m: WriterRequest): Promise<unknown> {
  switch (m.op) {
    case 'putMany':
      return Promise.resolve().then(() => inbox.putRows(unpack(m.batch)));
    case 'claim':
      return inbox.claim(m.options);
    case 'settle':
      return inbox.settle(m.outcomes);
  }
}
