import { createServer } from 'node:http';
import type { Server } from 'node:http';
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
