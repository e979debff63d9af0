import { createHmac, createSecretKey, randomFillSync, timingSafeEqual } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import type { IncomingHeaders, JsonObject, JsonValue } from './types.js';
import { SignatureError } from './types.js';

// A KeyObject per secret saves re-importing the key on every signature (about a third of an HMAC
// of a typical 1-2 KB event). Secrets are few per process, so the cache stays tiny.
const keys = new Map<string, KeyObject>();

function keyFor(secret: string): KeyObject {
  let key = keys.get(secret);
  if (!key) {
    key = createSecretKey(Buffer.from(secret, 'utf8'));
    if (keys.size > 64) keys.clear();
    keys.set(secret, key);
  }
  return key;
}

/** The window for a signed timestamp, seconds: the provider's own, else the 5 minutes most use. */
export function windowSec(provider: { toleranceSec?: number }): number {
  return provider.toleranceSec ?? 300;
}

/** HMAC of the parts, keyed with the secret's UTF-8 bytes. */
export function hmac(algorithm: 'sha256' | 'sha1', secret: string, ...parts: (string | Buffer)[]): Buffer {
  // An empty key cannot become a KeyObject; HMAC with it is still defined (and still wrong).
  const mac = createHmac(algorithm, secret === '' ? '' : keyFor(secret));
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
  // The last line of defence for a library caller who skipped checkKeyMaterial: an HMAC keyed with
  // nothing is one anyone can compute, so it verifies nothing.
  if (secrets.some((s) => s.trim() === '')) throw new SignatureError('no_secret', 'an empty secret verifies nothing');
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

/** The JSON of a form body's one `payload` field (a GitHub hook set to form), or undefined for a JSON body or another form. */
export function formPayloadJson(rawBody: Buffer): string | undefined {
  if (rawBody.length === 0 || rawBody[0] === 0x7b || rawBody[0] === 0x5b) return undefined;
  return new URLSearchParams(rawBody.toString('utf8')).get('payload') ?? undefined;
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

// Random bytes drawn in blocks: one system call per 4 KiB instead of one per id, because `send`
// makes an id for every event and at tens of thousands a second the calls add up.
const pool = Buffer.alloc(4096);
let poolAt = pool.length;

function randomByte(): number {
  if (poolAt === pool.length) {
    randomFillSync(pool);
    poolAt = 0;
  }
  return pool[poolAt++] as number;
}

/** Random [A-Za-z0-9] of the given length, the shape of Stripe's and Svix's ids (ids, not keys). */
/** A signing secret that is not `secret`, for providers whose secrets are any string. */
export function otherStringSecret(secret: string): string {
  return secret === 'hookdrill-wrong-secret' ? 'hookdrill-wrong-secret-2' : 'hookdrill-wrong-secret';
}

export function randomAlnum(length: number, alphabet = ALNUM): string {
  let out = '';
  for (let i = 0; i < length; i++) out += alphabet[randomByte() % alphabet.length];
  return out;
}

/** A random unsigned 32-bit number from the same pool. */
export function randomUint32(): number {
  return ((randomByte() << 24) | (randomByte() << 16) | (randomByte() << 8) | randomByte()) >>> 0;
}

/** ISO 8601 in UTC to the second (`2019-05-15T15:20:18Z`), as GitHub and Shopify write their times. */
export function isoSeconds(nowMs: number): string {
  return new Date(nowMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Now, written as `like` is written: in its offset (`Z`, `-04:00`), with as many fractional digits
 * (`2021-08-19T12:16:32.000-04:00` for a branch-protection rule, `2019-05-15T15:20:38Z` for an
 * issue, `2024-06-25T00:00:00.000Z` for Shopify's app/scopes_update). A fresh moment keeps the
 * style the provider writes that field in, since receivers parse it with the format they saw.
 * A value that is not an ISO time with a zone (GitHub Apps' `2018-04-25 20:42:10`) gets ISO UTC to
 * the second.
 */
export function timeLike(nowMs: number, like: string): string {
  const m = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.(\d{1,9}))?(Z|([+-])(\d{2}):(\d{2}))$/.exec(like);
  if (!m) return isoSeconds(nowMs);
  const offsetMin = m[3] ? (m[3] === '-' ? -1 : 1) * (Number(m[4]) * 60 + Number(m[5])) : 0;
  const local = new Date(nowMs + offsetMin * 60_000).toISOString();
  const fraction = m[1] === undefined ? '' : `.${local.slice(20, 23).padEnd(m[1].length, '0').slice(0, m[1].length)}`;
  return `${local.slice(0, 19)}${fraction}${m[2]}`;
}

/**
 * People's names as customers write them, each with 2-, 3- and 4-byte UTF-8 (𠮷 is the 4-byte
 * "yoshi" of 𠮷田 and 𠮷野家): a default run carries every width, so a receiver that turns each
 * chunk into text before joining them meets a character it can cut in two.
 */
export const PEOPLE: readonly (readonly [string, string])[] = [
  ['花子 Zoë', '𠮷田'],
  ['Jürgen', 'Weiß · 𠮷野'],
  ['María', 'Ñúñez – 𠮷川'],
];

export function unixSeconds(nowMs: number): number {
  return Math.floor(nowMs / 1000);
}

export const MINUTE = 60_000;
export const HOUR = 3_600_000;

/** A value with every object's keys sorted, arrays in their order: SendGrid's and Discord's bodies are written so. */
export function sortedKeys(v: JsonValue): JsonValue {
  if (Array.isArray(v)) return v.map(sortedKeys);
  if (!isObject(v)) return v;
  const out: JsonObject = {};
  for (const k of Object.keys(v).sort()) out[k] = sortedKeys(v[k] as JsonValue);
  return out;
}
