import type { Claimed, DeliveryStatus, StoredDelivery } from './types.js';

/** The deliveries table's row, as both backends keep it (same columns, same meaning). */
export interface DeliveryRow {
  source: string;
  delivery_id: string;
  event_type: string | null;
  body: Buffer | null;
  headers: string;
  received_at: number;
  status: DeliveryStatus;
  attempts: number;
  attempt_base: number;
  next_attempt_at: number;
  last_error: string | null;
  finished_at: number | null;
  /** Absent in a row read before the column existed (never: migrations add it), NULL when none. */
  route?: string | null;
}

export function toStored(r: DeliveryRow): StoredDelivery {
  return {
    source: r.source,
    deliveryId: r.delivery_id,
    eventType: r.event_type ?? undefined,
    body: r.body,
    headers: JSON.parse(r.headers) as Record<string, string>,
    receivedAt: r.received_at,
    status: r.status,
    attempts: r.attempts - r.attempt_base,
    nextAttemptAt: r.next_attempt_at,
    lastError: r.last_error ?? undefined,
    finishedAt: r.finished_at ?? undefined,
    ...(r.route ? { route: r.route } : {}),
  };
}

/** Claimed rows, oldest first; the fence is the claim count itself (it never goes back). */
export function toClaimed(rows: DeliveryRow[]): Claimed[] {
  return rows
    .sort((a, b) => a.received_at - b.received_at)
    .map((r) => {
      const { source, deliveryId, eventType, body, headers, receivedAt, attempts } = toStored(r);
      return {
        source,
        deliveryId,
        eventType,
        body,
        headers,
        receivedAt,
        attempt: attempts,
        fence: r.attempts,
        ...(r.route ? { route: r.route } : {}),
      };
    });
}
