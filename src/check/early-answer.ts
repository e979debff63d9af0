/**
 * A POST of a large body over a socket of its own, reading while it writes: a receiver that
 * answers 413 after the headers and closes is heard, every time, before the reset that follows.
 * (Through the HTTP client the 413 was seen or lost by a race with the write failing, so
 * oversized-body flipped between PASS and WARN on identical runs.)
 */
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { rootCertificates } from 'node:tls';
import type { TlsOptions } from '../delivery/dispatcher.js';
import type { Interrupt } from '../util/wait.js';
import { basicAuth, hostAndPort } from '../util/options.js';
import { rawRequestHead } from '../util/http-headers.js';

export interface EarlyAnswer {
  status?: number;
  /** No status line came back before the connection ended: a reset, or the timeout. */
  error?: 'reset' | 'timeout' | 'refused' | 'other';
  /** Bytes of the body written before the answer (or the end). */
  written: number;
}

const CHUNK = 64 * 1024;
/** How long the headers go alone, for an answer that needs no body (a 413 on Content-Length). */
const HEAD_START_MS = 200;

export function postReadingEarly(
  url: URL,
  headers: Record<string, string>,
  body: Buffer,
  tls: TlsOptions,
  timeoutMs: number,
  interrupt?: Interrupt,
): Promise<EarlyAnswer> {
  return new Promise((resolve) => {
    const { host, port } = hostAndPort(url);
    const socket: Socket =
      url.protocol === 'https:'
        ? tlsConnect({
            host,
            port,
            servername: url.hostname,
            ...(tls.insecure ? { rejectUnauthorized: false } : {}),
            ...(tls.ca ? { ca: [...rootCertificates, tls.ca] } : {}),
          })
        : connect({ host, port });
    let written = 0;
    let seen = '';
    let done = false;
    const finish = (a: Omit<EarlyAnswer, 'written'>) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      stopListening?.();
      socket.destroy();
      resolve({ ...a, written });
    };
    const timer = setTimeout(() => finish({ error: 'timeout' }), timeoutMs);
    const stopListening = interrupt?.on(() => finish({ error: 'other' }));
    socket.on('data', (chunk: Buffer) => {
      seen += chunk.toString('latin1');
      const m = /^HTTP\/\d(?:\.\d)? (\d{3})/.exec(seen);
      if (m && seen.includes('\r\n')) finish({ status: Number(m[1]) });
    });
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // A reset may come with the answer already read: give the data handler its turn first.
      setImmediate(() =>
        finish({ error: err.code === 'ECONNREFUSED' ? 'refused' : err.code === 'ECONNRESET' || err.code === 'EPIPE' ? 'reset' : 'other' }),
      );
    });
    socket.on('close', () => setImmediate(() => finish({ error: 'reset' })));
    const auth = basicAuth(url);
    const all: Record<string, string> = { host: url.host, ...headers, connection: 'close' };
    if (auth && !Object.keys(all).some((k) => k.toLowerCase() === 'authorization')) all.authorization = auth;
    const head = rawRequestHead('POST', `${url.pathname}${url.search}`, all, body.length);
    const start = () => {
      socket.write(head);
      // A receiver that judges Content-Length answers before reading the body, then closes; were
      // the body already being written, the reset of that close can cut the answer off before it
      // is read (Node destroys a socket whose write fails). So a moment for that answer first.
      setTimeout(pump, HEAD_START_MS);
      const pumpNow = () => {
        while (!done && written < body.length) {
          const piece = body.subarray(written, Math.min(body.length, written + CHUNK));
          written += piece.length;
          if (!socket.write(piece)) return void socket.once('drain', pumpNow);
        }
      };
      function pump() {
        if (!done) pumpNow();
      }
    };
    socket.once(url.protocol === 'https:' ? 'secureConnect' : 'connect', start);
  });
}
