/**
 * listen's receiver with group commit, but the inbox written from the main thread (the design
 * before the writer thread), for the benchmark's "thread or not" row:
 *
 *   node main-thread.js PORT SECRET FILE
 *
 * Prints its port on stdout when ready.
 */
import { openSqliteInbox } from '../../src/inbox/sqlite/index.js';
import { providers } from '../../src/providers/index.js';
import { createReceiverServer, listen } from '../../src/receiver/server.js';

const [port, secret, file] = process.argv.slice(2) as [string, string, string];
const inbox = openSqliteInbox(file);
inbox.useGroupCommit({ maxBatch: 64, maxWaitMs: 0 });
const server = createReceiverServer({ provider: providers.standard, secrets: [secret], inbox });
const address = await listen(server, Number(port), '127.0.0.1');
process.stdout.write(`${address.port}\n`);
process.on('SIGTERM', () => server.close(() => process.exit(0)));
