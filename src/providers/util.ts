import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingHeaders, JsonObject, JsonValue } from './types.js';
import { SignatureError } from './types.js';

export function hmac(algorithm: 'sha256' | 'sha1', key: string | Buffer, ...parts: (string | Buffer)[]): Buffer {
  const mac = createHmac(algorithm, key);
  for (const part of parts) mac.update(part);
  return mac.digest();
}

/** Constant-time string comparison; unequal lengths are simply unequal (length is not secret). */
export function safeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a);
  const right = Buffer.from(b);
  return left.length === right.length && timingSafeEqual(left, right);
}

/** A header's value by case-insensitive name; the first one when it was sent twice. */
export function header(headers: IncomingHeaders, name: string): string | undefined {
  const direct = headers[name.toLowerCase()] ?? headers[name];
  const value = direct ?? findCaseInsensitive(headers, name);
  return Array.isArray(value) ? value[0] : value;
}

function findCaseInsensitive(headers: IncomingHeaders, name: string): string | string[] | undefined {
  const lower = name.toLowerCase();
  for (const key of Object.keys(headers)) if (key.toLowerCase() === lower) return headers[key];
  return undefined;
}

export function requireHeader(headers: IncomingHeaders, name: string): string {
  const value = header(headers, name);
  if (value === undefined || value === '') {
    throw new SignatureError('missing_header', `missing ${name} header`);
  }
  return value;
}

export function requireSecrets(secrets: readonly string[]): void {
  if (secrets.length === 0) throw new SignatureError('no_secret', 'no secret to verify with');
}

/**
 * Check a signed Unix-seconds timestamp against the receiver's clock. The window applies both ways,
 * as in the official verifiers: a timestamp from the future is as suspect as a stale one.
 */
export function checkTimestamp(text: string, headerName: string, nowMs: number, toleranceSec: number): number {
  if (!/^\d{1,12}$/.test(text)) {
    throw new SignatureError('malformed_header', `${headerName} timestamp "${text}" is not Unix seconds`);
  }
  const ts = Number(text);
  const skew = Math.floor(nowMs / 1000) - ts;
  if (skew > toleranceSec) {
    throw new SignatureError('stale_timestamp', `timestamp is ${skew}s old, beyond the ${toleranceSec}s tolerance`);
  }
  if (-skew > toleranceSec) {
    throw new SignatureError('future_timestamp', `timestamp is ${-skew}s in the future, beyond the ${toleranceSec}s tolerance`);
  }
  return ts;
}

/** Parse a body as JSON when it is JSON; undefined otherwise (receivers must not crash on junk). */
export function parseJson(rawBody: Buffer): JsonValue | undefined {
  try {
    return JSON.parse(rawBody.toString('utf8')) as JsonValue;
  } catch {
    return undefined;
  }
}

export function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function stringField(value: JsonValue | undefined, key: string): string | undefined {
  if (!isObject(value)) return undefined;
  const field = value[key];
  return typeof field === 'string' ? field : undefined;
}

const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Random [A-Za-z0-9] of the given length, the shape of Stripe's and Svix's ids. */
export function randomAlnum(length: number, alphabet = ALNUM): string {
  const bytes = randomBytes(length);
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[(bytes[i] as number) % alphabet.length];
  return out;
}

export function unixSeconds(nowMs: number): number {
  return Math.floor(nowMs / 1000);
}

export function secondsToMs(s: number): number {
  return s * 1000;
}
export const MINUTE = 60_000;
export const HOUR = 3_600_000;
