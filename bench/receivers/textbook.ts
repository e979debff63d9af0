/**
 * The textbook receivers the throughput benchmark compares listen with, each its own process:
 *
 *   node textbook.js verify-only   PORT SECRET          verify, answer 200, store nothing (the ceiling)
 *   node textbook.js sqlite-wal    PORT SECRET FILE     verify, one INSERT committed per request, WAL + FULL
 *   node textbook.js sqlite-rollback PORT SECRET FILE   the same with a rollback journal and synchronous = EXTRA
 *
 * Standard Webhooks signatures (the `standardwebhooks` library's own verifier), as the issue's
 * measurements used. Prints its port on stdout when ready.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import { Webhook } from 'standardwebhooks';

const [mode, port, secret, file] = process.argv.slice(2) as [string, string, string, string | undefined];
const webhook = new Webhook(secret);
let insert: ((id: string, body: Buffer) => void) | undefined;
if (mode !== 'verify-only') {
  const db = new Database(file as string);
  db.pragma(mode === 'sqlite-wal' ? 'journal_mode = WAL' : 'journal_mode = DELETE');
  db.pragma(mode === 'sqlite-wal' ? 'synchronous = FULL' : 'synchronous = EXTRA');
  db.exec('CREATE TABLE IF NOT EXISTS webhook_inbox (id TEXT PRIMARY KEY, body BLOB, received_at INTEGER)');
  const stmt = db.prepare('INSERT INTO webhook_inbox (id, body, received_at) VALUES (?, ?, ?) ON CONFLICT (id) DO NOTHING');
  insert = (id, body) => void stmt.run(id, body, Date.now());
}
const server = createServer((req, res) => {
  const chunks: Buffer[] = [];
  req.on('data', (c: Buffer) => chunks.push(c));
  req.on('end', () => {
    const body = Buffer.concat(chunks);
    try {
      webhook.verify(body.toString('utf8'), {
        'webhook-id': String(req.headers['webhook-id']),
        'webhook-timestamp': String(req.headers['webhook-timestamp']),
        'webhook-signature': String(req.headers['webhook-signature']),
      });
    } catch {
      res.writeHead(401).end();
      return;
    }
    insert?.(String(req.headers['webhook-id']), body);
    res.writeHead(200, { 'content-length': '2' }).end('ok');
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(port), '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
