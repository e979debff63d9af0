/**
 * The SQLite inbox's writer thread (a worker_threads entry point). better-sqlite3 is synchronous:
 * on the main thread every commit holds the event loop while the disk syncs, and a write lock held
 * by another process holds it for the whole busy timeout — no request is read, no signature
 * checked, /healthz does not answer. Here the writes wait instead, on their own connection, while
 * the main thread goes on. What queues up while a transaction runs shares the next one.
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { ClaimOptions, Settlement } from '../types.js';
import { openSqliteInbox } from './index.js';
import type { SqliteInbox, WriteOp } from './index.js';
import { unpack } from './packing.js';
import type { PackedRows } from './packing.js';

export type WriterRequest =
  | { id: number; op: 'putMany'; batch: PackedRows }
  | { id: number; op: 'claim'; options: ClaimOptions }
  | { id: number; op: 'settle'; outcomes: Settlement[]; now?: number }
  /** Checkpoint the WAL for the main thread's connection, which does not (see threaded.ts). */
  | { id: number; op: 'checkpoint' };

export type WriterReply =
  | { id: number; ok: true; result: unknown }
  | { id: number; ok: false; error: { name: string; message: string; code: string | undefined } };

const port = parentPort;
if (!port) throw new Error('writer.js runs as a worker thread');
const { path, coalesce } = workerData as { path: string; coalesce: boolean };

let inbox: SqliteInbox;
try {
  // The main thread has created and migrated the file; this connection only opens it.
  inbox = openSqliteInbox(path, { create: false });
  port.postMessage({ ready: true });
} catch (err) {
  port.postMessage({ ready: false, message: (err as Error).message });
  process.exit(0);
}

/**
 * With group commit, whatever has queued up while the last transaction ran — a batch of puts, the
 * worker's outcomes, its next claim — goes into the next transaction together: one disk sync.
 */
type WriteRequest = Exclude<WriterRequest, { op: 'checkpoint' }>;
let queued: WriteRequest[] = [];
port.on('message', (m: WriterRequest) => {
  if (m.op === 'checkpoint') return checkpoint(m.id);
  queued.push(m);
  if (queued.length === 1) setImmediate(drain);
});

function drain(): void {
  if (!coalesce) {
    // One transaction per request (--commit-batch 1: the per-delivery design, kept for comparison).
    const all = queued;
    queued = [];
    for (const r of all) run([r]);
    return;
  }
  const requests = queued;
  queued = [];
  run(requests);
}

function run(requests: WriteRequest[]): void {
  let results: unknown[];
  try {
    results = inbox.writeAll(requests.map(toOp));
  } catch (err) {
    const error = errorOf(err);
    for (const r of requests) port?.postMessage({ id: r.id, ok: false, error } satisfies WriterReply);
    return;
  }
  for (const [i, r] of requests.entries()) port?.postMessage({ id: r.id, ok: true, result: results[i] } satisfies WriterReply);
}

function checkpoint(id: number): void {
  try {
    port?.postMessage({ id, ok: true, result: inbox.checkpoint() } satisfies WriterReply);
  } catch (err) {
    port?.postMessage({ id, ok: false, error: errorOf(err) } satisfies WriterReply);
  }
}

/** An error as it crosses back to the main thread: its name and code are what callers act on. */
function errorOf(err: unknown): { name: string; message: string; code: string | undefined } {
  return { name: (err as Error).name ?? 'Error', message: (err as Error).message ?? String(err), code: (err as { code?: string }).code };
}

function toOp(m: Exclude<WriterRequest, { op: 'checkpoint' }>): WriteOp {
  switch (m.op) {
    case 'putMany':
      return { op: 'put', rows: unpack(m.batch) };
    case 'claim':
      return { op: 'claim', options: m.options };
    case 'settle':
      return { op: 'settle', outcomes: m.outcomes, ...(m.now !== undefined ? { now: m.now } : {}) };
  }
}
