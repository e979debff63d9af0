import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Captured {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  /** The header names as they arrived: their order and casing (a provider's own, held by the wire tests). */
  names: string[];
  rawBody: Buffer;
  /** performance.now() when the whole body had arrived. */
  at: number;
}

export type Handler = (req: Captured, res: ServerResponse, n: number) => void | Promise<void>;

export interface TestServer {
  url: string;
  port: number;
  requests: Captured[];
  close(): Promise<void>;
}

/** A real HTTP server on loopback that keeps every request's raw bytes. */
export async function startServer(handler: Handler, listenPort = 0): Promise<TestServer> {
  const requests: Captured[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const captured: Captured = {
        method: req.method ?? '',
        path: req.url ?? '',
        headers: req.headers,
        names: req.rawHeaders.filter((_, i) => i % 2 === 0),
        rawBody: Buffer.concat(chunks),
        at: performance.now(),
      };
      requests.push(captured);
      Promise.resolve(handler(captured, res, requests.length)).catch((err: unknown) => {
        res.statusCode = 500;
        res.end(String(err));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(listenPort, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/webhooks`,
    port,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export function reply(res: ServerResponse, status: number, body = '', headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'text/plain', ...headers });
  res.end(body);
}
