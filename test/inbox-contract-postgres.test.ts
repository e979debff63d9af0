import { openInbox } from '../src/inbox/index.js';
import { inboxContract } from './contract/inbox.contract.js';
import { freshSchema, postgresMissing } from './helpers/postgres.js';

inboxContract({
  name: 'postgres',
  missing: postgresMissing,
  open: async (o) => {
    const s = freshSchema();
    return {
      inbox: await openInbox(s.url, o?.groupCommit ? { receiver: { groupCommit: { maxBatch: 64, maxWaitMs: 0 } } } : {}),
      cleanup: s.drop,
    };
  },
});
