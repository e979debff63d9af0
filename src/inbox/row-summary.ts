import type { StoredDelivery } from './types.js';

/** A row as inspect shows it: without its body (see --id … --body). */
export interface RowSummary {
  source: string;
  deliveryId: string;
  eventType: string | undefined;
  status: StoredDelivery['status'];
  attempts: number;
  receivedAt: number;
  nextAttemptAt: number | undefined;
  lastError: string | undefined;
  finishedAt: number | undefined;
  bytes: number | null;
  /** The route listen gave it, when it gave one. */
  route?: string;
}

/** A stored row without its body: what inspect lists and requeue samples. */
export function rowSummary(r: StoredDelivery): RowSummary {
  return {
    source: r.source,
    deliveryId: r.deliveryId,
    eventType: r.eventType,
    status: r.status,
    attempts: r.attempts,
    receivedAt: r.receivedAt,
    // For a done or dead row the stored next-attempt time means nothing.
    nextAttemptAt: r.status === 'pending' || r.status === 'working' ? r.nextAttemptAt : undefined,
    lastError: r.lastError,
    finishedAt: r.finishedAt,
    bytes: r.body === null ? null : r.body.length,
    ...(r.route !== undefined ? { route: r.route } : {}),
  };
}
