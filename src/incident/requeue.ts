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
  /** Route the rows anew by the routes listen has now, forgetting the one each was given. */
  reroute?: boolean;
  onProgress?: (p: { moved: number; total: number }) => void;
  /**
   * Stop between batches (the CLI aborts it at Ctrl-C / SIGTERM): the batch under way commits
   * whole, the rest stay as they were, and the result says how many moved (`interrupted`).
   */
  signal?: AbortSignal;
}

export interface RequeueResult {
  command: 'requeue';
  inbox: string;
  dryRun: boolean;
  selector: Selector;
  /**
   * Finished (done or dead) rows the selector matches. For a real requeue, counted when the rows to
   * move are chosen (a worker burying rows meanwhile changes the preview's count); a dry run's is
   * the preview's. `moved` is never more: a row claimed since it was chosen is left as it is.
   */
  matched: number;
  moved: number;
  /** Stopped by `signal` before every matched row was tried: `moved` rows moved, the rest did not. */
  interrupted?: boolean;
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
  const bad = (selector.statuses ?? []).filter((s) => s !== 'dead' && s !== 'done' && s !== 'pending');
  if (bad.length)
    throw new UsageError(
      `--status ${bad.join(',')}: a working row is under a worker's lease and is left to it; requeue moves dead and done rows, and makes pending ones due now (--status pending)`,
    );
  if (o.keepAttempts && o.resetAttempts) throw new UsageError('--keep-attempts and --reset-attempts say opposite things: choose one');
  const reset = o.keepAttempts !== true && o.resetAttempts !== false;
  const ratePerSec = parseRate(o.rate);
  const inbox = await openInboxForCommand(o.inbox, { readonly: o.dryRun === true });
  try {
    // Finished rows move (and pending ones when named by status): count and sample exactly those.
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
    if (o.dryRun) return { ...base, dryRun: true, moved: 0, interrupted: false };

    // Small transactions, so a worker and a receiver writing the same file wait milliseconds, not
    // the whole requeue; with --rate, batches are spaced to keep to it.
    const batchSize = ratePerSec ? Math.max(1, Math.min(500, Math.floor(ratePerSec))) : 500;
    const spacingMs = ratePerSec ? (batchSize / ratePerSec) * 1000 : 0;
    let next = performance.now();
    let progress = 0;
    let chosen = matched;
    const stopped = new Error('requeue stopped by a signal');
    try {
      const moved = await inbox.requeueWhere(selector.statuses ? selector : finished, {
        ...(reset ? { resetAttempts: true } : {}),
        ...(o.reroute ? { reroute: true } : {}),
        batchSize,
        onChosen: (n) => {
          chosen = n;
        },
        beforeBatch: async () => {
          const wait = next - performance.now();
          if (wait > 0) await sleep(wait, o.signal);
          // A turn of the event loop per batch: SQLite's batches are synchronous, and a signal
          // handler runs only between macrotasks, so without it Ctrl-C would be heard at the end.
          else if (o.signal) await new Promise((r) => setImmediate(r));
          next = Math.max(next, performance.now()) + spacingMs;
          if (o.signal?.aborted) throw stopped;
        },
        onBatch: (n) => {
          progress += n;
          o.onProgress?.({ moved: progress, total: chosen });
        },
      });
      return { ...base, matched: chosen, dryRun: false, moved, interrupted: false };
    } catch (err) {
      // Every batch commits with its count in the requeue log, so `progress` is what moved.
      if (err === stopped || (o.signal?.aborted && isAbort(err)))
        return { ...base, matched: chosen, dryRun: false, moved: progress, interrupted: true };
      throw err;
    }
  } catch (err) {
    throw asInboxError(err, inbox.location);
  } finally {
    await inbox.close();
  }
}

function isAbort(err: unknown): boolean {
  return (err as { name?: unknown } | null)?.name === 'AbortError';
}
