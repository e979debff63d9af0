import { UsageError } from '../util/errors.js';
import { stringsOption } from '../util/shapes.js';
import type { Strings } from '../util/shapes.js';
import { parseDuration } from '../util/duration.js';
import { displayUrl, parseIntFlag, parseUrl } from '../util/options.js';
import { sleep } from '../util/wait.js';
import { parseTime } from '../inbox/selector.js';
import { displayTarget, openInbox, resolveTarget } from '../inbox/open.js';
import type { Inbox } from '../inbox/index.js';
import { resolveSigner, resolveTimingFlags } from '../delivery/signer.js';
import type { TimingFlags } from '../delivery/signer.js';
import { parseExpectation } from '../delivery/expect.js';
import { runDeliveries } from '../delivery/run.js';
import type { DeliveryRecord, RetryScheduled } from '../delivery/deliver.js';
import type { Timing } from '../delivery/timing.js';
import type { Provider } from '../providers/index.js';
import { eventTypes, resolveAccess } from '../remote/access.js';
import type { AccessOptions } from '../remote/access.js';
import type { ApiWait } from '../remote/client.js';
import type { Feed, FeedPosition, FeedStart, PulledEvent } from './feed.js';
import { stripeFeed } from './stripe.js';
import { githubFeed } from './github.js';
import { checkFilter, checkStateFile, checkStateWritable, defaultStateFile, filterOf, readState, writeState } from './state.js';
import { lockState } from './state-lock.js';
import { PULL_DEFAULTS } from './defaults.js';

export interface PullOptions extends AccessOptions, TimingFlags {
  /** Deliver each event, signed, to this receiver … */
  to?: string;
  /** … or put it straight into this inbox (a file, postgres:// or redis:// URL). */
  toInbox?: string;
  /** The receiver's signing secret (the local one: not the provider's). */
  secrets?: Strings;
  /** Keep polling for new events until interrupted. */
  follow?: boolean;
  /** Between polls (default: Stripe 2 s, GitHub 10 s): '5s', or milliseconds. */
  interval?: string | number;
  /** Only these event types (Stripe: `invoice.*` too, at most 20; GitHub: `issues` or `issues.opened`). */
  types?: Strings;
  /** Where a first run starts: this far back ('2h', an ISO time). A saved position wins, unless `resetCursor`. */
  since?: string;
  /** Start from now: skip what happened since the saved position. */
  fromNow?: boolean;
  /**
   * A saved cursor wins over `since` and `fromNow`, which say where a first run starts (a script or
   * a unit run twice must not deliver everything again). This moves a saved cursor to them instead.
   */
  resetCursor?: boolean;
  /** The state file (default: .hookdrill/pull/<provider>-<account or hook>.json under `cwd`). */
  state?: string;
  /** A receiver that keeps failing an event does not hold the run: the event is skipped and listed. */
  skipFailed?: boolean;
  /** Requests in flight at most (default 1: in order). */
  concurrency?: string | number;
  /** The project directory, where the default state file lives (default: the working directory). */
  cwd?: string;
  now?: number;
  signal?: AbortSignal;
  /** An attempt that failed and is tried again later: said as it fails, not only at the end. */
  onRetry?: (r: RetryScheduled) => void;
  /** Each event as soon as it is final: delivered, stored, failed, skipped or gone. */
  onEvent?: (e: PulledRecord) => void;
  /** What the run is doing, for a status line. */
  onStatus?: (s: PullStatus) => void;
  /** Once the start is known, before the first event: where from, where to, on what schedule. */
  onStart?: (s: PullStart) => void;
  /** What the user should know as it happens: where it starts, a wait, the API back. */
  onNote?: (text: string) => void;
}

/** One event's outcome, as --json prints it line by line. */
export interface PulledRecord {
  /** ISO time it became final. */
  at: string;
  id: string;
  type: string;
  /** Unix seconds the provider created it. */
  created: number;
  outcome: 'delivered' | 'stored' | 'duplicate' | 'failed' | 'skipped' | 'gone';
  /** The receiver's last status (delivered, failed, skipped). */
  status?: number;
  /** What went wrong when there was no status (a timeout, a refused connection) or why it is gone. */
  error?: string;
  attempts?: number;
  /** From the start of the first attempt (or the put) to the answer. */
  latencyMs?: number;
}

export interface PullStart {
  provider: 'stripe' | 'github';
  source: string;
  to: string;
  stateFile: string;
  start: PullResult['start'];
  follow: boolean;
  timing?: Timing;
}

export interface PullStatus {
  phase: 'catching up' | 'polling' | 'held';
  delivered: number;
  /** Events read and waiting to be delivered. */
  waiting: number;
  requests: number;
  budget?: { remaining: number; limit: number; resetAt: number };
}

export interface PullResult {
  command: 'pull';
  ok: boolean;
  provider: 'stripe' | 'github';
  apiBase: string;
  /** Whose events: the Stripe account (by key) or the GitHub hook. */
  source: string;
  /** Where they went: the receiver's URL, or the inbox. */
  to: string;
  into: 'receiver' | 'inbox';
  stateFile: string;
  start: 'resumed' | 'since' | 'now';
  follow: boolean;
  timing?: Timing;
  delivered: number;
  /** --to-inbox: put as new, and already there. */
  stored: number;
  duplicates: number;
  /** Skipped with --skip-failed after the receiver failed them. */
  skipped: PulledRecord[];
  /** The event holding the cursor: the receiver failed it, and it is delivered again on the next run. */
  held?: PulledRecord;
  /**
   * Interrupted (Ctrl-C, SIGTERM) while this event was being delivered — between attempts, or in
   * one: not acknowledged, so the cursor stays before it and the next run delivers it again.
   */
  unfinished?: PulledRecord;
  /** Listed, but no longer given by the API (past its retention): not delivered. */
  gone: PulledRecord[];
  apiRequests: number;
  interrupted: boolean;
  notes: string[];
  elapsedMs: number;
}

/**
 * Bring the provider's real events to a local receiver: read them from its API in order from the
 * saved position, deliver each as the provider would (its body, signed with the local secret, the
 * event's own id, the provider's retry profile), and move the position past it only once it was
 * acknowledged. A crash between the acknowledgement and the state write delivers that one event
 * again, with the same id: a correct receiver dedupes it.
 *
 * One pull at a time on a state file: a second one is refused (see state-lock.ts), or both would
 * deliver the same events and overwrite each other's cursor.
 */
export async function run(o: PullOptions): Promise<PullResult> {
  const started = performance.now();
  const plan = validate(o);
  // A FIFO or a device is refused before anything is made beside it or read from it.
  checkStateFile(plan.stateFile);
  checkStateWritable(plan.stateFile);
  const lock = lockState(plan.stateFile);
  try {
    return await pullLocked(plan, o, started);
  } finally {
    lock.release();
  }
}

/** The run itself, once the state file is this run's alone. */
async function pullLocked(plan: Plan, o: PullOptions, started: number): Promise<PullResult> {
  const notes: string[] = [];
  const note = (text: string) => {
    notes.push(text);
    o.onNote?.(text);
  };
  const waits = new WaitNotes(plan.apiName, note);
  const ctx = {
    follow: plan.follow,
    onWait: (w: ApiWait) => waits.waiting(w),
    ...(o.signal ? { signal: o.signal } : {}),
    ...(plan.types ? { types: plan.types } : {}),
  };
  const feed: Feed = plan.access.provider === 'stripe' ? stripeFeed(plan.access.api, ctx) : githubFeed(plan.access.api, ctx);
  const source = `${plan.access.label} at ${plan.access.apiBase}`;
  const nowMs = o.now ?? Date.now();
  const saved = readState(plan.stateFile, { provider: plan.access.provider, source, nowMs });
  const types = filterOf(plan.types);
  // A saved cursor wins (Kafka's rule for a consumer group's offset): --since and --from-now say
  // where a first run starts, and move a saved cursor only when --reset-cursor says so.
  const resuming = saved !== undefined && !plan.resetCursor;
  if (saved) {
    const said = checkFilter(plan.stateFile, saved, types, resuming);
    if (said) note(said);
  }
  const asked = plan.sinceMs !== undefined ? `--since ${o.since}` : o.fromNow ? '--from-now' : undefined;
  let start: FeedStart;
  let startKind: PullResult['start'];
  if (resuming) {
    start = { from: 'position', position: saved.position };
    startKind = 'resumed';
    if (asked)
      note(
        `resumed from the cursor saved in ${plan.stateFile}: ${asked} says where a first run starts; to move the saved cursor there, add --reset-cursor`,
      );
  } else if (plan.sinceMs !== undefined) {
    start = { from: 'time', at: plan.sinceMs };
    startKind = 'since';
  } else {
    start = { from: 'now' };
    startKind = 'now';
  }
  if (saved && !resuming && asked) note(`moved the cursor saved in ${plan.stateFile} to ${asked} (--reset-cursor)`);
  for (const n of await feed.start(start, nowMs)) note(n);
  waits.answered();
  const save = (position: FeedPosition) =>
    writeState(plan.stateFile, {
      version: 2,
      provider: plan.access.provider,
      source,
      types,
      position,
      updatedAt: new Date().toISOString(),
    });
  // The start is kept at once: a --from-now start, or a --since, holds even if nothing arrives before a crash.
  save(feed.position());

  const result: PullResult = {
    command: 'pull',
    ok: true,
    provider: plan.access.provider,
    apiBase: plan.access.apiBase,
    source: plan.access.label,
    to: plan.target.kind === 'url' ? displayUrl(plan.target.url) : displayTarget(plan.target.inbox),
    into: plan.target.kind === 'url' ? 'receiver' : 'inbox',
    stateFile: plan.stateFile,
    start: startKind,
    follow: plan.follow,
    ...(plan.target.kind === 'url' ? { timing: plan.target.timing } : {}),
    delivered: 0,
    stored: 0,
    duplicates: 0,
    skipped: [],
    gone: [],
    apiRequests: 0,
    interrupted: false,
    notes,
    elapsedMs: 0,
  };
  o.onStart?.({
    provider: result.provider,
    source: result.source,
    to: result.to,
    stateFile: result.stateFile,
    start: result.start,
    follow: result.follow,
    ...(result.timing ? { timing: result.timing } : {}),
  });
  const emit = (r: PulledRecord) => o.onEvent?.(r);
  const status = (phase: PullStatus['phase'], waiting: number) => {
    const s = feed.stats();
    o.onStatus?.({
      phase,
      delivered: result.delivered + result.stored,
      waiting,
      requests: s.requests,
      ...(s.budget ? { budget: s.budget } : {}),
    });
  };

  const sink = plan.target.kind === 'inbox' ? await openInbox(resolveTarget(plan.target.inbox), { create: false }) : undefined;
  // Reads that gave nothing yet said "more": a feed that keeps saying so is waited on like an idle one, never spun on.
  let idle = 0;
  try {
    for (;;) {
      if (o.signal?.aborted) break;
      status(result.held ? 'held' : 'polling', 0);
      let batch: Awaited<ReturnType<Feed['next']>>;
      try {
        batch = await feed.next(PULL_DEFAULTS.batch);
      } catch (err) {
        if (o.signal?.aborted) break;
        throw err;
      }
      waits.answered();
      for (const g of batch.gone) {
        const r: PulledRecord = { at: new Date().toISOString(), id: g.id, type: g.type, created: 0, outcome: 'gone', error: g.error };
        result.gone.push(r);
        emit(r);
      }
      if (batch.gone.length) save(feed.position());
      if (batch.events.length > 0) {
        status('catching up', batch.events.length);
        const outcome = sink
          ? await putAll(sink, plan.access.provider, batch.events, feed, save, result, emit)
          : await deliverAll(plan, batch.events, feed, save, result, emit, o);
        if (outcome === 'held') {
          feed.rewind();
          if (!plan.follow) break;
        } else {
          delete result.held;
          idle = 0;
          if (batch.more) continue;
        }
      } else if (batch.more && (batch.gone.length > 0 || ++idle <= PULL_DEFAULTS.emptyReads)) continue;
      idle = 0;
      if (!plan.follow) break;
      if (!(await sleep(plan.intervalMs, o.signal))) break;
    }
  } finally {
    await sink?.close();
  }
  result.interrupted = o.signal?.aborted === true;
  result.apiRequests = feed.stats().requests;
  result.ok = result.held === undefined && result.skipped.length === 0 && result.unfinished === undefined;
  result.elapsedMs = Math.round(performance.now() - started);
  return result;
}

type Target =
  | { kind: 'url'; url: URL; provider: Provider; secrets: string[]; timing: Timing; concurrency: number }
  | { kind: 'inbox'; inbox: string };

interface Plan {
  access: ReturnType<typeof resolveAccess>;
  apiName: string;
  target: Target;
  follow: boolean;
  intervalMs: number;
  stateFile: string;
  skipFailed: boolean;
  /** --since, parsed once: where a first run starts (or, with --reset-cursor, where the cursor moves). */
  sinceMs?: number;
  resetCursor: boolean;
  /** --type, checked once. */
  types?: string[];
}

function validate(o: PullOptions): Plan {
  const access = resolveAccess(o, 'pull');
  if (!!o.to === !!o.toInbox) throw new UsageError('say where the events go: --to URL (a receiver) or --to-inbox FILE|URL (one)');
  if (o.since !== undefined && o.fromNow) throw new UsageError('--since and --from-now both say where to start: choose one');
  if (o.resetCursor && o.since === undefined && !o.fromNow)
    throw new UsageError('--reset-cursor moves the saved cursor: say where with --since TIME (2h, an ISO time) or --from-now');
  const types = eventTypes(o.types, access.provider);
  const secrets = stringsOption(o.secrets, 'secrets') ?? [];
  const sinceMs = o.since !== undefined ? parseTime(o.since, '--since', o.now ?? Date.now()) : undefined;
  let target: Target;
  if (o.to) {
    const url = parseUrl(o.to, '--to');
    const signer = resolveSigner({ provider: access.provider, secrets });
    const timing = resolveTimingFlags(signer.provider, o);
    const concurrency = parseIntFlag(o.concurrency, '--concurrency', 1, 100, PULL_DEFAULTS.concurrency);
    target = { kind: 'url', url, provider: signer.provider, secrets: signer.secrets, timing, concurrency };
  } else {
    if (secrets.length) throw new UsageError('--secret signs what --to delivers: --to-inbox stores the events unsigned');
    for (const [flag, given] of [
      ['--profile', o.profile],
      ['--timeout', o.timeout],
      ['--retry-delays', o.retryDelays],
      ['--time-scale', o.timeScale],
      ['--delay-scale', o.delayScale],
      ['--scale-timeout', o.scaleTimeout || undefined],
      ['--concurrency', o.concurrency],
    ] as const)
      if (given !== undefined)
        throw new UsageError(`${flag} shapes deliveries to --to: --to-inbox puts each event straight into the inbox`);
    target = { kind: 'inbox', inbox: o.toInbox as string };
  }
  if (o.interval !== undefined && !o.follow) throw new UsageError('--interval is the wait between polls of --follow: give --follow too');
  const intervalMs = resolveInterval(o.interval, access.provider);
  const cwd = o.cwd ?? process.cwd();
  const stateFile = o.state ?? defaultStateFile(cwd, access.provider, access.api.apiBase, access.label);
  return {
    access,
    apiName: access.provider === 'stripe' ? 'the Stripe API' : 'the GitHub API',
    target,
    follow: o.follow === true,
    intervalMs,
    stateFile,
    skipFailed: o.skipFailed === true,
    resetCursor: o.resetCursor === true,
    ...(sinceMs !== undefined ? { sinceMs } : {}),
    ...(types ? { types } : {}),
  };
}

function resolveInterval(value: string | number | undefined, provider: 'stripe' | 'github'): number {
  if (value === undefined) return PULL_DEFAULTS.intervalMs[provider];
  const ms = typeof value === 'number' ? value : parseDuration(value, '--interval');
  if (!(ms >= 100)) throw new UsageError(`--interval ${value}: poll at most ten times a second (100ms or more)`);
  return ms;
}

/**
 * Deliver a batch in order through send's engine; the position moves past each event as soon as
 * it (and every event before it) was acknowledged. A failure holds the position there — the
 * events after it are not started — unless --skip-failed.
 */
async function deliverAll(
  plan: Plan,
  events: PulledEvent[],
  feed: Feed,
  save: (p: FeedPosition) => void,
  result: PullResult,
  emit: (r: PulledRecord) => void,
  o: PullOptions,
): Promise<'done' | 'held'> {
  const target = plan.target as Extract<Target, { kind: 'url' }>;
  const settled: (DeliveryRecord | undefined)[] = events.map(() => undefined);
  const records: (PulledRecord | undefined)[] = events.map(() => undefined);
  let next = 0;
  let held = false;
  // A state write that fails (a full disk) inside the engine's callback must not throw there (it
  // would never settle): it stops the sending, and is thrown once the engine has returned.
  let saveError: unknown;
  const stop = new AbortController();
  const forward = () => stop.abort();
  if (o.signal?.aborted) stop.abort();
  else o.signal?.addEventListener('abort', forward, { once: true });
  const moveOn = () => {
    // The position moves only over a prefix of final events: never past one not yet answered.
    while (next < events.length && settled[next] !== undefined && !held) {
      const d = settled[next] as DeliveryRecord;
      const e = events[next] as PulledEvent;
      if (!d.met && !plan.skipFailed) {
        // The first failure in order holds the cursor (with --concurrency, a later one may have failed first).
        held = true;
        const r = records[next];
        if (r) result.held = r;
        break;
      }
      feed.advance(e);
      save(feed.position());
      next++;
    }
  };
  try {
    await runDeliveries({
      provider: target.provider,
      secrets: target.secrets,
      url: target.url,
      timing: target.timing,
      expectation: parseExpectation('2xx'),
      events: {
        make: (seq) => {
          const e = events[seq] as PulledEvent;
          return { rawBody: e.body, deliveryId: e.id, eventType: e.type };
        },
        label: () => plan.access.provider,
      },
      count: events.length,
      concurrency: target.concurrency,
      duplicates: 1,
      extraHeaders: [],
      haltOnFailure: !plan.skipFailed,
      maxUnfinished: target.concurrency,
      signal: stop.signal,
      ...(o.onRetry ? { onRetryScheduled: o.onRetry } : {}),
      onDelivery: (d) => {
        const e = events[d.seq] as PulledEvent;
        const last = d.attempts.at(-1);
        const r: PulledRecord = {
          at: new Date().toISOString(),
          id: e.id,
          type: e.type,
          created: e.created,
          outcome: d.met ? 'delivered' : d.outcome === 'interrupted' ? 'failed' : plan.skipFailed ? 'skipped' : 'failed',
          ...(d.finalStatus !== undefined ? { status: d.finalStatus } : {}),
          ...(d.finalStatus === undefined && last?.error ? { error: last.error } : {}),
          attempts: d.attempts.length,
          ...(last ? { latencyMs: Math.round(last.latencyMs) } : {}),
        };
        if (d.outcome === 'interrupted') {
          // Ctrl-C mid-delivery: neither delivered nor failed; the position stays, and the run says so.
          if (d.attempts.length > 0 && result.unfinished === undefined) result.unfinished = r;
          return;
        }
        settled[d.seq] = d;
        records[d.seq] = r;
        if (d.met) result.delivered++;
        else if (plan.skipFailed) result.skipped.push(r);
        emit(r);
        if (saveError !== undefined) return;
        try {
          moveOn();
        } catch (err) {
          saveError = err;
          stop.abort();
        }
      },
    });
  } finally {
    o.signal?.removeEventListener('abort', forward);
  }
  if (saveError !== undefined) throw saveError;
  return held ? 'held' : 'done';
}

/** --to-inbox: each event put as pending (origin: pull), in order; the position moves once the put has committed. */
async function putAll(
  inbox: Inbox,
  source: string,
  events: PulledEvent[],
  feed: Feed,
  save: (p: FeedPosition) => void,
  result: PullResult,
  emit: (r: PulledRecord) => void,
): Promise<'done'> {
  for (const e of events) {
    const t0 = performance.now();
    const put = await inbox.put({
      source,
      deliveryId: e.id,
      eventType: e.type,
      body: e.body,
      headers: { ...e.headers, 'x-hookdrill-origin': 'pull' },
      receivedAt: Date.now(),
    });
    feed.advance(e);
    save(feed.position());
    if (put.inserted) result.stored++;
    else result.duplicates++;
    emit({
      at: new Date().toISOString(),
      id: e.id,
      type: e.type,
      created: e.created,
      outcome: put.inserted ? 'stored' : 'duplicate',
      latencyMs: Math.round(performance.now() - t0),
    });
  }
  return 'done';
}

/** A wait said once when it starts (not on every retry of it), and its end said when the API answers again. */
class WaitNotes {
  private current: ApiWait['kind'] | undefined;
  constructor(
    private readonly api: string,
    private readonly note: (text: string) => void,
  ) {}
  waiting(w: ApiWait): void {
    if (this.current === w.kind) return;
    this.current = w.kind;
    const secs = Math.max(1, Math.round(w.ms / 1000));
    this.note(
      w.kind === 'rate-limited'
        ? `${this.api} ${w.detail}: waiting ${secs} s, until ${new Date(Date.now() + w.ms).toISOString().slice(11, 19)}Z`
        : `${this.api} ${w.detail}: trying again, from the cursor, with backoff`,
    );
  }
  answered(): void {
    if (this.current === undefined) return;
    this.current = undefined;
    this.note(`${this.api} answers again`);
  }
}
