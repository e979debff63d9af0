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

const SIZE_UNITS: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  kb: 1_000,
  kib: 1024,
  mb: 1_000_000,
  mib: 1024 ** 2,
  gb: 1_000_000_000,
  gib: 1024 ** 3,
};

/**
 * A size in bytes, as the help shows it (32 MiB) or as people write it (5mb, 512KiB, 1048576):
 * KB/MB/GB are powers of 1000, KiB/MiB/GiB of 1024, a bare number is bytes.
 */
export function parseBytesFlag(text: string | number | undefined, flag: string, min: number, max: number, fallback: number): number {
  if (text === undefined) return fallback;
  if (typeof text === 'number') return parseIntFlag(text, flag, min, max, fallback);
  const m = /^\s*(\d+(?:\.\d+)?)\s*([kmg]i?b|b)?\s*$/i.exec(text);
  const value = m ? Math.round(Number(m[1]) * (SIZE_UNITS[(m[2] ?? '').toLowerCase()] ?? Number.NaN)) : Number.NaN;
  if (!Number.isInteger(value) || value < min || value > max)
    throw new UsageError(`${flag} ${text}: expected a size from ${min} to ${max} bytes (1048576, 512KiB, 5MB, 32MiB)`);
  return value;
}

/**
 * A number above 0 and at most `max.value`: without a bound, 1e308 passed as finite and what it
 * multiplied (a wait) became a time no Date can hold — an internal error, not a message.
 */
export function parsePositiveNumber(
  text: string | number | undefined,
  flag: string,
  fallback: number,
  max: { value: number; why: string },
): number {
  if (text === undefined) return fallback;
  const value = typeof text === 'number' ? text : /^\s*\d*\.?\d+(e-?\d+)?\s*$/i.test(text) ? Number(text) : NaN;
  if (!Number.isFinite(value) || value <= 0) throw new UsageError(`${flag} ${text}: expected a number above 0`);
  if (value > max.value) throw new UsageError(`${flag} ${text}: at most ${max.value} (${max.why})`);
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
    // The one reason a URL that looks right is refused: its port.
    const port = /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*:(\d+)(?:[/?#]|$)/i.exec(text)?.[1];
    if (port !== undefined && Number(port) > 65_535)
      throw new UsageError(`${flag} "${shown}": port ${port} is out of range (a port is 1 to 65535)`);
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
