import type { DeliveryRecord } from './deliver.js';
import { percentiles, round } from '../util/stats.js';

export interface SendSummary {
  events: number;
  deliveries: number;
  /** Deliveries answered 2xx by some attempt. */
  delivered: number;
  /** Deliveries whose last answer did not match --expect. */
  failed: number;
  attempts: number;
  retries: number;
  transportErrors: number;
  latencyMs: { p50?: number; p99?: number; max?: number };
  elapsedMs: number;
  deliveriesPerSec: number;
}

/** The counts and latencies send and replay report for a run of deliveries. */
export function summarizeDeliveries(events: number, deliveries: readonly DeliveryRecord[], elapsedMs: number): SendSummary {
  const latencies = deliveries.flatMap((d) => d.attempts.map((a) => a.latencyMs));
  const attempts = latencies.length;
  const [p50, p99, max] = percentiles(latencies, [50, 99, 100]);
  return {
    events,
    deliveries: deliveries.length,
    delivered: deliveries.filter((d) => d.outcome === 'acknowledged').length,
    failed: deliveries.filter((d) => !d.met).length,
    attempts,
    retries: attempts - deliveries.length,
    transportErrors: deliveries.reduce((n, d) => n + d.attempts.filter((a) => a.error).length, 0),
    latencyMs: {
      ...(p50 !== undefined ? { p50: round(p50) } : {}),
      ...(p99 !== undefined ? { p99: round(p99) } : {}),
      ...(max !== undefined ? { max: round(max) } : {}),
    },
    elapsedMs: round(elapsedMs),
    deliveriesPerSec: elapsedMs > 0 ? round((deliveries.length * 1000) / elapsedMs) : 0,
  };
}
