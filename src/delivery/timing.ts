import type { TimingProfile } from '../providers/index.js';

/** The numbers one run delivers with: a profile after the user's overrides and the time scale. */
export interface Timing {
  profile: string;
  /** The factor on every wait between attempts (and on the profile's timeout, unless delaysOnly). */
  timeScale: number;
  /** --delay-scale: only the waits are scaled; the timeout stays the profile's (or the one given). */
  delaysOnly?: true;
  timeoutMs: number;
  retryDelaysMs: number[];
  maxRedirects: number;
  retryAfterStatuses: readonly number[];
  stopStatuses: readonly number[];
  stopHeader?: { name: string; value: string };
}

export interface TimingOverrides {
  timeScale?: number;
  /** Scales the waits between attempts only: "retry fast, but give my slow receiver its real timeout". */
  delayScale?: number;
  /** Replaces the profile's, and is never scaled: the user said how long. */
  timeoutMs?: number;
  /** Unscaled; replaces the profile's schedule. */
  retryDelaysMs?: number[];
  noRetry?: boolean;
}

/**
 * A scaled timeout never drops below this (nor above the provider's own). A timeout is about the
 * network and the receiver, not the schedule: on loopback a correct receiver's answer can take tens
 * of milliseconds for reasons of no concern to any provider (Nagle and delayed ACKs on a reused
 * connection, ~40 ms; a GC pause; two cores shared with the load), and Slack's 3 s at 0.01 would be
 * 30 ms. One second is far above those and below every provider's own timeout.
 */
export const SCALED_TIMEOUT_FLOOR_MS = 1_000;

/**
 * Scale every wait: the time scale compresses the provider's clock, so Slack's 5 min retry at 0.01
 * is 3 s; the shape of the schedule is kept, only its unit changes. The profile's timeout is scaled
 * too, but never below SCALED_TIMEOUT_FLOOR_MS; a timeout the user gave is taken as it is.
 */
export function resolveTiming(profile: TimingProfile, o: TimingOverrides = {}): Timing {
  const delaysOnly = o.delayScale !== undefined;
  const scale = o.delayScale ?? o.timeScale ?? 1;
  const delays = o.noRetry ? [] : (o.retryDelaysMs ?? [...profile.retryDelaysMs]);
  const scaledTimeout = delaysOnly
    ? profile.timeoutMs
    : Math.max(profile.timeoutMs * scale, Math.min(SCALED_TIMEOUT_FLOOR_MS, profile.timeoutMs));
  return {
    profile: profile.name,
    timeScale: scale,
    ...(delaysOnly ? { delaysOnly: true as const } : {}),
    timeoutMs: o.timeoutMs ?? scaledTimeout,
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
