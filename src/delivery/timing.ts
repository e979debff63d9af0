import type { TimingProfile } from '../providers/index.js';

/** The numbers one run delivers with: a profile after the user's overrides and the time scale. */
export interface Timing {
  profile: string;
  /** The factor on every wait between attempts (and on the profile's timeout only with timeoutScaled). */
  timeScale: number;
  /** --scale-timeout: the profile's timeout was scaled too (never below SCALED_TIMEOUT_FLOOR_MS). */
  timeoutScaled?: true;
  timeoutMs: number;
  retryDelaysMs: number[];
  maxRedirects: number;
  retryAfterStatuses: readonly number[];
  stopStatuses: readonly number[];
  stopHeader?: { name: string; value: string };
}

export interface TimingOverrides {
  /** Scales the waits between attempts; the provider's timeout stays its own unless scaleTimeout. */
  timeScale?: number;
  /** Scale the profile's timeout by timeScale too: a stricter rule than the provider's, asked for by name. */
  scaleTimeout?: boolean;
  /** Replaces the profile's, and is never scaled: the user said how long. */
  timeoutMs?: number;
  /** Unscaled; replaces the profile's schedule. */
  retryDelaysMs?: number[];
  noRetry?: boolean;
}

/**
 * A scaled timeout (only with scaleTimeout) never drops below this (nor above the provider's own). A timeout is about the
 * network and the receiver, not the schedule: on loopback a correct receiver's answer can take tens
 * of milliseconds for reasons of no concern to any provider (Nagle and delayed ACKs on a reused
 * connection, ~40 ms; a GC pause; two cores shared with the load), and Slack's 3 s at 0.01 would be
 * 30 ms. One second is far above those and below every provider's own timeout.
 */
export const SCALED_TIMEOUT_FLOOR_MS = 1_000;

/**
 * Scale the waits: the time scale compresses the provider's clock, so Slack's 5 min retry at 0.01
 * is 3 s; the shape of the schedule is kept, only its unit changes. The timeout is the provider's
 * own: a receiver is held to the provider's rule, and a scaled one fails receivers the provider
 * accepts (GitHub's 10 s at 0.01 is 1 s, and a connection queued past a small listen backlog waits
 * for TCP's 1 s retransmission). Only scaleTimeout scales it, never below SCALED_TIMEOUT_FLOOR_MS;
 * a timeout the user gave is taken as it is.
 */
export function resolveTiming(profile: TimingProfile, o: TimingOverrides = {}): Timing {
  const scale = o.timeScale ?? 1;
  const delays = o.noRetry ? [] : (o.retryDelaysMs ?? [...profile.retryDelaysMs]);
  const timeoutScaled = o.scaleTimeout === true && o.timeoutMs === undefined && scale !== 1;
  const timeoutMs = timeoutScaled
    ? Math.max(profile.timeoutMs * scale, Math.min(SCALED_TIMEOUT_FLOOR_MS, profile.timeoutMs))
    : profile.timeoutMs;
  return {
    profile: profile.name,
    timeScale: scale,
    ...(timeoutScaled ? { timeoutScaled: true as const } : {}),
    timeoutMs: o.timeoutMs ?? timeoutMs,
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
