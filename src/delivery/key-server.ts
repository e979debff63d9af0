import { createPublicKey } from 'node:crypto';
import type { JsonWebKey } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
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
 * One server a process, started by the first send, check or chaos of a JWT provider and kept,
 * unreferenced, for the rest of the process (a receiver may fetch the keys after the last request,
 * and a process does not wait on it): every key any run of the process signs with is served. A port
 * another hookdrill already serves the same keys on is shared; one held by anything else is said.
 */

export const KEY_SERVER_DEFAULT_PORT = 9477;
export const KEY_SERVER_PATHS = { jwks: '/oauth2/v3/certs', pem: '/oauth2/v1/certs', openid: '/.well-known/openid-configuration' };

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
  issuer: string;
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
  running ??= { port, server: undefined, keys: new Map(), issuer: provider.jwt.issuer };
  const r = running;
  const fresh = secrets.flatMap((s) => provider.jwt?.jwks(s).keys ?? []).filter((k) => !r.keys.has(String(k.kid)));
  for (const k of fresh) r.keys.set(String(k.kid), k);
  // Shared with another hookdrill (undefined), it is tried again on the next run.
  if (!r.server) r.server = await listen(r).catch((err: unknown) => shared(r, err));
  return jwksUrl(port);
}

function listen(r: Running): Promise<Server> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const keys = [...r.keys.values()];
    const body =
      path === KEY_SERVER_PATHS.jwks || path === '/.well-known/jwks.json'
        ? { keys }
        : path === KEY_SERVER_PATHS.pem
          ? Object.fromEntries(keys.map((k) => [String(k.kid), pemOf(k)]))
          : path === KEY_SERVER_PATHS.openid
            ? { issuer: r.issuer, jwks_uri: jwksUrl(r.port), id_token_signing_alg_values_supported: ['RS256'] }
            : undefined;
    if (req.method !== 'GET' || body === undefined) {
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
