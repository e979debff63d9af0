import { openInbox } from '../inbox/open.js';
import type { RowState } from './accounting.js';
import { sleep } from '../util/wait.js';

export interface SettleWait {
  /** Rows of the run not finished yet: still leased (working) or pending. */
  leased: number;
  pending: number;
  /** When the last of them is due or its lease runs out (unix ms). */
  until: number;
  /** When chaos stops waiting, whatever they do (unix ms). */
  giveUpAt: number;
}

/**
 * After a kill, rows the dead worker had claimed stay leased until the lease runs out (30 s with
 * listen's defaults): judging "never processed" before then would be a false failure. Wait until
 * no row of the run is pending or leased, or until maxMs has passed; return where the unfinished
 * ones stand. Told once per change of what it waits for, so the CLI can say so.
 */
export async function waitForRows(
  path: string,
  source: string,
  ids: readonly string[],
  options: { maxMs: number; pollMs?: number; onWait?: (w: SettleWait) => void; signal?: AbortSignal },
): Promise<{ rows: Map<string, RowState>; waitedMs: number }> {
  const started = Date.now();
  const giveUpAt = started + options.maxMs;
  let told = '';
  for (;;) {
    const rows = await unfinished(path, source, ids);
    const now = Date.now();
    if (rows.size === 0 || now >= giveUpAt || options.signal?.aborted) return { rows, waitedMs: now - started };
    const states = [...rows.values()];
    const wait: SettleWait = {
      leased: states.filter((r) => r.status === 'working').length,
      pending: states.filter((r) => r.status === 'pending').length,
      until: Math.max(...states.map((r) => r.until)),
      giveUpAt,
    };
    const key = `${wait.leased}/${wait.pending}/${wait.until}`;
    if (key !== told) options.onWait?.(wait);
    told = key;
    await sleep(Math.min(options.pollMs ?? 200, Math.max(10, giveUpAt - now)), options.signal);
  }
}

async function unfinished(path: string, source: string, ids: readonly string[]): Promise<Map<string, RowState>> {
  const inbox = await openInbox(path, { readonly: true, create: false });
  const out = new Map<string, RowState>();
  try {
    for (let i = 0; i < ids.length; i += 500) {
      const rows = await inbox.select({ source, ids: ids.slice(i, i + 500), statuses: ['pending', 'working'] }, { limit: 500 });
      for (const r of rows) out.set(r.deliveryId, { status: r.status, until: r.nextAttemptAt });
    }
  } finally {
    await inbox.close();
  }
  return out;
}

/** How many times each of these rows was claimed (a second claim: the first lease ran out). */
export async function claimCounts(path: string, source: string, ids: readonly string[]): Promise<Map<string, number>> {
  const inbox = await openInbox(path, { readonly: true, create: false });
  const out = new Map<string, number>();
  try {
    for (let i = 0; i < ids.length; i += 500) {
      const rows = await inbox.select({ source, ids: ids.slice(i, i + 500) }, { limit: 500 });
      for (const r of rows) out.set(r.deliveryId, r.attempts);
    }
  } finally {
    await inbox.close();
  }
  return out;
}
