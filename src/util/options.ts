import { UsageError } from './errors.js';

/** Flag-value parsers shared by commands: each throws a UsageError that names the flag. */

export function parseIntFlag(text: string | number | undefined, flag: string, min: number, max: number, fallback: number): number {
  if (text === undefined) return fallback;
  const value = typeof text === 'number' ? text : /^\s*\d+\s*$/.test(text) ? Number(text) : NaN;
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new UsageError(`${flag} ${text}: expected a whole number from ${min} to ${max}`);
  }
  return value;
}

export function parsePositiveNumber(text: string | number | undefined, flag: string, fallback: number): number {
  if (text === undefined) return fallback;
  const value = typeof text === 'number' ? text : /^\s*\d*\.?\d+(e-?\d+)?\s*$/i.test(text) ? Number(text) : NaN;
  if (!Number.isFinite(value) || value <= 0) throw new UsageError(`${flag} ${text}: expected a number above 0`);
  return value;
}

/** `50`, `50/s`, `600/m`, `1000/h` → events per second. */
export function parseRate(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const match = /^\s*(\d*\.?\d+)\s*(?:\/\s*(s|m|h))?\s*$/.exec(text);
  const per = { s: 1, m: 60, h: 3600 } as const;
  const value = match ? Number(match[1]) / per[(match[2] ?? 's') as keyof typeof per] : NaN;
  if (!Number.isFinite(value) || value <= 0) throw new UsageError(`--rate ${text}: expected a rate such as 50/s or 600/m`);
  return value;
}

export function parseUrl(text: string | undefined, flag: string): URL {
  if (!text) throw new UsageError(`${flag} is required`);
  // A password in the URL is a secret, even in a URL too broken to parse.
  // Everything up to the last @ is userinfo (a password may hold / and @), so it all goes.
  const shown = text.replace(/\/\/.*@/, '//***@');
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UsageError(`${flag} "${shown}" is not a URL (example: http://127.0.0.1:3000/webhooks)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`${flag} "${shown}" must be http:// or https://`);
  }
  return url;
}

/** Where a URL's server is, for a TCP connection: the host without IPv6 brackets, and the port (default by scheme). */
export function hostAndPort(url: URL): { host: string; port: number } {
  return { host: url.hostname.replace(/^\[|\]$/g, ''), port: Number(url.port || (url.protocol === 'https:' ? 443 : 80)) };
}

/** A URL as it may be shown: a password in it is a secret like any other. */
export function displayUrl(url: URL): string {
  if (!url.password) return url.href;
  const copy = new URL(url.href);
  copy.password = '***';
  return copy.href;
}

/** Credentials in a URL (user:pass@) as the Basic Authorization header a sender derives from them. */
export function basicAuth(url: URL): string | undefined {
  if (!url.username && !url.password) return undefined;
  const pair = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
  return `Basic ${Buffer.from(pair).toString('base64')}`;
}

/** Headers the HTTP client must set itself: a user's value would make the request malformed. */
const OWNED_HEADERS = new Set(['content-length', 'transfer-encoding', 'host', 'connection']);

/** `Name: value` (or `Name=value`) → a header pair; the name must be an HTTP token. */
export function parseHeader(text: string): [string, string] {
  const match = /^\s*([!#$%&'*+\-.^_`|~0-9A-Za-z]+)\s*[:=]\s?(.*)$/.exec(text);
  if (!match) throw new UsageError(`--header ${text}: expected "Name: value"`);
  return [headerName(match[1] as string), (match[2] as string).trim()];
}

/** A header name a user may set: an HTTP token, and not one the client must set itself. */
export function headerName(name: string): string {
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) throw new UsageError(`header "${name}": not a valid header name`);
  if (OWNED_HEADERS.has(name.toLowerCase())) {
    throw new UsageError(`--header ${name}: hookdrill sets ${name} itself for each request (it follows from the body and the URL)`);
  }
  return name;
}
