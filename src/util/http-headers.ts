/**
 * Headers that belong to one HTTP hop, not to the delivery: never stored, replayed or forwarded
 * (the client that sends the next hop sets its own).
 */
export const HOP_BY_HOP_HEADERS: ReadonlySet<string> = new Set([
  'host',
  'connection',
  'keep-alive',
  'content-length',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'proxy-connection',
]);

/**
 * Credentials: not the event's, so never stored (and so never shown, replayed or forwarded) — the
 * standard ones, and the API-key headers gateways and apps use in their place.
 */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'x-api-key',
  'api-key',
  'x-auth-token',
  'x-access-token',
  'x-amz-security-token',
]);

/** Headers that carry a credential either way of an exchange: shown as *** (send --verbose). */
const SHOWN_MASKED: ReadonlySet<string> = new Set([...CREDENTIAL_HEADERS, 'set-cookie']);

/**
 * Why a header value cannot be sent in a request (a control character other than tab, or a
 * character beyond one byte), or undefined when it can: such a value fails every forward.
 */
export function headerValueProblem(value: string): string | undefined {
  for (const ch of value) {
    const code = ch.codePointAt(0) as number;
    if ((code < 0x20 && code !== 0x09) || code === 0x7f) return `a control character (0x${code.toString(16).padStart(2, '0')})`;
    if (code > 0xff) return `a character no header can carry (U+${code.toString(16).toUpperCase().padStart(4, '0')})`;
  }
  return undefined;
}

/** A value made sendable as a header: what a header cannot carry percent-encoded (an id from a body, say). */
export function headerSafe(value: string): string {
  return headerValueProblem(value) === undefined
    ? value
    : [...value].map((ch) => (headerValueProblem(ch) === undefined && ch !== '%' ? ch : encodeURIComponent(ch))).join('');
}

/** Whether a header is the event's, to be stored: not a credential, not the hop's, not an HTTP/2 pseudo-header. */
export function isStoredHeader(name: string): boolean {
  const n = name.toLowerCase();
  return !n.startsWith(':') && !HOP_BY_HOP_HEADERS.has(n) && !CREDENTIAL_HEADERS.has(n);
}

export function maskCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, SHOWN_MASKED.has(k.toLowerCase()) ? '***' : v]));
}

/** A stored header set without the hop-by-hop ones and any credential (a row stored before it was one), ready to send on. */
export function endToEnd(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => isStoredHeader(name)));
}

/**
 * An HTTP/1.1 request's head as bytes, ending in its blank line: the request line, the headers
 * (a given Content-Length or Transfer-Encoding replaced by the body's own length; a line break in
 * a value made a space, so no value can add a header), and `content-length`.
 */
export function rawRequestHead(method: string, target: string, headers: Record<string, string>, bodyLength: number): Buffer {
  const lines = [`${method} ${target} HTTP/1.1`];
  for (const [name, value] of Object.entries(headers)) {
    const n = name.toLowerCase();
    if (n === 'content-length' || n === 'transfer-encoding') continue;
    lines.push(`${name}: ${value.replace(/[\r\n]+/g, ' ')}`);
  }
  lines.push(`content-length: ${bodyLength}`, '', '');
  return Buffer.from(lines.join('\r\n'), 'latin1');
}
