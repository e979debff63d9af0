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

/** Credentials: not the event's, so never stored (and so never replayed or forwarded). */
export const CREDENTIAL_HEADERS: ReadonlySet<string> = new Set(['authorization', 'proxy-authorization', 'cookie']);

/** Headers that carry a credential either way of an exchange: shown as *** (send --verbose). */
const SHOWN_MASKED: ReadonlySet<string> = new Set([...CREDENTIAL_HEADERS, 'set-cookie', 'x-api-key', 'api-key', 'x-auth-token']);

export function maskCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k, SHOWN_MASKED.has(k.toLowerCase()) ? '***' : v]));
}

/** A stored header set without the hop-by-hop ones, ready to send on. */
export function endToEnd(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP_HEADERS.has(name)));
}
