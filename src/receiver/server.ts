import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createReceiver } from './index.js';
import type { ReceiverOptions } from './index.js';

/**
 * The receiver on a real server with timeouts against slow clients: a client gets 10 s to send
 * its headers and 30 s for the whole request, so one that dribbles a byte a second cannot hold a
 * socket forever; idle keep-alive connections close after 5 s.
 */
export function createReceiverServer(options: ReceiverOptions): Server {
  const handler = createReceiver(options);
  const server = createServer(handler);
  // Judged on its headers before Node's automatic 100 Continue: a body that would be refused is never sent.
  if (handler.checkContinue) server.on('checkContinue', handler.checkContinue);
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  return server;
}

/**
 * Several receivers on one server, each on a path of its own (`/stripe`, `/github`): a request
 * goes to the one its path names; `/metrics` and `/healthz` to the first (they share one inbox).
 * Any other path is answered 404 with the paths there are, and said through `onNotFound`.
 */
export function createMountedServer(
  mounts: readonly { path: string; options: ReceiverOptions }[],
  onNotFound?: (path: string) => void,
): Server {
  const handlers = new Map(mounts.map((m) => [m.path, createReceiver(m.options)]));
  const first = handlers.get((mounts[0] as { path: string }).path);
  const paths = mounts.map((m) => m.path).join(', ');
  const pick = (url: string | undefined) => {
    const path = (url ?? '/').split('?')[0] as string;
    const h = handlers.get(path) ?? handlers.get(path.replace(/\/+$/, ''));
    if (h) return h;
    return path === '/metrics' || path === '/healthz' ? first : undefined;
  };
  const server = createServer((req, res) => {
    const h = pick(req.url);
    if (h) return h(req, res);
    notFound(req, res);
  });
  const notFound = (req: IncomingMessage, res: ServerResponse) => {
    const path = (req.url ?? '/').split('?')[0] as string;
    const body = JSON.stringify({ error: 'not_found', message: `no provider posts to ${path} here; the paths are ${paths}` });
    res.writeHead(404, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' });
    res.end(body);
    req.resume();
    onNotFound?.(path);
  };
  server.on('checkContinue', (req: IncomingMessage, res: ServerResponse) => {
    const h = pick(req.url);
    if (h?.checkContinue) return h.checkContinue(req, res);
    if (h) {
      res.writeContinue();
      return h(req, res);
    }
    notFound(req, res);
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  server.keepAliveTimeout = 5_000;
  return server;
}

/** Listen, resolving with the address, or rejecting with the listen error (EADDRINUSE, EACCES). */
export function listen(server: Server, port: number, host: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    server.listen(port, host, () => {
      server.off('error', onError);
      resolve(server.address() as AddressInfo);
    });
  });
}
