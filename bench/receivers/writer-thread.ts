/**
 * listen's SQLite inbox with every write on its writer thread — the design before writes moved to
 * the main thread (src/inbox/sqlite/threaded.ts) — for the benchmark's "thread or not" row:
 *
 *   node writer-thread.js PORT SECRET FILE
 *
 * Prints its port on stdout when ready.
 */
import { ThreadedSqliteInbox } from '../../src/inbox/sqlite/threaded.js';
import { providers } from '../../src/providers/index.js';
import { createReceiverServer, listen } from '../../src/receiver/server.js';

const [port, secret, file] = process.argv.slice(2) as [string, string, string];
const inbox = await ThreadedSqliteInbox.open(file, { groupCommit: { maxBatch: 64, maxWaitMs: 0 }, writes: 'thread' });
const server = createReceiverServer({ provider: providers.standard, secrets: [secret], inbox });
const address = await listen(server, Number(port), '127.0.0.1');
process.stdout.write(`${address.port}\n`);
process.on('SIGTERM', () => server.close(() => void inbox.close().then(() => process.exit(0))));
