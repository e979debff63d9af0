import { randomBytes, timingSafeEqual } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { run as inspect } from '../incident/inspect.js';
import { run as requeue } from '../incident/requeue.js';
import { run as capture } from '../fixtures/capture-to-file.js';
import { UsageError } from '../util/errors.js';
import { InboxUnavailableError } from '../inbox/index.js';
import type { RowOrder } from '../inbox/index.js';
import { safeJson } from '../util/terminal.js';
import { replayOne, signedCurl } from './actions.js';
import { resolveSigner } from '../delivery/signer.js';
import type { UiSigner } from './actions.js';
import type { VerifyResult } from '../verify/explain.js';
import type { RefusedView } from './refused.js';

/**
 * `hookdrill ui`: the inbox in a browser, served by hookdrill itself from files in the package (no
 * CDN, no network). A page on localhost can be reached by any site the developer visits, so:
 * - bound to 127.0.0.1 by default;
 * - a random token, printed at start in the page's URL, is required on every request (the page
 *   sends it as a header; the API takes nothing else);
 * - the Host header must name this server (a rebound DNS name is refused);
 * - a state-changing request (requeue) needs the token and, when the browser says where it comes
 *   from, this origin;
 * - a strict Content-Security-Policy, and the page builds every value as text, never as markup
 *   (bodies and headers are the sender's);
 * - no secret is ever sent: the inbox holds none, and the page shows only what inspect shows.
 */
export interface UiOptions {
  inbox: string;
  port?: number;
  host?: string;
  /** Chosen token (tests); by default 24 random bytes. */
  token?: string;
  /** Under listen --ui: the requests it refused lately, and how many a minute (no inbox row holds them). */
  refused?: () => RefusedView | Promise<RefusedView>;
  /**
   * Under listen --ui: one refused request by id, as raw HTTP with its arrival, and why its
   * signature was refused (judged with all of listen's secrets); undefined once no longer held.
   */
  refusedRequest?: (id: string) => RefusedDetail | undefined | Promise<RefusedDetail | undefined>;
  /** With secrets: who signs replays and curl commands (ui --provider --secret, or listen's own); never sent to the page. */
  provider?: string;
  secrets?: string[];
  /** Where "save as fixture" writes (default: ./fixtures, as `fixtures capture --out fixtures`). */
  fixturesDir?: string;
}

export interface RefusedDetail {
  id: string;
  /** When it arrived (Unix ms). */
  at: number;
  /** The request as raw HTTP, base64 (its body is bytes, not text). */
  raw: string;
  explanation: VerifyResult;
}

export interface UiHandle {
  url: string;
  /** The page's address with its token: what to open. */
  pageUrl: string;
  token: string;
  close(): Promise<void>;
}

const ASSETS = new URL('../../../ui/', import.meta.url);
const TYPES: Record<string, string> = {
  'index.html': 'text/html; charset=utf-8',
  'app.js': 'text/javascript; charset=utf-8',
  'app.css': 'text/css; charset=utf-8',
};
const CSP =
  "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** The most rows one /api/rows answer holds. */
export const UI_MAX_ROWS = 1_000;

export async function startUi(o: UiOptions): Promise<UiHandle> {
  const host = o.host ?? '127.0.0.1';
  // '' binds every interface and prints http://:PORT: refused, as a mistake it always is.
  if (host.trim() === '') throw new UsageError('--host is empty: give an address (127.0.0.1 keeps the inspector on this machine)');
  const token = o.token ?? randomBytes(24).toString('base64url');
  const signer: UiSigner | undefined = o.secrets?.length ? resolveSigner({ provider: o.provider, secrets: o.secrets }) : undefined;
  const assets = new Map(Object.keys(TYPES).map((name) => [name, readFileSync(fileURLToPath(new URL(name, ASSETS)))]));
  let port = 0;
  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      const usage = err instanceof UsageError || err instanceof InboxUnavailableError;
      send(res, usage ? 400 : 500, { error: err instanceof Error ? err.message : String(err) });
    });
  });

  const allowedHosts = () => new Set([`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, `${host}:${port}`]);
  const tokenOk = (given: string | undefined) => {
    const a = Buffer.from(given ?? '');
    const b = Buffer.from(token);
    return a.length === b.length && timingSafeEqual(a, b);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    // DNS rebinding: a foreign name that resolves here still says its own name in Host.
    if (!allowedHosts().has(req.headers.host ?? '')) return send(res, 403, { error: 'this Host is not the inspector' });
    const url = new URL(req.url ?? '/', `http://${req.headers.host}`);
    if (req.method === 'GET' && (url.pathname === '/' || url.pathname === '/index.html')) {
      // The page itself carries no data: it is fetched with the token in its URL, and asks the API with it.
      if (!tokenOk(url.searchParams.get('token') ?? undefined))
        return send(res, 403, { error: 'open the URL hookdrill ui printed (it holds the token)' });
      return asset(res, 'index.html');
    }
    if (req.method === 'GET' && (url.pathname === '/app.js' || url.pathname === '/app.css')) return asset(res, url.pathname.slice(1));
    if (!url.pathname.startsWith('/api/')) return send(res, 404, { error: 'not found' });
    if (!tokenOk(header(req, 'x-hookdrill-token'))) return send(res, 403, { error: 'a token is required' });

    if (req.method === 'GET' && url.pathname === '/api/refused') {
      if (!o.refused) return send(res, 404, { error: 'only under listen --ui' });
      const { recent, perMinute } = await o.refused();
      return send(res, 200, { refused: recent, perMinute });
    }
    const one = /^\/api\/refused\/(r\d{1,12})$/.exec(url.pathname);
    if (req.method === 'GET' && one) {
      if (!o.refusedRequest) return send(res, 404, { error: 'only under listen --ui' });
      const detail = await o.refusedRequest(one[1] as string);
      if (!detail)
        return send(res, 404, { error: `${one[1]} is no longer held (listen keeps the latest refused requests, 16 MiB of them)` });
      return send(res, 200, detail);
    }
    if (req.method === 'GET' && url.pathname === '/api/overview') {
      // check=exclude: the groups (and what the page suggests) without the rows hookdrill check sent.
      const check = url.searchParams.get('check');
      if (check !== null && check !== 'exclude') return send(res, 400, { error: `check ${check}: expected exclude, or nothing` });
      return send(res, 200, await inspect({ inbox: o.inbox, ...(check ? { check: false } : {}) }));
    }
    if (req.method === 'GET' && url.pathname === '/api/rows') {
      const q = url.searchParams;
      const pick = (k: string) => q.get(k) || undefined;
      // A page's worth: a million rows is minutes of query and gigabytes of JSON (page through instead).
      const limit = pick('limit') ?? '200';
      if (!/^\d{1,7}$/.test(limit) || Number(limit) < 1 || Number(limit) > UI_MAX_ROWS)
        return send(res, 400, { error: `limit ${limit}: from 1 to ${UI_MAX_ROWS} rows at a time` });
      const status = q.getAll('status').filter(Boolean);
      return send(
        res,
        200,
        await inspect({
          inbox: o.inbox,
          limit: Number(limit),
          ...(status.length ? { status } : {}),
          ...(pick('type') ? { type: pick('type') } : {}),
          ...(pick('source') ? { source: pick('source') } : {}),
          ...(pick('route') ? { route: pick('route') } : {}),
          ...(pick('error') ? { error: pick('error') } : {}),
          ...(pick('since') ? { since: pick('since') } : {}),
          ...(pick('until') ? { until: pick('until') } : {}),
          // Newest first unless asked: the page shows what just arrived at the top.
          order: (pick('order') ?? 'newest') as RowOrder,
          ...(pick('after') ? { after: pick('after') } : {}),
        }),
      );
    }
    if (req.method === 'GET' && url.pathname === '/api/delivery') {
      const id = url.searchParams.get('id');
      if (!id) return send(res, 400, { error: 'id is required' });
      const source = url.searchParams.get('source') || undefined;
      const r = await inspect({ inbox: o.inbox, id, ...(source ? { source } : {}) });
      if (r.view !== 'delivery') return send(res, 404, { error: 'no such delivery' });
      return send(res, 200, {
        ...r,
        deliveries: r.deliveries.map((d) => ({
          ...d,
          body: d.body === null ? null : { base64: d.body.toString('base64'), text: d.body.toString('utf8'), bytes: d.body.length },
        })),
      });
    }
    if (req.method === 'GET' && url.pathname === '/api/signing') return send(res, 200, { provider: signer?.provider.name ?? null });
    if (req.method === 'GET' && url.pathname === '/api/curl') {
      if (!signer) return send(res, 404, { error: 'start ui with --provider and --secret to sign' });
      const id = url.searchParams.get('id');
      const to = url.searchParams.get('to');
      if (!id || !to) return send(res, 400, { error: 'id and to are required' });
      const source = url.searchParams.get('source') || undefined;
      return send(res, 200, { curl: await signedCurl(o.inbox, signer, { id, to, ...(source ? { source } : {}) }) });
    }
    if (req.method !== 'POST') return send(res, 404, { error: 'not found' });
    // A cross-site form or fetch cannot set the token header; a browser that says where a request
    // comes from must say here.
    const origin = header(req, 'origin');
    if (origin !== undefined && origin !== `http://${req.headers.host}`) return send(res, 403, { error: 'a request from another origin' });
    if (header(req, 'sec-fetch-site') && !['same-origin', 'none'].includes(header(req, 'sec-fetch-site') as string))
      return send(res, 403, { error: 'a request from another site' });
    if (url.pathname === '/api/replay') {
      if (!signer) return send(res, 404, { error: 'start ui with --provider and --secret to replay' });
      const body = await readJson(req);
      if (typeof body.id !== 'string' || typeof body.to !== 'string') return send(res, 400, { error: 'id and to are required' });
      return send(
        res,
        200,
        await replayOne(o.inbox, signer, {
          id: body.id,
          to: body.to,
          ...(typeof body.source === 'string' ? { source: body.source } : {}),
          ...(typeof body.body === 'string' ? { body: body.body } : {}),
        }),
      );
    }
    if (url.pathname === '/api/fixture') {
      const body = await readJson(req);
      if (typeof body.id !== 'string') return send(res, 400, { error: 'id is required' });
      // fixtures capture's engine: the body only, credentials in it replaced, personal data too with redact.
      try {
        return send(
          res,
          200,
          await capture({
            inbox: o.inbox,
            id: body.id,
            ...(typeof body.source === 'string' ? { source: body.source } : {}),
            out: o.fixturesDir ?? 'fixtures',
            redact: body.redact === true,
            force: body.force === true,
          }),
        );
      } catch (err) {
        // The CLI's answer names its flag; the page offers to replace the file instead.
        const exists = err instanceof UsageError && /already exists: give --force/.test(err.message);
        if (!exists) throw err;
        return send(res, 409, { error: err.message.replace(/: give --force to replace it$/, ''), exists: true });
      }
    }
    if (url.pathname === '/api/requeue') {
      const body = await readJson(req);
      const ids = Array.isArray(body.ids) ? body.ids.filter((x): x is string => typeof x === 'string') : [];
      const status = typeof body.status === 'string' ? [body.status] : undefined;
      const error = typeof body.error === 'string' && body.error ? body.error : undefined;
      const excludeCheck = body.excludeCheck === true;
      // A route's rows (issue 56): its dead ones go back to its service once it is fixed.
      const route = typeof body.route === 'string' && body.route.trim() ? body.route : undefined;
      // The "(no error recorded)" group: an empty error would be no filter, every row of the status.
      const withoutError = body.withoutError === true;
      if (ids.length === 0 && !status) return send(res, 400, { error: 'say which rows: ids, or a status' });
      return send(
        res,
        200,
        await requeue({
          inbox: o.inbox,
          ...(ids.length ? { ids } : {}),
          ...(status ? { status } : {}),
          ...(error ? { error } : {}),
          ...(route ? { route } : {}),
          ...(excludeCheck ? { check: false } : {}),
          ...(withoutError ? { withoutError: true } : {}),
          dryRun: body.dryRun === true,
        }),
      );
    }
    return send(res, 404, { error: 'not found' });
  }

  function asset(res: ServerResponse, name: string): void {
    const bytes = assets.get(name);
    if (!bytes) {
      send(res, 404, { error: 'not found' });
      return;
    }
    res.writeHead(200, {
      'content-type': TYPES[name] as string,
      'content-length': bytes.length,
      'content-security-policy': CSP,
      'x-content-type-options': 'nosniff',
      'referrer-policy': 'no-referrer',
      'cache-control': 'no-store',
    });
    res.end(bytes);
  }

  const address = await new Promise<AddressInfo>((resolve, reject) => {
    server.once('error', (err: NodeJS.ErrnoException) =>
      reject(err.code === 'EADDRINUSE' ? new UsageError(`port ${o.port} on ${host} is already in use`) : err),
    );
    server.listen(o.port ?? 4040, host, () => resolve(server.address() as AddressInfo));
  });
  port = address.port;
  const shown = host.includes(':') ? `[${host}]` : host;
  const url = `http://${shown}:${port}/`;
  return {
    url,
    pageUrl: `${url}?token=${token}`,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function send(res: ServerResponse, status: number, value: unknown): void {
  const text = safeJson(JSON.stringify(value));
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
    'content-security-policy': CSP,
    'x-content-type-options': 'nosniff',
    'cache-control': 'no-store',
  });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req) {
    size += (c as Buffer).length;
    if (size > 64 * 1024) throw new UsageError('request body too large');
    chunks.push(c as Buffer);
  }
  try {
    const v = JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    throw new UsageError('the request body is not JSON');
  }
}
