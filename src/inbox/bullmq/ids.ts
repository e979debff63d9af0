import { createHash, randomBytes } from 'node:crypto';
import type { DeliveryKey } from '../types.js';

/**
 * The BullMQ job id of a delivery: a hash of (source, delivery id), so any id a provider sends —
 * with ':' in it, or only digits, both of which BullMQ refuses as a custom id — maps to one valid
 * id, and a redelivery to the same one (BullMQ's add of an existing id is a no-op). 'd' + 40 hex
 * digits (160 bits): never all digits, never a ':'.
 */
export function jobIdFor(key: DeliveryKey): string {
  return `d${createHash('sha256').update(key.source).update('\u0000').update(key.deliveryId).digest('hex').slice(0, 40)}`;
}

/**
 * A claim's fence, which is also its BullMQ lock token: random, so a claim never reuses one after
 * a requeue resets the attempts, and never 0 (BullMQ skips the lock check for the token "0").
 */
export function newFence(): number {
  // 53 random bits, as a safe integer of at least 1.
  const n = Number(randomBytes(8).readBigUInt64BE() >> 11n);
  return n === 0 ? 1 : n;
}

/**
 * What marks a put's own job: its data begins with this, so a readback tells who created it. It
 * must differ between every two puts anywhere: 96 random bits drawn once per process, and a count
 * within it. (Drawing random bytes for each put cost a seventh of listen's time on BullMQ.)
 */
const NONCE_PREFIX = randomBytes(12).toString('hex');
let nonces = 0;
export function newNonce(): string {
  nonces += 1;
  return `${NONCE_PREFIX}${nonces.toString(36)}`;
}
