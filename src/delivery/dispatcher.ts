import { createServer } from 'node:http';
import { rootCertificates } from 'node:tls';
import type { AddressInfo } from 'node:net';
import { Agent, Client, Dispatcher, Pool, buildConnector } from 'undici';

/**
 * A Pool for the target's origin, and an Agent only for the other origins a redirect may lead to.
 * An Agent looks its pool up on every request; a Pool does not, which measured about 15% more
 * deliveries per second on loopback, and nearly every request goes to the one origin.
 */
export class TargetDispatcher extends Dispatcher {
  private readonly pool: Pool;
  private others: Agent | undefined;

  constructor(
    private readonly origin: string,
    private readonly connections: number,
    tls: TlsOptions = {},
  ) {
    super();
    this.pool = new Pool(origin, { connections, pipelining: 1, connect: tlsConnect(tls) });
  }

  override dispatch(options: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    if (String(options.origin) === this.origin) return this.pool.dispatch(options, handler);
    // --ca / --insecure are for the receiver named in --url; a redirect elsewhere is checked as usual.
    this.others ??= new Agent({ connections: this.connections, pipelining: 1 });
    return this.others.dispatch(options, handler);
  }

  override async close(): Promise<void> {
    await Promise.all([this.pool.close(), this.others?.close()]);
  }

  override async destroy(): Promise<void> {
    await Promise.all([this.pool.destroy(), this.others?.destroy()]);
  }
}

/** How to trust a receiver's TLS certificate: a CA of one's own (PEM), or, with insecure, not at all. */
export interface TlsOptions {
  /** PEM text of the CA(s) that signed the receiver's certificate, beside the system's. */
  ca?: string;
  /** Accept any certificate (self-signed, expired, another name): for local receivers only. */
  insecure?: boolean;
}

function tlsConnect(tls: TlsOptions): { rejectUnauthorized?: boolean; ca?: string[] } {
  return {
    ...(tls.insecure ? { rejectUnauthorized: false } : {}),
    ...(tls.ca ? { ca: [...rootCertificates, tls.ca] } : {}),
  };
}

/**
 * Open one connection to the URL's origin (TLS handshake included, with the same trust as every
 * request) and close it: whether anything answers there at all. Rejects with the connector's error.
 */
export function connectOnce(url: URL, tls: TlsOptions, timeoutMs: number): Promise<void> {
  const connect = buildConnector({ ...tlsConnect(tls), timeout: timeoutMs });
  return new Promise<void>((resolve, reject) => {
    connect(
      {
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        host: url.host,
        protocol: url.protocol,
        port: url.port || (url.protocol === 'https:' ? '443' : '80'),
        servername: url.hostname,
      },
      (err, socket) => {
        if (err) return reject(err);
        socket?.destroy();
        resolve();
      },
    );
  });
}

let warmed: Promise<void> | undefined;

/**
 * undici compiles its HTTP parser (WebAssembly) on its first connection, which blocks for ~30 ms.
 * Inside a timed attempt that would count against the receiver, and at `--time-scale 0.01`
 * (Slack's 3 s becomes 30 ms) it alone could time the first attempt out. So, once per process,
 * one request to a private server on loopback pays for it before anything is timed.
 */
export function warmUpHttpClient(): Promise<void> {
  warmed ??= (async () => {
    const server = createServer((req, res) => {
      req.resume();
      req.on('end', () => res.end());
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', resolve);
    });
    const { port } = server.address() as AddressInfo;
    const client = new Client(`http://127.0.0.1:${port}`);
    try {
      const res = await client.request({ path: '/', method: 'POST', body: '{}' });
      await res.body.dump();
    } finally {
      await client.close();
      server.close();
    }
  })().catch(() => undefined); // a machine without loopback just pays the cost in the first attempt
  return warmed;
}
