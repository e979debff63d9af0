import type { Timing } from '../delivery/timing.js';
import { formatDuration } from '../util/duration.js';

/**
 * What a time scale changed, said where the run's timing is printed: the waits always, the
 * timeout only when --scale-timeout asked (a verdict against a scaled timeout is stricter than the
 * provider's, so the output must say so).
 */
export function scaleNote(t: Pick<Timing, 'timeScale' | 'timeoutScaled' | 'timeoutMs'>): string {
  if (t.timeScale === 1) return '';
  return t.timeoutScaled
    ? ` ×${t.timeScale} (waits and timeout, scaled to ${formatDuration(t.timeoutMs)})`
    : ` ×${t.timeScale} (waits only; the timeout is real)`;
}
