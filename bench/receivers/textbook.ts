/**
 * The textbook receivers the throughput benchmark compares listen with, each its own process:
 *
 *   node textbook.js verify-only   PORT SECRET          verify, answer 200, store nothing (the ceiling)
 *   node textbook.js sqlite-wal    PORT SECRET FILE     verify, one INSERT committed per request, WAL + FULL
 *   node textbook.js sqlite-rollback PORT SECRET FILE   the same with a rollback journal and synchronous = EXTRA
 *   node textbook.js postgres      PORT SECRET URL      one INSERT … ON CONFLICT per request on a 16-connection pool
 *
 * Standard Webhooks signatures (the `standardwebhooks` library's own verifier), as the issue's
 * measurements used. Prints its port on stdout when ready.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import Database from 'better-sqlite3';
import pg from 'pg';
import { Webhook } from 'standardwebhooks';

const [mode, port, secret, file] = process.argv.slice(2) as [string, string, string, string | undefined];
const webhook = new Webhook(secret);
let insert: ((id: string, body: Buffer) => unknown) | undefined;
if (mode === 'postgres') {
  const url = new URL(file as string);
  const schema = url.searchParams.get('schema') ?? 'textbook';
  url.searchParams.delete('schema');
  const pool = new pg.Pool({ connectionString: url.toString(), max: 16 });
  await pool.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
  await pool.query(`CREATE TABLE IF NOT EXISTS ${schema}.webhook_inbox (id text PRIMARY KEY, body bytea, received_at bigint)`);
  const text = `INSERT INTO ${schema}.webhook_inbox (id, body, received_at) VALUES ($1, $2, $3) ON CONFLICT (id) DO NOTHING`;
  insert = (id, body) => pool.query(text, [id, body, Date.now()]);
} else if (mode !== 'verify-only') {
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
    Promise.resolve(insert?.(String(req.headers['webhook-id']), body)).then(
      () => res.writeHead(200, { 'content-length': '2' }).end('ok'),
      () => res.writeHead(503).end(),
    );
  });
});
server.keepAliveTimeout = 60_000;
server.listen(Number(port), '127.0.0.1', () => process.stdout.write(`${(server.address() as AddressInfo).port}\n`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
