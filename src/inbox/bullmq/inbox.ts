import { randomBytes } from 'node:crypto';
import { Job, Queue, Worker } from 'bullmq';
import type { JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import type { ChainableCommander } from 'ioredis';
import { UsageError } from '../../util/errors.js';
import { GroupCommit } from '../batch.js';
import { InboxOpenError, type InboxUnavailableError } from '../types.js';
import type {
  Claimed,
  ClaimOptions,
  DeliveryKey,
  Inbox,
  InboxStats,
  NewDelivery,
  OverviewOptions,
  Page,
  RequeueOptions,
  Selector,
  Settlement,
  StoredDelivery,
} from '../types.js';
import { WriteWatch } from '../write-watch.js';
import { durabilityOf, durabilityUnknown } from './durability.js';
import type { RedisDurability } from './durability.js';
import { describeRedisError, isConnectionError, isFenceError } from './errors.js';
import { KEEP_ERROR_LUA, MINE_LUA, PREPARE_RETRY_NOW_LUA, UNCOUNT_ATTEMPT_LUA, UPDATE_RECORD_LUA } from './lua.js';
import type { HookdrillCommands } from './lua.js';
import { STATES_OF, inWindow, rawState, statesFor, stored } from './rows.js';
import { count } from '../../util/words.js';
import type { JobData } from './rows.js';
import { jobIdFor, newFence, newNonce } from './ids.js';
import { JobScan } from './scan.js';
import type { RedisTarget } from './target.js';

import { RedisCalls } from './calls.js';
import { DEFAULT_RETENTION_MS, LAYOUT_VERSION } from './options.js';
import type { BullmqOpenOptions, BullmqOverview } from './options.js';

/**
 * The inbox on a BullMQ queue in Redis. A delivery is a job whose id is a hash of its key, so a
 * redelivery is absorbed by BullMQ's own dedupe; whether a put created the job is read back from
 * the job itself. Claims are BullMQ's manual processing (a worker with no processor): the claim's
 * fence is the lock token, so every outcome is fenced by BullMQ's lock check; an expired lease is
 * found by BullMQ's stalled check and the job goes back to waiting (never failed for stalling).
 * hookdrill decides retries: every job has attempts 1, and a retry is a fenced move to delayed.
 *
 * What BullMQ cannot do as the SQL backends do is refused in one line (UsageError), never ignored:
 * claims, settles and requeues happen on the real clock, not at a chosen `now`.
 */
export class BullmqInbox implements Inbox {
  readonly location: string;
  /** How long completed and dead jobs are kept, and so how long a redelivery is recognised. */
  readonly retentionMs: number;
  readonly queueName: string;
  private q: Queue<JobData> | undefined;
  private worker: Worker<JobData> | undefined;
  private workerReady: Promise<Worker<JobData>> | undefined;
  private readonly group: GroupCommit | undefined;
  private readonly watch = new WriteWatch();
  /** Jobs this inbox claimed and has not settled, by id: settle needs no read of them. */
  private readonly held = new Map<string, { job: Job<JobData>; token: string }>();
  private readonly timeoutMs: number;
  private readonly keys: { base: string; marker: string; sources: string; requeues: string; meta: string };
  private closed = false;
  private readonly scan: JobScan;
  private readonly calls: RedisCalls;
  /** How many jobs the next claim asks for in its first round trip (see claim). */
  private firstWave = 1;
  /** Jobs in the queue when it was opened, and put since: what a loss of Redis's data can take. */
  private jobsAtOpen = 0;
  private putSinceOpen = 0;
  /** Each time Redis was found to have lost the queue's data, in words, for health() and stderr. */
  private readonly losses: string[] = [];

  constructor(
    private readonly redis: Redis,
    private readonly t: RedisTarget,
    private readonly o: BullmqOpenOptions,
    private readonly lastError: () => unknown,
  ) {
    this.location = t.display;
    this.queueName = t.queue;
    this.retentionMs = o.retentionMs ?? DEFAULT_RETENTION_MS;
    this.timeoutMs = o.timeoutMs ?? 10_000;
    const base = `${t.prefix}:${t.queue}`;
    this.keys = {
      base,
      marker: `${base}:hookdrill`,
      sources: `${base}:hookdrill:sources`,
      requeues: `${base}:hookdrill:requeues`,
      meta: `${base}:meta`,
    };
    this.scan = new JobScan(redis, () => this.queue, this.keys);
    this.calls = new RedisCalls(redis, {
      location: t.display,
      server: t.server,
      timeoutMs: this.timeoutMs,
      lastError,
      closed: () => this.closed,
    });
    redis.defineCommand('hookdrillMine', { numberOfKeys: 1, lua: MINE_LUA });
    redis.defineCommand('hookdrillKeepError', { numberOfKeys: 1, lua: KEEP_ERROR_LUA });
    redis.defineCommand('hookdrillUpdateRecord', { numberOfKeys: 1, lua: UPDATE_RECORD_LUA });
    redis.defineCommand('hookdrillPrepareRetryNow', { numberOfKeys: 3, lua: PREPARE_RETRY_NOW_LUA });
    redis.defineCommand('hookdrillUncountAttempt', { numberOfKeys: 1, lua: UNCOUNT_ATTEMPT_LUA });
    this.group = o.groupCommit ? new GroupCommit((rows) => this.putMany(rows), { maxInFlight: 4, ...o.groupCommit }) : undefined;
  }

  /**
   * Check (or make) the hookdrill marker beside the queue — never take over a queue of someone
   * else's jobs — then open the queue. The marker is written before BullMQ writes anything, so
   * two receivers starting at once on a new queue both find it theirs.
   */
  async prepare(): Promise<void> {
    const where = `BullMQ queue ${this.queueName} at ${this.location}`;
    // Both read at one instant (MULTI): another receiver's marker and queue come together or not at all.
    const replies = await this.op(
      async () => (await this.redis.multi().hget(this.keys.marker, 'version').exists(this.keys.meta, `${this.keys.base}:id`).exec()) ?? [],
    );
    for (const [err] of replies) if (err) throw err;
    const marker = (replies[0]?.[1] ?? null) as string | null;
    const used = Number(replies[1]?.[1] ?? 0);
    if (marker !== null) {
      if (Number(marker) > LAYOUT_VERSION)
        throw new InboxOpenError(
          `inbox ${this.location} was laid out by a newer hookdrill (version ${marker}; this one knows up to ${LAYOUT_VERSION}); upgrade hookdrill`,
        );
    } else {
      if (this.o.readonly || this.o.create === false) throw new InboxOpenError(`no hookdrill inbox in ${where}`);
      if (used > 0) throw new InboxOpenError(`${where} holds jobs that hookdrill did not put (no hookdrill marker): name another queue`);
      await this.op(() =>
        this.redis
          .multi()
          .hsetnx(this.keys.marker, 'version', String(LAYOUT_VERSION))
          .hsetnx(this.keys.marker, 'createdAt', String(Date.now()))
          .exec(),
      );
    }
    // Read-only (inspect): BullMQ's own bookkeeping (the queue's meta) is not written either.
    const queue = new Queue<JobData>(this.queueName, {
      connection: this.redis,
      prefix: this.t.prefix,
      skipMetasUpdate: this.o.readonly === true,
    });
    // Connection errors are reported by each call (InboxUnavailableError); an 'error' with no
    // listener would throw from the emitter.
    queue.on('error', () => undefined);
    this.q = queue;
    await this.op(() => queue.waitUntilReady());
    if (!this.o.readonly) {
      const counts = await this.op(() => this.scan.rawCounts(statesFor(undefined)));
      this.jobsAtOpen = Object.values(counts).reduce((n, c) => n + (c ?? 0), 0);
    }
  }

  /**
   * The marker was gone while the queue was in use: Redis lost its data (restarted without
   * persistence, flushed, or evicted) and took every job with it. The marker is put back at once,
   * so what arrives now is reachable by inspect and a restarted listen; the loss is said on stderr
   * and in health() from now on, with the most it can have taken.
   */
  private noticeLoss(): void {
    const upTo = this.jobsAtOpen + this.putSinceOpen;
    this.jobsAtOpen = 0;
    this.putSinceOpen = 0;
    const text = `Redis lost the data of BullMQ queue ${this.queueName} at ${this.location} (found ${new Date().toISOString()}: restarted without persistence, or flushed): up to ${count(upTo, 'job')} it held — deliveries already acknowledged — are gone, and the queue's history with them; what arrives from now on is stored again. Keep them next time: appendonly yes with appendfsync always`;
    this.losses.push(text);
    this.o.onWarning?.(text);
  }

  /** Put the marker back if it is gone; true when it was (the data was lost). */
  private async markerLost(): Promise<boolean> {
    const [[err, created] = []] =
      (await this.redis
        .multi()
        .hsetnx(this.keys.marker, 'version', String(LAYOUT_VERSION))
        .hsetnx(this.keys.marker, 'createdAt', String(Date.now()))
        .exec()) ?? [];
    if (err) throw err;
    return created === 1;
  }

  private get queue(): Queue<JobData> {
    if (!this.q) throw new Error('the BullMQ inbox was used before prepare()');
    return this.q;
  }

  async put(d: NewDelivery): Promise<{ inserted: boolean }> {
    this.writable('put');
    if (this.group) return this.group.put(d);
    return (await this.putMany([d]))[0] as { inserted: boolean };
  }

  /**
   * Every row in one pipeline (one round trip): each add, then a read of the job's nonce — the add
   * that created the job finds its own. Copies of a key in the batch: the first is inserted.
   */
  async putMany(rows: readonly NewDelivery[]): Promise<{ inserted: boolean }[]> {
    this.writable('put');
    if (rows.length === 0) return [];
    const done = this.watch.begin();
    let failure: unknown;
    try {
      return await this.op(async () => {
        const client = await this.queue.client;
        const p = client.pipeline() as unknown as ChainableCommander & HookdrillCommands;
        const age = Math.ceil(this.retentionMs / 1000);
        for (const r of rows) {
          const id = jobIdFor(r);
          const nonce = newNonce();
          const receivedAt = Math.round(r.receivedAt);
          const data: JobData = {
            nonce,
            source: r.source,
            deliveryId: r.deliveryId,
            eventType: r.eventType ?? null,
            headers: r.headers,
            body: r.body.toString('base64'),
            receivedAt,
            ...(r.route !== undefined ? { route: r.route } : {}),
          };
          const opts: JobsOptions = {
            jobId: id,
            // hookdrill's worker decides retries: BullMQ never retries on its own.
            attempts: 1,
            removeOnComplete: { age },
            removeOnFail: { age },
            stackTraceLimit: 0,
            // BullMQ's own timestamp is the receipt time: sorting and windows read it without the body.
            ...(receivedAt !== 0 ? { timestamp: receivedAt } : {}),
          };
          const job = new Job<JobData>(this.queue, r.eventType ?? 'delivery', data, opts, id);
          // Queued into the pipeline synchronously; its outcome is read from exec() below.
          job.addJob(p as never).catch(() => undefined);
          p.hookdrillMine(`${this.keys.base}:${id}`, `{"nonce":${JSON.stringify(nonce)}`);
        }
        p.sadd(this.keys.sources, ...new Set(rows.map((r) => r.source)));
        // Last in the same round trip: the marker put back if Redis lost it (and so every job).
        p.hsetnx(this.keys.marker, 'version', String(LAYOUT_VERSION));
        p.hsetnx(this.keys.marker, 'createdAt', String(Date.now()));
        const results = (await p.exec()) ?? [];
        for (const [err] of results) if (err) throw err;
        if (results.at(-2)?.[1] === 1) this.noticeLoss();
        const out = rows.map((_, i) => ({ inserted: results[2 * i + 1]?.[1] === 1 }));
        this.putSinceOpen += out.filter((r) => r.inserted).length;
        return out;
      });
    } catch (err) {
      failure = err;
      throw err;
    } finally {
      done(failure);
    }
  }

  async claim(o: ClaimOptions): Promise<Claimed[]> {
    this.writable('claim');
    if (o.now !== undefined) throw this.noChosenClock('a claim');
    if (!Number.isSafeInteger(o.limit) || o.limit < 1) return [];
    const leaseMs = Math.max(1, Math.round(o.leaseMs));
    return this.op(async () => {
      const worker = await this.ensureWorker(leaseMs);
      const fence = newFence();
      const token = String(fence);
      // In waves of 1, 2, 4 … (each call is BullMQ's atomic move to active, so two claims never
      // share a job), stopping at the first wave that comes back short: an idle poll costs one
      // script, a lone delivery three — not one per slot of the limit (64 scripts for one job cut
      // listen's throughput with its worker running to a third; bench/receiver.ts).
      // A claim that came back full starts the next at that size: a backlog is drained in one
      // round trip per claim.
      let jobs: Job<JobData>[] = [];
      for (let wave = Math.min(this.firstWave, o.limit); jobs.length < o.limit; wave *= 2) {
        const n = Math.min(wave, o.limit - jobs.length);
        const got = (await Promise.all(Array.from({ length: n }, () => worker.getNextJob(token, { block: false })))).filter(
          (j): j is Job<JobData> => j !== undefined && j.id !== undefined,
        );
        jobs.push(...got);
        if (got.length < n) break;
      }
      this.firstWave = jobs.length >= o.limit ? o.limit : 1;
      if (jobs.length > 0 && leaseMs !== worker.opts.lockDuration) {
        // The lease is this claim's, not the worker's default: a job whose lock could not be set to
        // it (its lock ran out already) is not handed out; the stalled check puts it back.
        const failed = new Set(
          await worker.extendJobLocks(
            jobs.map((j) => j.id as string),
            jobs.map(() => token),
            leaseMs,
          ),
        );
        jobs = jobs.filter((j) => !failed.has(j.id as string));
      }
      const claimed: Claimed[] = [];
      for (const job of jobs) {
        const d = job.data;
        if (typeof d?.source !== 'string' || typeof d.deliveryId !== 'string') {
          // Not a delivery (put there by something else): buried, not handed out, nor left to come back.
          // Its own removeOnFail would apply to the whole failed set (dead deliveries removed early).
          job.opts = { ...job.opts, attempts: 1, removeOnFail: { age: Math.ceil(this.retentionMs / 1000) } };
          await job
            .moveToFailed(new Error('not a hookdrill delivery: its data has no source or delivery id'), token, false)
            .catch(() => undefined);
          continue;
        }
        this.hold(job, token);
        claimed.push({
          source: d.source,
          deliveryId: d.deliveryId,
          eventType: d.eventType ?? undefined,
          body: Buffer.from(d.body, 'base64'),
          headers: d.headers,
          receivedAt: d.receivedAt,
          attempt: job.attemptsStarted,
          fence,
          ...(typeof d.route === 'string' ? { route: d.route } : {}),
        });
      }
      return claimed.sort((a, b) => a.receivedAt - b.receivedAt);
    });
  }

  async settle(all: readonly Settlement[], now?: number): Promise<boolean[]> {
    this.writable('settle');
    if (now !== undefined) throw this.noChosenClock('a settle');
    if (all.length === 0) return [];
    // One outcome per claim: the first stands, the rest are refused (as on the SQL backends).
    const seen = new Set<string>();
    const first = all.map((x) => {
      const k = `${x.key.source}\u0000${x.key.deliveryId}\u0000${x.fence}`;
      const isFirst = !seen.has(k);
      seen.add(k);
      return isFirst;
    });
    return this.op(() => Promise.all(all.map((s, i) => (first[i] ? this.settleOne(s) : Promise.resolve(false)))));
  }

  private async settleOne(s: Settlement): Promise<boolean> {
    // Token "0" would skip BullMQ's lock check: only a fence a claim handed out can settle.
    if (!Number.isSafeInteger(s.fence) || s.fence < 1) return false;
    const id = jobIdFor(s.key);
    const token = String(s.fence);
    const held = this.held.get(id);
    // This process claimed the job again since: the fence is stale. Refused without touching the
    // held Job — moveToFailed sets its failedReason before the lock check, so a stale outcome run
    // on the new claim's Job would leave its error on the row.
    if (held && held.token !== token) return false;
    const job = held?.job ?? (await Job.fromId<JobData>(this.queue, id));
    if (!job) return false;
    try {
      if (s.outcome === 'done') {
        await job.moveToCompleted(null, token, false);
      } else if (s.outcome === 'release') {
        // Untried: its attempt given back, then moved to delayed (BullMQ's fenced move).
        const mine = await (this.redis as unknown as HookdrillCommands).hookdrillUncountAttempt(`${this.keys.base}:${id}`, token);
        if (mine !== 1) {
          if (this.held.get(id)?.job === job) this.held.delete(id);
          return false;
        }
        await job.moveToDelayed(Date.now() + Math.max(0, Math.round(s.retryInMs)), token);
      } else if (s.outcome === 'retry') {
        // BullMQ's own fenced retry: due after the delay, the error recorded in the same script.
        job.opts = {
          ...job.opts,
          attempts: Number.MAX_SAFE_INTEGER,
          backoff: { type: 'fixed', delay: Math.max(0, Math.round(s.retryInMs)) },
        };
        await job.moveToFailed(new Error(s.error), token, false);
      } else {
        const { backoff: _, ...opts } = job.opts;
        job.opts = { ...opts, attempts: 1 };
        await job.moveToFailed(new Error(s.error), token, false);
      }
      this.held.delete(id);
      return true;
    } catch (err) {
      if (isFenceError(err)) {
        if (this.held.get(id)?.job === job) this.held.delete(id);
        return false;
      }
      throw err;
    }
  }

  async get(key: DeliveryKey): Promise<StoredDelivery | undefined> {
    return this.op(async () => {
      const id = jobIdFor(key);
      const state = rawState(await this.queue.getJobState(id));
      if (!state) return undefined;
      const [row] = await this.scan.describe([{ id, state }]);
      return row && row.source === key.source && row.deliveryId === key.deliveryId ? stored(row) : undefined;
    });
  }

  async stats(): Promise<InboxStats> {
    return this.op(async () => {
      const counts = await this.scan.counts();
      const pending = await this.scan.listIds(STATES_OF.pending);
      const ts = await this.scan.timestamps(pending.map((e) => e.id));
      let oldest: number | undefined;
      for (const t of ts) if (t !== undefined && (oldest === undefined || t < oldest)) oldest = t;
      return { counts, total: counts.pending + counts.working + counts.done + counts.dead, oldestPendingAt: oldest };
    }, 'scan');
  }

  async select(selector: Selector, page: Page): Promise<StoredDelivery[]> {
    if (!(page.limit > 0)) return [];
    return this.op(async () => (await this.scan.matching(selector, page.limit, page)).map(stored), 'scan');
  }

  async count(selector: Selector): Promise<number> {
    return this.op(async () => {
      const { statuses, since, until, ...narrowing } = selector;
      const states = statesFor(statuses);
      // Anything beyond a state and a time window is in the jobs themselves: counted by scanning them.
      // (Asked as "any other field", so a selector field added later is never counted as absent.)
      if (Object.values(narrowing).some((v) => v !== undefined && !(Array.isArray(v) && v.length === 0)))
        return (await this.scan.matching(selector)).length;
      if (since === undefined && until === undefined) {
        const counts = await this.scan.rawCounts(states);
        return states.reduce((n, s) => n + (counts[s] ?? 0), 0);
      }
      // Only a time window: BullMQ's timestamp is the receipt time, no body needs reading.
      const ts = await this.scan.timestamps((await this.scan.listIds(states)).map((e) => e.id));
      return ts.filter((t) => t !== undefined && inWindow(t, selector)).length;
    }, 'scan');
  }

  async overview(now = Date.now(), options: OverviewOptions = {}): Promise<BullmqOverview> {
    return this.op(
      async () => ({ ...(await this.scan.overview(now, await this.stats(), options)), retentionMs: this.retentionMs }),
      'scan',
    );
  }

  /**
   * Finished jobs matching the selector go back to waiting (BullMQ's retry of a completed or
   * failed job), oldest first, `batchSize` at a time. Active jobs are never touched: a job that is
   * no longer finished when its batch comes is left as it is. On record in the requeue log.
   */
  async requeueWhere(selector: Selector, options: RequeueOptions): Promise<number> {
    this.writable('requeue');
    if (options.now !== undefined) throw this.noChosenClock('a requeue');
    // Pending rows only when asked for by status: "retry now" is a requeue of its own, never a side effect.
    const chosen = (selector.statuses ?? ['done', 'dead']).filter((s) => s === 'done' || s === 'dead' || s === 'pending');
    // Chosen once, up front: a job a worker buries again during the requeue is not picked twice.
    const rows = chosen.length > 0 ? await this.op(() => this.scan.matching({ ...selector, statuses: chosen }), 'scan') : [];
    options.onChosen?.(rows.length);
    const batchSize = Math.max(1, options.batchSize ?? 500);
    const reset = options.resetAttempts === true;
    const record = { id: randomBytes(8).toString('hex'), at: Date.now(), moved: 0, selector, resetAttempts: reset };
    await this.op(async () => {
      await this.redis.multi().lpush(this.keys.requeues, JSON.stringify(record)).ltrim(this.keys.requeues, 0, 999).exec();
    });
    let moved = 0;
    for (let i = 0; i < rows.length; i += batchSize) {
      await options.beforeBatch?.();
      const batch = rows.slice(i, i + batchSize);
      const n = await this.op(async () => {
        const jobs = await Promise.all(batch.map((r) => Job.fromId<JobData>(this.queue, r.id)));
        const ok = await Promise.all(
          batch.map(async (r, j) => {
            const job = jobs[j];
            if (!job) return false;
            // Routed anew by the worker: the route it was given is forgotten before it is due.
            if (options.reroute && typeof job.data.route === 'string') await job.updateData({ ...job.data, route: null });
            if (r.status === 'pending') return this.retryNow(job, reset);
            try {
              await job.retry(
                r.state === 'failed' ? 'failed' : 'completed',
                reset ? { resetAttemptsMade: true, resetAttemptsStarted: true } : {},
              );
            } catch (err) {
              if (isFenceError(err)) return false;
              throw err;
            }
            if (r.state === 'failed' && r.lastError !== undefined)
              await (this.redis as unknown as HookdrillCommands).hookdrillKeepError(`${this.keys.base}:${r.id}`, r.lastError);
            return true;
          }),
        );
        const count = ok.filter(Boolean).length;
        record.moved = moved + count;
        await (this.redis as unknown as HookdrillCommands).hookdrillUpdateRecord(this.keys.requeues, record.id, JSON.stringify(record));
        return count;
      });
      moved += n;
      options.onBatch?.(n);
    }
    return moved;
  }

  /**
   * A pending job made due now: a delayed one promoted (BullMQ's own move to waiting), a waiting
   * one left where it is (it is due already). False when a worker has it or it is gone.
   */
  private async retryNow(job: Job<JobData>, reset: boolean): Promise<boolean> {
    const id = job.id as string;
    const where = await (this.redis as unknown as HookdrillCommands).hookdrillPrepareRetryNow(
      `${this.keys.base}:${id}`,
      this.queue.toKey('delayed'),
      this.queue.toKey('wait'),
      id,
      reset ? '1' : '0',
    );
    if (where !== 1) return where === 2;
    try {
      await job.promote();
    } catch (err) {
      const message = String((err as Error).message);
      // Removed meanwhile: nothing to move.
      if (/^Missing key for job/.test(message)) return false;
      // Due meanwhile, and moved to waiting by BullMQ itself: what was asked happened.
      if (!/is not in the delayed state/.test(message)) throw err;
    }
    return true;
  }

  /** Healthy: Redis answers, and no put has waited longer than stuckAfterMs. */
  async health(): Promise<{ ok: boolean; problem?: string; warnings?: string[] }> {
    const problem = this.watch.problem(this.location, this.o.stuckAfterMs ?? 1_000, 'Redis slow, or the network to it');
    if (problem) return { ok: false, problem };
    if (this.redis.status !== 'ready') return { ok: false, problem: this.unreachable().message };
    try {
      const probe = this.redis.ping();
      probe.catch(() => undefined);
      await Promise.race([
        probe,
        new Promise((_, reject) =>
          setTimeout(() => reject(new Error(`Redis at ${this.t.server} did not answer PING within 1 s`)), 1_000).unref(),
        ),
      ]);
      const warnings = () => (this.losses.length ? { warnings: [...this.losses] } : {});
      // A Redis at its maxmemory with noeviction answers PING and refuses every new job (OOM) —
      // the marker check below included, so this is asked first. Within 5% of the limit counts:
      // a refused write frees what it held, so right after an OOM Redis sits just under it, where
      // a delivery of a few KB is refused still.
      const memory = parseInfo(await this.redis.info('memory'));
      const max = Number(memory.maxmemory ?? 0);
      if (max > 0 && memory.maxmemory_policy === 'noeviction' && Number(memory.used_memory ?? 0) >= max * 0.95) {
        const problem = `Redis is at its maxmemory (${Math.round(max / 1024 / 1024)} MiB, noeviction): it refuses every new job, so no delivery can be stored`;
        return { ok: false, problem, ...warnings() };
      }
      // Found here too when nothing is being delivered: a /healthz poll sees the loss.
      if (!this.o.readonly && (await this.markerLost())) this.noticeLoss();
      return { ok: true, ...warnings() };
    } catch (err) {
      return { ok: false, problem: (err as Error).message };
    }
  }

  /**
   * Whether what Redis acknowledges survives a restart: AOF on or off, its fsync policy, and the
   * eviction policy (anything but noeviction can drop stored jobs). For listen to warn.
   */
  async aof(): Promise<RedisDurability> {
    return this.op(async () => {
      let config: Record<string, string>;
      try {
        const replies = await Promise.all(
          ['appendonly', 'appendfsync', 'maxmemory-policy'].map((k) => this.redis.config('GET', k) as Promise<string[]>),
        );
        config = Object.fromEntries(replies.flatMap((r) => (r.length >= 2 ? [[String(r[0]), String(r[1])]] : [])));
      } catch (err) {
        if (isConnectionError(err)) throw err;
        return durabilityUnknown(this.t.server, describeRedisError(err));
      }
      return durabilityOf(this.t.server, config);
    });
  }

  /**
   * What Redis's own settings put at risk, one line each, for listen to print at start: AOF off or
   * not synced on every write, eviction on. Never throws: a Redis that cannot be asked is a line too.
   */
  async durabilityWarnings(): Promise<string[]> {
    try {
      return (await this.aof()).warnings;
    } catch (err) {
      return [`Redis at ${this.t.server}: could not read its persistence settings (${err instanceof Error ? err.message : String(err)})`];
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Puts still gathering are owed their answers — but not for ever (each is bounded by the timeout).
    const giveUpAt = Date.now() + this.timeoutMs + 5_000;
    while ((this.group?.pending ?? 0) > 0 && Date.now() < giveUpAt) await new Promise((r) => setTimeout(r, 5));
    this.closed = true;
    const bounded = (p: Promise<unknown>) => Promise.race([p.catch(() => undefined), new Promise((r) => setTimeout(r, 2_000).unref())]);
    // A job claimed and not settled keeps its lock until its lease runs out, as on the SQL backends.
    const worker = this.worker ?? (this.workerReady ? await this.workerReady.catch(() => undefined) : undefined);
    if (worker) await bounded(worker.close(true));
    if (this.q) await bounded(this.q.close());
    this.held.clear();
    if (this.redis.status === 'ready') await bounded(this.redis.quit());
    this.redis.disconnect();
  }

  // --- internals ---

  /** The worker that claims: created on the first claim (a receiver or inspect never needs one). */
  private ensureWorker(leaseMs: number): Promise<Worker<JobData>> {
    this.workerReady ??= (async () => {
      const stalledInterval = this.o.stalledIntervalMs ?? Math.min(5_000, Math.max(100, Math.round(leaseMs / 2)));
      const worker = new Worker<JobData>(this.queueName, null, {
        connection: this.redis,
        prefix: this.t.prefix,
        autorun: false,
        lockDuration: leaseMs,
        stalledInterval,
        // A job whose worker died goes back to waiting however often that happens: hookdrill
        // counts attempts itself and buries a row only for its own reasons.
        maxStalledCount: 1_000_000_000,
      });
      worker.on('error', () => undefined);
      try {
        await worker.waitUntilReady();
      } catch (err) {
        await worker.close(true).catch(() => undefined);
        throw err;
      }
      // Expired leases come back: BullMQ's stalled check, which a worker with autorun off does not start itself.
      void worker.startStalledCheckTimer();
      this.worker = worker;
      return worker;
    })();
    this.workerReady.catch(() => {
      this.workerReady = undefined;
    });
    return this.workerReady;
  }

  private hold(job: Job<JobData>, token: string): void {
    this.held.set(job.id as string, { job, token });
    // Bounded: claims whose settle never came (the inbox failed meanwhile) are forgotten oldest first.
    if (this.held.size > 10_000) {
      const oldest = this.held.keys().next();
      if (!oldest.done) this.held.delete(oldest.value);
    }
  }

  private writable(what: string): void {
    if (this.o.readonly) throw new UsageError(`inbox ${this.location} is open read-only: ${what} refused`);
  }

  private noChosenClock(what: string): UsageError {
    return new UsageError(
      `inbox ${this.location}: BullMQ keeps time by the real clock (lock expiry in Redis, due times from the workers' clocks): ${what} at a chosen time (now) cannot be made`,
    );
  }

  private op<T>(work: () => Promise<T>, kind: 'call' | 'scan' = 'call'): Promise<T> {
    return this.calls.run(work, kind);
  }

  private unreachable(detail?: string): InboxUnavailableError {
    return this.calls.unreachable(detail);
  }
}

/** `INFO`'s `name:value` lines as an object. */
function parseInfo(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0 && !line.startsWith('#')) out[line.slice(0, i)] = line.slice(i + 1).trim();
  }
  return out;
}
