import { hasSecretShape } from './secret-shapes.js';

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

/**
 * A name that says the header carries a credential, whatever gateway or app invented it:
 * `X-Shopify-Access-Token`, `X-GitHub-Token`, `X-Auth`, `X-Csrf-Token`, `X-Client-Secret`,
 * `X-Api-Key`, `X-Db-Password`.
 */
const CREDENTIAL_NAME = /token|secret|auth|api-?key|apikey|api_key|passw(?:or)?d|credential|private-?key/;

/** A server's challenge, not a credential: `WWW-Authenticate: Bearer realm="api"` stays as it is. */
const CHALLENGES: ReadonlySet<string> = new Set(['www-authenticate', 'proxy-authenticate']);

/**
 * A value in one of HTTP's authentication schemes (RFC 7617 Basic, RFC 6750 Bearer, RFC 9449 DPoP,
 * Digest, Negotiate, NTLM, SCRAM, OAuth 1.0, AWS's SigV4, and the `Token` of many APIs), under
 * whatever name it was sent.
 */
const CREDENTIAL_SCHEME = /^\s*(?:Basic|Bearer|Token|DPoP|Digest|Negotiate|NTLM|SCRAM-SHA-(?:1|256)|OAuth|AWS4-HMAC-SHA256)\s+\S/i;

/**
 * What the providers send (each provider's `sign()` in src/providers/): the signature, its
 * timestamp and the delivery's ids and topic — a receiver needs them, so they are stored whatever
 * the rules above would make of their name or value. A signature is a MAC, not a secret.
 * test/redact-secrets.test.ts holds every header every `sign()` writes to being stored.
 */
const PROVIDER_HEADERS: ReadonlySet<string> = new Set([
  'stripe-signature',
  'x-hub-signature',
  'x-hub-signature-256',
  'x-github-delivery',
  'x-github-event',
  'x-github-hook-id',
  'x-github-hook-installation-target-id',
  'x-github-hook-installation-target-type',
  'x-slack-signature',
  'x-slack-request-timestamp',
  'x-slack-retry-num',
  'x-slack-retry-reason',
  'webhook-id',
  'webhook-signature',
  'webhook-timestamp',
  'svix-id',
  'svix-signature',
  'svix-timestamp',
  'x-shopify-hmac-sha256',
  'x-shopify-topic',
  'x-shopify-webhook-id',
  'x-shopify-event-id',
  'x-shopify-shop-domain',
  'x-shopify-api-version',
  'x-shopify-triggered-at',
  'shopify-hmac-sha256',
  'shopify-topic',
  'shopify-action',
  'shopify-handle',
  'shopify-webhook-id',
  'shopify-event-id',
  'shopify-shop-domain',
  'shopify-api-version',
  'shopify-triggered-at',
  // Twilio's delivery id, the same on every attempt of a request: "token" in its name is no credential.
  'i-twilio-idempotency-token',
  // Plaid's JWT signs one body (its request_body_sha256) and is refused 5 minutes after its iat: a
  // signature, kept for replay as any provider's is — no credential to any other request.
  'plaid-verification',
  // PayPal's: the signature's algorithm and version, named "auth", are no credential (a replay needs them).
  'paypal-auth-algo',
  'paypal-auth-version',
]);

/**
 * Whether a header carries a credential: by its name (the standard ones, the API-key headers, any
 * name that says token, secret, auth, api-key or password) or, when the value is given, by its value
 * (an authentication scheme, or a secret of a known shape: `sk_live_…`, `ghp_…`, a JWT, a URL with
 * a password). Never one of the providers' own headers.
 */
export function isCredentialHeader(name: string, value?: string): boolean {
  const n = name.toLowerCase();
  if (PROVIDER_HEADERS.has(n) || CHALLENGES.has(n)) return false;
  if (CREDENTIAL_HEADERS.has(n) || CREDENTIAL_NAME.test(n)) return true;
  return value !== undefined && valueIsCredential(value);
}

/**
 * Values already judged (host, content-type, user-agent: the same on most requests), so the
 * receiver scans a value for secret shapes once, not on every delivery (~10 µs of ~100 a request).
 * Bounded: short values only, and forgotten all at once when full.
 */
const judged = new Map<string, boolean>();
const JUDGED_MAX = 1_024;
const JUDGED_VALUE_MAX = 256;

function valueIsCredential(value: string): boolean {
  const known = judged.get(value);
  if (known !== undefined) return known;
  const is = CREDENTIAL_SCHEME.test(value) || hasSecretShape(value);
  if (value.length <= JUDGED_VALUE_MAX) {
    if (judged.size >= JUDGED_MAX) judged.clear();
    judged.set(value, is);
  }
  return is;
}

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

/**
 * Whether a header is the event's, to be stored: not a credential (by name, and by value when it is
 * given — give it wherever it is known), not the hop's, not an HTTP/2 pseudo-header.
 */
export function isStoredHeader(name: string, value?: string): boolean {
  const n = name.toLowerCase();
  return !n.startsWith(':') && !HOP_BY_HOP_HEADERS.has(n) && !isCredentialHeader(n, value);
}

/** Headers as they may be shown: every credential (by name or value) and `set-cookie` as ***. */
export function maskCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).map(([k, v]) => [k, k.toLowerCase() === 'set-cookie' || isCredentialHeader(k, v) ? '***' : v]),
  );
}

/** A stored header set without the hop-by-hop ones and any credential (a row stored before it was one), ready to send on. */
export function endToEnd(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name, value]) => isStoredHeader(name, value)));
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
