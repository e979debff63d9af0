import { UsageError } from '../util/errors.js';
import { asInboxError, openInboxForCommand } from '../inbox/open.js';
import type { Selector } from '../inbox/index.js';
import { parseRate } from '../util/options.js';
import { parseSelector } from '../inbox/selector.js';
import type { SelectorFlags } from '../inbox/selector.js';
import { rowSummary } from '../inbox/row-summary.js';
import type { RowSummary } from '../inbox/row-summary.js';
import { sleep } from '../util/wait.js';

export interface RequeueOptions extends SelectorFlags {
  inbox?: string;
  dryRun?: boolean;
  /** Rows per second at most, e.g. 100 or 100/s. */
  rate?: string;
  /** The default: a requeue is a fresh start, its attempts counted anew (recorded in the audit). */
  resetAttempts?: boolean;
  /** Keep the attempts already made: the row gets only what is left of the worker's budget. */
  keepAttempts?: boolean;
  onProgress?: (p: { moved: number; total: number }) => void;
}

export interface RequeueResult {
  command: 'requeue';
  inbox: string;
  dryRun: boolean;
  selector: Selector;
  /** Finished (done or dead) rows the selector matches: what moves. */
  matched: number;
  moved: number;
  resetAttempts: boolean;
  /** The first rows that match, to check before the real thing. */
  sample: RowSummary[];
  /** --id values that name no row of the inbox at all (a typo, or another inbox). */
  notFound: string[];
  /** False when an --id named no row: the CLI exits 1. */
  ok: boolean;
}

const SAMPLE = 10;

export async function run(o: RequeueOptions): Promise<RequeueResult> {
  const selector = parseSelector(o);
  // No accidental mass requeue: ids, or a status plus what narrows it.
  if (!selector.ids && !selector.statuses) {
    throw new UsageError(
      'requeue needs a selector: --id ID (repeatable), or --status dead (narrowed by --error, --type, --since, --until)',
    );
  }
  const bad = (selector.statuses ?? []).filter((s) => s !== 'dead' && s !== 'done');
  if (bad.length) throw new UsageError(`--status ${bad.join(',')}: only finished rows (dead, done) can be requeued`);
  if (o.keepAttempts && o.resetAttempts) throw new UsageError('--keep-attempts and --reset-attempts say opposite things: choose one');
  const reset = o.keepAttempts !== true && o.resetAttempts !== false;
  const ratePerSec = parseRate(o.rate);
  const inbox = await openInboxForCommand(o.inbox, { readonly: o.dryRun === true });
  try {
    // Only finished rows move: count and sample exactly those.
    const finished: Selector = { ...selector, statuses: selector.statuses ?? ['done', 'dead'] };
    const matched = await inbox.count(finished);
    const sample = (await inbox.select(finished, { limit: SAMPLE })).map(rowSummary);
    const present = selector.ids
      ? new Set((await inbox.select({ ids: selector.ids }, { limit: selector.ids.length })).map((r) => r.deliveryId))
      : undefined;
    const notFound = (selector.ids ?? []).filter((id) => !present?.has(id));
    const base = {
      command: 'requeue' as const,
      inbox: inbox.location,
      selector,
      matched,
      resetAttempts: reset,
      sample,
      notFound,
      ok: notFound.length === 0,
    };
    if (o.dryRun) return { ...base, dryRun: true, moved: 0 };

    // Small transactions, so a worker and a receiver writing the same file wait milliseconds, not
    // the whole requeue; with --rate, batches are spaced to keep to it.
    const batchSize = ratePerSec ? Math.max(1, Math.min(500, Math.floor(ratePerSec))) : 500;
    const spacingMs = ratePerSec ? (batchSize / ratePerSec) * 1000 : 0;
    let next = performance.now();
    let progress = 0;
    const moved = await inbox.requeueWhere(selector.statuses ? selector : finished, {
      ...(reset ? { resetAttempts: true } : {}),
      batchSize,
      beforeBatch: async () => {
        const wait = next - performance.now();
        if (wait > 0) await sleep(wait);
        next = Math.max(next, performance.now()) + spacingMs;
      },
      onBatch: (n) => {
        progress += n;
        o.onProgress?.({ moved: progress, total: matched });
      },
    });
    return { ...base, dryRun: false, moved };
  } catch (err) {
    throw asInboxError(err, inbox.location);
  } finally {
    await inbox.close();
  }
}
