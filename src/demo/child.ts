/**
 * The receivers the demo compares, each a real process of its own (started by demo.ts):
 *
 *   inline             verify → call the CRM (slow) → answer. The sender times out and retries.
 *   queue-first        hookdrill's receiver: verify → store → answer; a worker calls the CRM later.
 *   ack-first          verify → answer 200 → keep the event in memory → store it a moment later.
 *   store-first        hookdrill's receiver and worker: verify → store → answer; work from the store.
 *   store-then-verify  store whatever arrives, then verify (401 — but the row is already there).
 *   verify-then-store  hookdrill's receiver: nothing unsigned is ever stored.
 *
 * Usage: node child.js MODE INBOX_FILE CRM_URL   (the secret comes in HOOKDRILL_SECRET)
 * Prints {"port":N} when it accepts connections.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';
import { openSqliteInbox } from '../inbox/sqlite/index.js';
import { providers, SignatureError } from '../providers/index.js';
import { createReceiver } from '../receiver/index.js';
import { Worker } from '../worker/index.js';

const [mode, inboxPath, crmUrl] = process.argv.slice(2) as [string, string, string];
const secret = process.env.HOOKDRILL_SECRET ?? '';
const provider = providers.slack;
const inbox = openSqliteInbox(inboxPath);

async function callCrm(id: string): Promise<void> {
  const res = await request(crmUrl, {
    method: 'POST',
    body: JSON.stringify({ id, mode }),
    headers: { 'content-type': 'application/json' },
  });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`crm answered ${res.statusCode}`);
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** The body when its signature verifies; otherwise answers 401 and gives undefined. */
async function readVerified(req: IncomingMessage, res: ServerResponse): Promise<Buffer | undefined> {
  const raw = await readBody(req);
  try {
    provider.verify(raw, req.headers, [secret]);
    return raw;
  } catch {
    res.writeHead(401).end();
    return undefined;
  }
}

const eventId = (raw: Buffer) => provider.deliveryId({}, raw) ?? 'unknown';

const workFromInbox = () => {
  // A short lease: rows a killed process had claimed come back within the demo's second, not
  // after the default 30 s (which is what a real deployment wants).
  const worker = new Worker({ inbox, pollMs: 20, leaseMs: 200, handler: (item) => callCrm(item.deliveryId) });
  worker.start();
};

type Handler = (req: IncomingMessage, res: ServerResponse) => void | Promise<void>;
let handler: Handler;
switch (mode) {
  case 'inline':
    handler = async (req, res) => {
      const raw = await readVerified(req, res);
      if (!raw) return;
      await callCrm(eventId(raw)); // the slow work, before the answer: the mistake on show
      res.writeHead(200).end('ok');
    };
    break;
  case 'ack-first': {
    handler = async (req, res) => {
      const raw = await readVerified(req, res);
      if (!raw) return;
      res.writeHead(200).end('ok'); // acknowledged while the event lives only in memory
      // "Later": an in-process queue flushes to durable storage a second afterwards.
      setTimeout(() => {
        void inbox.put({ source: 'slack', deliveryId: eventId(raw), eventType: undefined, body: raw, headers: {}, receivedAt: Date.now() });
      }, 1_000);
    };
    workFromInbox();
    break;
  }
  case 'store-then-verify':
    handler = async (req, res) => {
      const raw = await readBody(req);
      await inbox.put({
        source: 'slack',
        deliveryId: `${Date.now()}-${Math.random()}`,
        eventType: undefined,
        body: raw,
        headers: {},
        receivedAt: Date.now(),
      });
      try {
        provider.verify(raw, req.headers, [secret]);
        res.writeHead(200).end('ok');
      } catch (err) {
        res.writeHead(err instanceof SignatureError ? 401 : 500).end();
      }
    };
    break;
  case 'queue-first':
  case 'verify-then-store':
    handler = createReceiver({ provider, secrets: [secret], inbox });
    break;
  case 'store-first':
    handler = createReceiver({ provider, secrets: [secret], inbox });
    workFromInbox();
    break;
  default:
    process.stderr.write(`unknown mode ${mode}\n`);
    process.exit(2);
}

const server = createServer((req, res) => {
  Promise.resolve(handler(req, res)).catch(() => {
    if (!res.headersSent) res.writeHead(500).end();
  });
});
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
