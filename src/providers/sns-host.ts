import { randomUUID } from 'node:crypto';
import { createServer } from 'node:https';
import type { Server } from 'node:https';
import { UsageError } from '../util/errors.js';

/**
 * The local stand-in for sns.<region>.amazonaws.com (providers/sns-certificate.ts says why): an
 * HTTPS server on the SNS host that serves the signing certificate at SigningCertURL and answers
 * SubscribeURL and UnsubscribeURL as SNS's query API does (Action=ConfirmSubscription, Action=
 * Unsubscribe, each answered with its XML response), remembering every visit — so check can judge
 * the effect of a SubscriptionConfirmation: the receiver visited SubscribeURL, or it did not.
 */

/** One GET of SubscribeURL or UnsubscribeURL, as the host saw it. */
export interface SnsVisit {
  action: string;
  /** ConfirmSubscription's Token, or Unsubscribe's SubscriptionArn. */
  token: string | undefined;
  topicArn: string | undefined;
  atMs: number;
}

export interface SnsHost {
  /** host:port as URLs write it. */
  host: string;
  visits(): readonly SnsVisit[];
  /** The first visit whose token is `token`, waited for up to `ms` (undefined if none came). */
  visitOf(token: string, ms: number): Promise<SnsVisit | undefined>;
  close(): Promise<void>;
}

export interface SnsHostOptions {
  /** host:port to listen on (a name other than an IP address listens on 127.0.0.1). */
  host: string;
  /** The TLS identity: hookdrill's private key and its certificate. */
  key: string;
  cert: string;
  /** What is served at which path: the certificate(s), by SigningCertURL's path. */
  files: Readonly<Record<string, string>>;
  /** What the host stands in for and the variable that moves it, for a refusal to listen (default: the SNS host, HOOKDRILL_SNS_HOST). */
  names?: { host: string; variable: string };
}

/** The XML SNS's query API answers an action with (ConfirmSubscriptionResponse, UnsubscribeResponse). */
function actionResponse(action: string, arn: string): string {
  const ns = 'http://sns.amazonaws.com/doc/2010-03-31/';
  const result =
    action === 'ConfirmSubscription' ? `<${action}Result><SubscriptionArn>${escapeXml(arn)}</SubscriptionArn></${action}Result>` : '';
  return `<${action}Response xmlns="${ns}">${result}<ResponseMetadata><RequestId>${randomUUID()}</RequestId></ResponseMetadata></${action}Response>\n`;
}

function escapeXml(s: string): string {
  return s.replace(/[<>&"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export async function startSnsHost(o: SnsHostOptions): Promise<SnsHost> {
  const url = new URL(`https://${o.host}/`);
  const port = Number(url.port);
  const address = /^\d+\.\d+\.\d+\.\d+$/.test(url.hostname) ? url.hostname : '127.0.0.1';
  const seen: SnsVisit[] = [];
  const named = o.names ?? { host: 'SNS host', variable: 'HOOKDRILL_SNS_HOST' };
  const waiting = new Set<() => void>();
  const server: Server = createServer({ key: o.key, cert: o.cert }, (req, res) => {
    const at = new URL(req.url ?? '/', url);
    const file = o.files[at.pathname];
    if (req.method === 'GET' && file !== undefined) {
      res.writeHead(200, { 'content-type': 'application/x-x509-ca-cert' }).end(file);
      return;
    }
    const action = at.searchParams.get('Action');
    if (req.method === 'GET' && at.pathname === '/' && (action === 'ConfirmSubscription' || action === 'Unsubscribe')) {
      const token = at.searchParams.get(action === 'ConfirmSubscription' ? 'Token' : 'SubscriptionArn') ?? undefined;
      const topicArn = at.searchParams.get('TopicArn') ?? undefined;
      seen.push({ action, token, topicArn, atMs: Date.now() });
      for (const wake of waiting) wake();
      const arn = action === 'ConfirmSubscription' ? `${topicArn ?? 'arn:aws:sns:us-east-1:123456789012:unknown'}:${randomUUID()}` : '';
      res.writeHead(200, { 'content-type': 'text/xml' }).end(actionResponse(action, arn));
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) =>
      reject(
        e.code === 'EADDRINUSE'
          ? new UsageError(
              `the ${named.host} ${o.host} is in use (another hookdrill run?): set ${named.variable} to a free host:port, for hookdrill and your receiver alike`,
            )
          : new UsageError(`cannot serve the ${named.host} on ${o.host}: ${e.message}`),
      ),
    );
    server.listen(port, address, () => resolve());
  });
  server.unref();
  const host = `${url.hostname}:${(server.address() as { port: number }).port}`;
  return {
    host,
    visits: () => seen,
    async visitOf(token, ms) {
      const found = () => seen.find((v) => v.token === token);
      const deadline = Date.now() + ms;
      while (!found() && Date.now() < deadline) {
        await new Promise<void>((resolve) => {
          const wake = () => {
            clearTimeout(timer);
            waiting.delete(wake);
            resolve();
          };
          const timer = setTimeout(wake, Math.max(1, deadline - Date.now()));
          waiting.add(wake);
        });
      }
      return found();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
