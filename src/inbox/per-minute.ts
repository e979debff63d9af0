import type { DeliveryStatus, Overview } from './types.js';

/** The overview's hour in minutes, oldest first. */
export const MINUTES = 60;

/**
 * The hour's chart from counts by (minute, status), as every backend's overview gives it: the
 * total per minute, and the same minutes by where the rows stand now. Minutes outside the hour
 * (a clock that moved) are dropped rather than drawn at an edge.
 */
export function perMinuteChart(
  counts: Iterable<{ minute: number; status: DeliveryStatus; n: number }>,
): Pick<Overview, 'perMinute' | 'perMinuteByStatus'> {
  const zeros = () => Array.from({ length: MINUTES }, () => 0);
  const perMinute = zeros();
  const perMinuteByStatus: Record<DeliveryStatus, number[]> = { pending: zeros(), working: zeros(), done: zeros(), dead: zeros() };
  for (const { minute, status, n } of counts) {
    const byStatus = perMinuteByStatus[status];
    if (!byStatus || !Number.isInteger(minute) || minute < 0 || minute >= MINUTES) continue;
    byStatus[minute] = (byStatus[minute] ?? 0) + Number(n);
    perMinute[minute] = (perMinute[minute] ?? 0) + Number(n);
  }
  return { perMinute, perMinuteByStatus };
}
