import { join } from 'node:path';
import { openInbox } from '../src/inbox/index.js';
import { inboxContract } from './contract/inbox.contract.js';
import { tempDir } from './helpers/tmp.js';

// As the commands open it (synchronous, on the calling thread).
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

// As listen opens it: every write on the writer thread (with group commit where the case asks).
inboxContract({
  name: 'sqlite (writer thread)',
  open: async (o) => ({
    inbox: await openInbox(join(tempDir(), 'inbox.db'), {
      receiver: o?.groupCommit ? { groupCommit: { maxBatch: 64, maxWaitMs: 0 } } : {},
    }),
    cleanup: async () => undefined,
  }),
});
