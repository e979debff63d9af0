/** Prints the delivery ids marked done in a hookdrill inbox, one per line (chaos --processed). */
import { openSqliteInbox } from '../../src/inbox/sqlite/index.js';

const inbox = openSqliteInbox(process.argv[2] as string, { readonly: true, create: false });
for (const row of await inbox.list({ status: 'done', limit: 1_000_000 })) process.stdout.write(`${row.deliveryId}\n`);
await inbox.close();
