import { join } from 'node:path';
import { openInbox } from '../src/inbox/index.js';
import { inboxContract } from './contract/inbox.contract.js';
import { tempDir } from './helpers/tmp.js';

// As listen opens it (writer thread, group commit) and as the commands open it.
inboxContract({
  name: 'sqlite',
  open: async (o) => ({
    inbox: await openInbox(
      join(tempDir(), 'inbox.db'),
      o?.groupCommit ? { receiver: { groupCommit: { maxBatch: 64, maxWaitMs: 0 } } } : {},
    ),
    cleanup: async () => undefined,
  }),
});
