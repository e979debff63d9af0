import assert from 'node:assert/strict';
import type { JsonValue } from '../../src/providers/index.js';

/** The same keys, in the same order, with values of the same types, all the way down. */
export function assertSameShape(a: JsonValue, b: JsonValue, path = '$'): void {
  assert.equal(Array.isArray(a), Array.isArray(b), path);
  assert.equal(a === null, b === null, path);
  assert.equal(typeof a, typeof b, path);
  if (Array.isArray(a) && Array.isArray(b)) {
    assert.equal(a.length, b.length, path);
    for (const [i, v] of a.entries()) assertSameShape(v, b[i] as JsonValue, `${path}[${i}]`);
  } else if (a && b && typeof a === 'object' && typeof b === 'object') {
    assert.deepEqual(Object.keys(a), Object.keys(b), path);
    for (const k of Object.keys(a))
      assertSameShape((a as Record<string, JsonValue>)[k] as JsonValue, (b as Record<string, JsonValue>)[k] as JsonValue, `${path}.${k}`);
  }
}
