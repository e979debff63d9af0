import { UsageError } from '../util/errors.js';
import type { RowCursor } from './types.js';

/**
 * A page's cursor as text a person can paste back (`inspect --after`, the page's "older"): the
 * last row's place in the receipt order. Opaque on purpose — base64url of its three fields — so
 * nobody is tempted to build one by hand from an id alone (two sources may share an id).
 */
export function encodeCursor(c: RowCursor): string {
  return Buffer.from(JSON.stringify([c.receivedAt, c.source, c.deliveryId])).toString('base64url');
}

export function decodeCursor(text: string, flag = '--after'): RowCursor {
  const bad = () => new UsageError(`${flag} ${text.slice(0, 80)}: not a cursor hookdrill printed (copy "next" from inspect --json)`);
  if (!/^[A-Za-z0-9_-]{1,4096}$/.test(text)) throw bad();
  let v: unknown;
  try {
    v = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw bad();
  }
  if (!Array.isArray(v) || v.length !== 3 || !Number.isSafeInteger(v[0]) || typeof v[1] !== 'string' || typeof v[2] !== 'string')
    throw bad();
  return { receivedAt: v[0] as number, source: v[1] as string, deliveryId: v[2] as string };
}
