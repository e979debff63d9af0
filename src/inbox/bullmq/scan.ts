import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { CHECK_HEADER } from '../types.js';
import type { DeliveryStatus, InboxStats, Overview, OverviewOptions, RequeueRecord, RowCursor, RowOrder, Selector } from '../types.js';
import {
  CHUNK,
  DELAY_SCORE,
  FIELDS,
  LISTS,
  STATES_OF,
  STATUS_OF,
  byReceipt,
  inWindow,
  matches,
  rawState,
  statesFor,
  toRow,
} from './rows.js';
import type { Entry, JobData, RawState, Row } from './rows.js';
import { jobIdFor } from './ids.js';
import { perMinuteChart } from '../per-minute.js';

/**
 * The read side of the BullMQ inbox: jobs found by state and key with pipelined reads, and turned
 * into rows. BullMQ has no index on what a selector asks for, so selectors scan on the client.
 */
export class JobScan {
  constructor(
    private readonly redis: Redis,
    private readonly getQueue: () => Queue<JobData>,
    private readonly keys: { base: string; sources: string; requeues: string },
  ) {}

  private get queue(): Queue<JobData> {
    return this.getQueue();
  }

  /**
   * Rows matching the selector in receipt order (received_at, source, delivery id), oldest first
   * or newest first, after a cursor if given, at most `limit`.
   */
  async matching(sel: Selector, limit = Number.POSITIVE_INFINITY, page: { order?: RowOrder; after?: RowCursor } = {}): Promise<Row[]> {
    const newest = page.order === 'newest';
    const inOrder = newest ? (a: Row, b: Row) => byReceipt(b, a) : byReceipt;
    const { after } = page;
    const pastCursor = (r: Row) => !after || (newest ? byReceipt(r, after) < 0 : byReceipt(r, after) > 0);
    const states = statesFor(sel.statuses);
    if (states.length === 0) return [];
    if (sel.ids && sel.ids.length > 0) {
      // By key: the job id is derived from (source, delivery id); without a source, every source seen.
      const sources = sel.source ? [sel.source] : await this.redis.smembers(this.keys.sources);
      const ids = [...new Set(sel.ids.flatMap((deliveryId) => sources.map((source) => jobIdFor({ source, deliveryId }))))];
      const found = await Promise.all(ids.map((id) => this.queue.getJobState(id)));
      const entries = ids.flatMap((id, i): Entry[] => {
        const state = rawState(found[i]);
        return state && states.includes(state) ? [{ id, state }] : [];
      });
      return (await this.describe(entries))
        .filter((r) => matches(r, sel) && pastCursor(r))
        .sort(inOrder)
        .slice(0, limit);
    }
    const entries = await this.listIds(states);
    const ts = await this.timestamps(entries.map((e) => e.id));
    // Receipt times first (one field a job): only jobs that can still take a place are read whole.
    const reachable = (t: number) => !after || (newest ? t <= after.receivedAt : t >= after.receivedAt);
    const order = entries
      .map((e, i) => ({ e, t: ts[i] }))
      .filter((x): x is { e: Entry; t: number } => x.t !== undefined && inWindow(x.t, sel) && reachable(x.t))
      .sort(newest ? (a, b) => b.t - a.t : (a, b) => a.t - b.t);
    const out: Row[] = [];
    let cutoff: number | undefined;
    const beforeCutoff = (t: number) => cutoff === undefined || (newest ? t >= cutoff : t <= cutoff);
    for (let i = 0; i < order.length; i += CHUNK) {
      const chunk = order.slice(i, i + CHUNK).filter((x) => beforeCutoff(x.t));
      if (chunk.length === 0) break;
      for (const r of await this.describe(chunk.map((x) => x.e))) if (matches(r, sel) && pastCursor(r)) out.push(r);
      if (out.length >= limit) {
        // Enough: only rows received no later (no earlier, newest first) than the limit-th can still take a place.
        out.sort(inOrder);
        out.length = limit;
        cutoff = out[limit - 1]?.receivedAt ?? cutoff;
      }
    }
    return out.sort(inOrder).slice(0, limit);
  }

  /** Job ids in the given states, each with its state (and the set's score where there is one). */
  async listIds(states: readonly RawState[]): Promise<Entry[]> {
    const p = this.redis.pipeline();
    for (const s of states) {
      const key = this.queue.toKey(s);
      if (LISTS.has(s)) p.lrange(key, 0, -1);
      else p.zrange(key, 0, -1, 'WITHSCORES');
    }
    const results = (await p.exec()) ?? [];
    const out: Entry[] = [];
    const seen = new Set<string>();
    states.forEach((state, i) => {
      const [err, value] = results[i] ?? [];
      if (err) throw err;
      const items = (value as string[] | null) ?? [];
      if (LISTS.has(state)) {
        for (const id of items) {
          if (seen.has(id)) continue;
          seen.add(id);
          out.push({ id, state });
        }
      } else {
        for (let j = 0; j + 1 < items.length; j += 2) {
          const id = items[j] as string;
          if (seen.has(id)) continue;
          seen.add(id);
          const score = Number(items[j + 1]);
          out.push({ id, state, score: state === 'delayed' ? Math.floor(score / DELAY_SCORE) : score });
        }
      }
    });
    return out;
  }

  /** Ids of jobs completed or failed at or after `from` (the sets are scored by finishedOn). */
  async finishedSince(from: number): Promise<{ completed: string[]; failed: string[] }> {
    const [completed, failed] = await Promise.all([
      this.redis.zrangebyscore(this.queue.toKey('completed'), from, '+inf'),
      this.redis.zrangebyscore(this.queue.toKey('failed'), from, '+inf'),
    ]);
    return { completed, failed };
  }

  /** One field of many jobs (undefined: the job is gone), in chunks of one pipeline each. */
  async field(ids: readonly string[], name: string): Promise<(string | null | undefined)[]> {
    const out: (string | null | undefined)[] = [];
    for (let i = 0; i < ids.length; i += 1_000) {
      const chunk = ids.slice(i, i + 1_000);
      const p = this.redis.pipeline();
      for (const id of chunk) p.hmget(`${this.keys.base}:${id}`, name, 'name');
      const results = (await p.exec()) ?? [];
      for (const [err, value] of results) {
        if (err) throw err;
        const [v, jobName] = value as (string | null)[];
        // Every job has a name: none means the job was removed meanwhile.
        out.push(jobName === null ? undefined : v);
      }
    }
    return out;
  }

  /** The receipt time of each job (BullMQ's timestamp), undefined where the job is gone. */
  async timestamps(ids: readonly string[]): Promise<(number | undefined)[]> {
    return (await this.field(ids, 'timestamp')).map((v) => (v === undefined || v === null ? undefined : Number(v)));
  }

  /** Jobs as stored deliveries: their fields, the due time of a delayed one, the lease of an active one. */
  async describe(entries: readonly Entry[]): Promise<Row[]> {
    const out: Row[] = [];
    for (let i = 0; i < entries.length; i += CHUNK) {
      const chunk = entries.slice(i, i + CHUNK);
      const p = this.redis.pipeline();
      for (const e of chunk) {
        const key = `${this.keys.base}:${e.id}`;
        p.hmget(key, ...FIELDS);
        if (e.state === 'active') p.pttl(`${key}:lock`);
        else if (e.state === 'delayed' && e.score === undefined) p.zscore(this.queue.toKey('delayed'), e.id);
      }
      const results = (await p.exec()) ?? [];
      for (const [err] of results) if (err) throw err;
      const now = Date.now();
      let k = 0;
      for (const e of chunk) {
        const fields = results[k++]?.[1] as (string | null)[];
        let extra: number | undefined;
        if (e.state === 'active') extra = Number(results[k++]?.[1]);
        else if (e.state === 'delayed' && e.score === undefined) {
          const score = results[k++]?.[1];
          extra = score === null || score === undefined ? undefined : Math.floor(Number(score) / DELAY_SCORE);
        }
        const row = toRow(e, fields, extra, now);
        if (row) out.push(row);
      }
    }
    return out;
  }

  async counts(): Promise<Record<DeliveryStatus, number>> {
    const raw = await this.rawCounts(Object.keys(STATUS_OF) as RawState[]);
    const counts: Record<DeliveryStatus, number> = { pending: 0, working: 0, done: 0, dead: 0 };
    for (const [state, n] of Object.entries(raw)) counts[STATUS_OF[state as RawState]] += n;
    return counts;
  }

  async rawCounts(states: readonly RawState[]): Promise<Partial<Record<RawState, number>>> {
    const p = this.redis.pipeline();
    for (const s of states) {
      if (LISTS.has(s)) p.llen(this.queue.toKey(s));
      else p.zcard(this.queue.toKey(s));
    }
    const results = (await p.exec()) ?? [];
    const out: Partial<Record<RawState, number>> = {};
    states.forEach((s, i) => {
      const [err, n] = results[i] ?? [];
      if (err) throw err;
      out[s] = Number(n ?? 0);
    });
    return out;
  }

  /** The last hour per minute, dead rows by their last error, attempts, the last requeues. */
  async overview(now: number, stats: InboxStats, options: OverviewOptions = {}): Promise<Overview> {
    const from = now - 3_600_000;
    // Received in the last hour: anything not finished, and what finished since (a job finishes
    // after it is received, so one finished before the window was received before it too).
    const open = await this.listIds([...STATES_OF.pending, 'active', 'failed']);
    // Where each stands now: an open job by its state; a finished one by the set it finished in.
    const statusOf = new Map<string, DeliveryStatus>();
    for (const e of open) if (e.state !== 'failed') statusOf.set(e.id, STATUS_OF[e.state]);
    const finished = await this.finishedSince(from);
    for (const id of finished.completed) statusOf.set(id, 'done');
    for (const id of finished.failed) statusOf.set(id, 'dead');
    const ids = [...statusOf.keys()];
    const times = await this.timestamps(ids);
    const chart = perMinuteChart(
      ids.flatMap((id, i) => {
        const t = times[i];
        const status = statusOf.get(id);
        if (t === undefined || status === undefined || t < from || t >= now) return [];
        return [{ minute: Math.floor((t - from) / 60_000), status, n: 1 }];
      }),
    );
    // Dead rows, and pending rows that failed, by their last error; attempts of the rows that are not done.
    // Whole jobs (their data holds the body) only where a group needs them: failed and delayed
    // (a retry waits in delayed); every open one only when check's rows are to be left out.
    const isCheck = (r: Row) => r.headers[CHECK_HEADER] !== undefined;
    const described = await this.describe(options.excludeCheck ? open : open.filter((e) => e.state === 'failed' || e.state === 'delayed'));
    const kept = options.excludeCheck ? described.filter((r) => !isCheck(r)) : described;
    const deadByError = groupByError(
      kept.filter((r) => r.state === 'failed'),
      (r) => ({ newestAt: r.finishedAt ?? 0, oldestAt: r.finishedAt ?? 0 }),
      (g, r) => {
        g.newestAt = Math.max(g.newestAt, r.finishedAt ?? 0);
        g.oldestAt = Math.min(g.oldestAt, r.finishedAt ?? 0);
      },
      isCheck,
    );
    const retryingByError = groupByError(
      kept.filter((r) => r.status === 'pending' && r.lastError !== undefined),
      (r) => ({ nextAt: r.nextAttemptAt }),
      (g, r) => {
        g.nextAt = Math.min(g.nextAt, r.nextAttemptAt);
      },
      isCheck,
    );
    const attempts: Record<number, number> = {};
    const counted = options.excludeCheck
      ? kept.map((r) => r.attempts)
      : (
          await this.field(
            open.map((e) => e.id),
            'ats',
          )
        ).flatMap((n) => (n === undefined ? [] : [Number(n ?? 0) || 0]));
    for (const a of counted) attempts[a] = (attempts[a] ?? 0) + 1;
    const requeues = (await this.redis.lrange(this.keys.requeues, 0, 4)).flatMap((text): RequeueRecord[] => {
      try {
        const r = JSON.parse(text) as RequeueRecord & { id?: string };
        return [{ at: r.at, moved: r.moved, selector: r.selector, resetAttempts: r.resetAttempts }];
      } catch {
        return [];
      }
    });
    return { stats, ...chart, deadByError, retryingByError, attempts, requeues, ...(options.excludeCheck ? { excludeCheck: true } : {}) };
  }
}

/** Rows grouped by their last error, most first (then by error), at most 20, each with how many check sent. */
function groupByError<Extra extends object>(
  rows: readonly Row[],
  first: (r: Row) => Extra,
  add: (g: Extra, r: Row) => void,
  isCheck: (r: Row) => boolean,
): ({ error: string; count: number; exampleId: string; checkRows: number } & Extra)[] {
  const groups = new Map<string, { error: string; count: number; exampleId: string; checkRows: number } & Extra>();
  for (const r of rows) {
    const error = r.lastError ?? '';
    const g = groups.get(error);
    if (!g) groups.set(error, { error, count: 1, exampleId: r.deliveryId, checkRows: isCheck(r) ? 1 : 0, ...first(r) });
    else {
      g.count++;
      if (isCheck(r)) g.checkRows++;
      if (r.deliveryId < g.exampleId) g.exampleId = r.deliveryId;
      add(g, r);
    }
  }
  return [...groups.values()].sort((a, b) => b.count - a.count || (a.error < b.error ? -1 : a.error > b.error ? 1 : 0)).slice(0, 20);
}
