import type { TimingProfile } from '../providers/index.js';

/** The numbers one run delivers with: a profile after the user's overrides and the time scale. */
export interface Timing {
  profile: string;
  timeScale: number;
  timeoutMs: number;
  retryDelaysMs: number[];
  maxRedirects: number;
  retryAfterStatuses: readonly number[];
  stopStatuses: readonly number[];
  stopHeader?: { name: string; value: string };
}

export interface TimingOverrides {
  timeScale?: number;
  /** Unscaled; replaces the profile's. */
  timeoutMs?: number;
  /** Unscaled; replaces the profile's schedule. */
  retryDelaysMs?: number[];
  noRetry?: boolean;
}

/**
 * Scale every wait: the time scale compresses the provider's clock, so a 3 s Slack timeout at 0.01
 * is 30 ms and its 5 min retry 3 s; the shape of the schedule is kept, only its unit changes.
 */
export function resolveTiming(profile: TimingProfile, o: TimingOverrides = {}): Timing {
  const scale = o.timeScale ?? 1;
  const delays = o.noRetry ? [] : (o.retryDelaysMs ?? [...profile.retryDelaysMs]);
  return {
    profile: profile.name,
    timeScale: scale,
    timeoutMs: (o.timeoutMs ?? profile.timeoutMs) * scale,
    retryDelaysMs: delays.map((d) => d * scale),
    maxRedirects: profile.maxRedirects,
    retryAfterStatuses: profile.retryAfterStatuses,
    stopStatuses: profile.stopStatuses,
    ...(profile.stopHeader ? { stopHeader: profile.stopHeader } : {}),
  };
}

/** `Retry-After` in seconds or as an HTTP date, in milliseconds from `nowMs`; undefined if unusable. */
export function parseRetryAfter(value: string | undefined, nowMs: number): number | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  return Number.isNaN(date) ? undefined : Math.max(0, date - nowMs);
}
