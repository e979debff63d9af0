import { createPublicKey } from 'node:crypto';
import type { JsonWebKey } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { JsonObject, Provider } from '../providers/index.js';
import { UsageError } from '../util/errors.js';

/**
 * The public keys of the JWT schemes hookdrill signs with (Google Pub/Sub push's OIDC tokens), served
 * where a receiver fetches them — a local stand-in for https://www.googleapis.com/oauth2/v3/certs,
 * the test mode a receiver is pointed at: `http://127.0.0.1:<port>/oauth2/v3/certs` (a JWKS),
 * `/oauth2/v1/certs` (kid → PEM, the format google-auth-library fetches by default) and
 * `/.well-known/openid-configuration` (its jwks_uri). The port is HOOKDRILL_JWKS_PORT (default
 * 9477), fixed so a receiver's configuration survives runs.
 *
 * Plaid's keys are fetched another way, and served that way too: POST `/webhook_verification_key/get`
 * with `{client_id, secret, key_id}` (or the PLAID-CLIENT-ID and PLAID-SECRET headers, as the `plaid`
 * SDK sends them) answers `{"key": <JWK with created_at and expired_at>, "request_id"}`
 * (https://plaid.com/docs/api/webhooks/webhook-verification/): a receiver on the SDK with its
 * basePath at `http://127.0.0.1:<port>` fetches hookdrill's key. The credentials must be there, as
 * Plaid's API demands them, and are never kept, printed nor compared: any pass.
 *
 * One server a process, started by the first send, check or chaos of a JWT provider and kept,
 * unreferenced, for the rest of the process (a receiver may fetch the keys after the last request,
 * and a process does not wait on it): every key any run of the process signs with is served. A port
 * another hookdrill already serves the same keys on is shared; one held by anything else is said.
 */

export const KEY_SERVER_DEFAULT_PORT = 9477;
export const KEY_SERVER_PATHS = {
  jwks: '/oauth2/v3/certs',
  pem: '/oauth2/v1/certs',
  openid: '/.well-known/openid-configuration',
  plaid: '/webhook_verification_key/get',
};

/** The port the key server listens on: HOOKDRILL_JWKS_PORT, else the default. */
export function keyServerPort(env: NodeJS.ProcessEnv = process.env): number {
  const v = env.HOOKDRILL_JWKS_PORT;
  if (v === undefined || v === '') return KEY_SERVER_DEFAULT_PORT;
  if (!/^\d{1,5}$/.test(v) || Number(v) < 1 || Number(v) > 65_535) throw new UsageError(`HOOKDRILL_JWKS_PORT=${v}: a port is 1 to 65535`);
  return Number(v);
}

/** Where a receiver fetches the keys from, for a port. */
export const jwksUrl = (port: number) => `http://127.0.0.1:${port}${KEY_SERVER_PATHS.jwks}`;

interface Running {
  port: number;
  server: Server | undefined;
  keys: Map<string, JsonObject>;
  /** When each key was first served, unix seconds: Plaid's JWK says when it was made (created_at). */
  since: Map<string, number>;
  issuer: string | undefined;
}
let running: Running | undefined;

/**
 * Serves the public keys of `secrets` (the private keys a run signs with) for a JWT provider; nothing
 * for any other. Returns the JWKS URL a receiver is pointed at.
 */
export async function serveKeys(provider: Provider, secrets: readonly string[]): Promise<string | undefined> {
  if (!provider.jwt) return undefined;
  const port = keyServerPort();
  if (running && running.port !== port) {
    running.server?.close();
    running = undefined;
  }
  running ??= { port, server: undefined, keys: new Map(), since: new Map(), issuer: provider.jwt.issuer };
  const r = running;
  const fresh = secrets.flatMap((s) => provider.jwt?.jwks(s).keys ?? []).filter((k) => !r.keys.has(String(k.kid)));
  for (const k of fresh) {
    r.keys.set(String(k.kid), k);
    r.since.set(String(k.kid), Math.floor(Date.now() / 1000));
  }
  // Shared with another hookdrill (undefined), it is tried again on the next run.
  if (!r.server) r.server = await listen(r).catch((err: unknown) => shared(r, err));
  return jwksUrl(port);
}

function listen(r: Running): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === KEY_SERVER_PATHS.plaid && req.method === 'POST') {
      plaidKey(r, req, res);
      return;
    }
    const keys = [...r.keys.values()];
    const body =
      path === KEY_SERVER_PATHS.jwks || path === '/.well-known/jwks.json'
        ? { keys }
        : path === KEY_SERVER_PATHS.pem
          ? Object.fromEntries(keys.map((k) => [String(k.kid), pemOf(k)]))
          : path === KEY_SERVER_PATHS.openid
            ? { issuer: r.issuer ?? null, jwks_uri: jwksUrl(r.port), id_token_signing_alg_values_supported: ['RS256'] }
            : undefined;
    if (req.method !== 'GET' || body === undefined) {
      req.resume();
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    // No max-age: a verifier that caches by Cache-Control (google-auth-library) fetches again, so a key
    // made since (another run, another provider) is found.
    res.writeHead(200, { 'content-type': 'application/json; charset=UTF-8', 'cache-control': 'no-cache' }).end(JSON.stringify(body));
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(r.port, '127.0.0.1', () => {
      server.off('error', reject);
      server.unref();
      resolve(server);
    });
  });
}

/** A Plaid error's body (Plaid's error object: error_type, error_code, error_message, display_message, request_id). */
const plaidError = (type: string, code: string, message: string) => ({
  error_type: type,
  error_code: code,
  error_message: message,
  display_message: null,
  request_id: requestId(),
});

let requests = 0;
/** A request id of Plaid's shape (15 characters), new each answer. */
const requestId = () => `hd${(Date.now() % 1e9).toString(36)}${(++requests).toString(36)}`.padEnd(15, '0').slice(0, 15);

/** POST /webhook_verification_key/get: the key a kid names, as Plaid's API answers it. */
function plaidKey(r: Running, req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  let size = 0;
  req.on('data', (c: Buffer) => {
    size += c.length;
    if (size <= 64 * 1024) chunks.push(c);
  });
  req.on('end', () => {
    const send = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-cache' }).end(JSON.stringify(body));
    let asked: { client_id?: unknown; secret?: unknown; key_id?: unknown } = {};
    try {
      const parsed: unknown = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      if (typeof parsed === 'object' && parsed !== null) asked = parsed;
    } catch {
      send(400, plaidError('INVALID_REQUEST', 'INVALID_BODY', 'the request body is not JSON'));
      return;
    }
    const clientId = asked.client_id ?? req.headers['plaid-client-id'];
    const secret = asked.secret ?? req.headers['plaid-secret'];
    const missing = [
      ...(typeof clientId === 'string' && clientId ? [] : ['client_id']),
      ...(typeof secret === 'string' && secret ? [] : ['secret']),
      ...(typeof asked.key_id === 'string' && asked.key_id ? [] : ['key_id']),
    ];
    if (missing.length) {
      send(400, plaidError('INVALID_REQUEST', 'MISSING_FIELDS', `the following required fields are missing: ${missing.join(', ')}`));
      return;
    }
    const kid = String(asked.key_id);
    const key = r.keys.get(kid);
    if (!key) {
      send(400, plaidError('INVALID_INPUT', 'INVALID_WEBHOOK_VERIFICATION_KEY_ID', 'invalid key_id provided'));
      return;
    }
    // Plaid's JWK: alg, created_at, crv, expired_at (null while current), kid, kty, use, x, y.
    send(200, { key: { ...key, created_at: r.since.get(kid) ?? 0, expired_at: null }, request_id: requestId() });
  });
}

/** The port is taken: by a hookdrill serving these very keys (shared), or by something else (said, one line). */
async function shared(r: Running, err: unknown): Promise<Server | undefined> {
  if (err !== undefined && (err as NodeJS.ErrnoException).code !== 'EADDRINUSE') throw err;
  const theirs = await fetch(jwksUrl(r.port), { signal: AbortSignal.timeout(2_000) })
    .then((res) => (res.ok ? (res.json() as Promise<{ keys?: { kid?: unknown }[] }>) : undefined))
    .catch(() => undefined);
  const kids = new Set((theirs?.keys ?? []).map((k) => k.kid));
  if ([...r.keys.keys()].every((kid) => kids.has(kid))) return undefined;
  throw new UsageError(
    `port ${r.port} is taken by something that does not serve this run's keys at ${KEY_SERVER_PATHS.jwks}: set HOOKDRILL_JWKS_PORT to a free port, and point the receiver's keys URL at it`,
  );
}

function pemOf(jwk: JsonObject): string {
  return createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' })
    .export({ type: 'spki', format: 'pem' })
    .toString();
}
