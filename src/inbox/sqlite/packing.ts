import type { NewDelivery } from '../types.js';
import { toPutRow } from './index.js';
import type { PutRow } from './index.js';

/**
 * Rows as they cross to the thread: one JSON text for the fields and one buffer holding every
 * body, moved rather than copied. Cloning row objects one by one (headers and all) cost more of
 * the main thread than verifying their signatures.
 */
export interface PackedRows {
  fields: string;
  bodies: ArrayBuffer;
}

export function pack(rows: readonly NewDelivery[]): { batch: PackedRows; transfer: ArrayBuffer[] } {
  const fields = JSON.stringify(rows.map((d) => ({ ...toPutRow(d), body: d.body.length })));
  // A buffer of their own (never a slice of Node's shared pool), so it can be moved to the thread.
  const bodies = new ArrayBuffer(rows.reduce((n, d) => n + d.body.length, 0));
  const view = new Uint8Array(bodies);
  let at = 0;
  for (const d of rows) {
    view.set(d.body, at);
    at += d.body.length;
  }
  return { batch: { fields, bodies }, transfer: [bodies] };
}

export function unpack(batch: PackedRows): PutRow[] {
  const all = Buffer.from(batch.bodies);
  let at = 0;
  return (JSON.parse(batch.fields) as (Omit<PutRow, 'body'> & { body: number })[]).map((r) => {
    const body = all.subarray(at, at + r.body);
    at += r.body;
    return { ...r, body };
  });
}
