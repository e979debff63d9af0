import { UsageError } from '../../errors.js';
import { readCaptures } from '../../import-files.js';
import { openInbox, resolveTarget, displayTarget } from '../../inbox/open.js';
import { getProvider } from '../../providers/index.js';

export interface ImportOptions {
  files: string[];
  inbox?: string;
  provider?: string;
}

export interface ImportResult {
  command: 'import';
  ok: boolean;
  inbox: string;
  provider: string;
  read: number;
  stored: number;
  duplicates: number;
  /** Captures that carry no delivery id the provider dedupes on: not stored. */
  skipped: { where: string; why: string }[];
}

/**
 * Deliveries from files into the inbox, pending, keyed by the provider's own delivery id — so
 * what is already there (or arrives later for real) is a duplicate, not a second row.
 */
export async function run(o: ImportOptions): Promise<ImportResult> {
  if (o.files.length === 0) throw new UsageError('name the files to import (HAR, a JSON array of events, or JSON lines)');
  if (!o.inbox) throw new UsageError('--inbox FILE|URL is required: where to put them');
  if (!o.provider) throw new UsageError('--provider is required: whose events they are');
  const provider = getProvider(o.provider);
  const captures = o.files.flatMap(readCaptures); // every file read before anything is written
  const inbox = await openInbox(resolveTarget(o.inbox));
  const result: ImportResult = {
    command: 'import',
    ok: true,
    inbox: displayTarget(o.inbox),
    provider: provider.name,
    read: captures.length,
    stored: 0,
    duplicates: 0,
    skipped: [],
  };
  try {
    const receivedAt = Date.now();
    for (const c of captures) {
      const deliveryId = provider.deliveryId(c.headers, c.body);
      if (!deliveryId) {
        result.skipped.push({ where: c.where, why: `no ${provider.name} delivery id (in the body, or in the captured headers)` });
        continue;
      }
      const { inserted } = await inbox.put({
        source: provider.name,
        deliveryId,
        eventType: provider.eventTypeOf(c.headers, c.body),
        body: c.body,
        headers: { ...c.headers, 'x-hookdrill-origin': 'import' },
        receivedAt,
      });
      if (inserted) result.stored++;
      else result.duplicates++;
    }
  } finally {
    await inbox.close();
  }
  return result;
}
