import { resolve as resolvePath } from 'node:path';
import { UsageError } from '../errors.js';
import { compileFixture, resolveFixtures } from '../fixtures.js';
import type { PreparedEvent } from '../fixtures.js';
import { resolveSigner, resolveTimingFlags } from '../signing.js';
import type { RetryReason } from '../providers/index.js';
import { deliver } from '../delivery/deliver.js';
import type { AttemptRecord, DeliveryContext } from '../delivery/deliver.js';
import { parseExpectation } from '../delivery/expect.js';
import { Semaphore } from '../delivery/semaphore.js';
import type { Timing } from '../delivery/timing.js';
import { TargetDispatcher, warmUpHttpClient } from '../delivery/dispatcher.js';
import { parseDuration } from '../duration.js';
import { displayUrl, parseIntFlag, parseUrl } from '../options.js';
import { ReceiverStartError, Supervisor } from '../chaos/supervisor.js';
import type { KillSignal } from '../chaos/supervisor.js';
import { runIdsCommand, storedIds } from '../chaos/probe.js';
import type { StoreProbe } from '../chaos/probe.js';

export interface ChaosOptions {
  receiver?: string;
  url?: string;
  provider?: string;
  secrets?: string[];
  inbox?: string;
  stored?: string;
  processed?: string;
  fixtures?: string[];
  profile?: string;
  events?: string | number;
  concurrency?: string | number;
  rounds?: string | number;
  killAfter?: string | number;
  killPoint?: string;
  signal?: string;
  readyTimeout?: string;
  settle?: string;
  timeScale?: string | number;
  random?: () => number;
  onRound?: (round: ChaosRound) => void;
}

export interface ChaosRound {
  round: number;
  sent: number;
  acknowledged: number;
  /** Whether the receiver was killed in this round (not when it never gave K acks). */
  killed: boolean;
  /** From the K-th 2xx arriving to the signal being sent to the receiver's process group. */
  killSentMs?: number;
  /** From the K-th 2xx arriving to no process of the group being left alive (as observed). */
  killLandedMs?: number;
  /** Of the acknowledged, how many were acknowledged only by a retry after the restart. */
  acknowledgedAfterRestart: number;
  /** --signal TERM was ignored and hookdrill had to SIGKILL. */
  escalated?: boolean;
  stored: number;
  /** Acknowledged but not stored: the receiver answered 200 and then lost the event. */
  lost: string[];
  /** Stored though never acknowledged (harmless: the sender's retry is a duplicate). */
  unacknowledgedStored: number;
  processed?: number;
  processedTwice?: string[];
  /** With --processed: acknowledged but never processed, even after settling. */
  notProcessed?: string[];
}

export interface ChaosResult {
  command: 'chaos';
  ok: boolean;
  provider: string;
  url: string;
  /** The receiver command, with any secret in it masked. */
  receiver: string;
  signal: 'KILL' | 'TERM';
  killPoint: 'after-ack' | 'random';
  killAfter: number;
  timing: Timing;
  receiverStarts: number;
  /** Why the run proves nothing or failed beyond lost ids (e.g. nothing was acknowledged). */
  problems: string[];
  rounds: ChaosRound[];
  totals: Omit<ChaosRound, 'round' | 'killSentMs' | 'killLandedMs' | 'escalated' | 'killed'> & { kills: number };
  elapsedMs: number;
}

const MAX_RETRIES = 3;

interface Tracked {
  event: PreparedEvent;
  round: number;
  attempts: AttemptRecord[];
  nextAttempt: number;
  lastReason: RetryReason | undefined;
  acked: boolean;
}

export async function run(o: ChaosOptions): Promise<ChaosResult> {
  const started = performance.now();
  if (!o.receiver) throw new UsageError('--receiver is required: the shell command that starts your receiver');
  const url = parseUrl(o.url, '--url');
  const { provider, secrets } = resolveSigner(o);
  if (o.inbox && o.stored) throw new UsageError('give one of --inbox and --stored, not both');
  if (!o.inbox && !o.stored) throw new UsageError('say where the receiver keeps deliveries: --inbox FILE or --stored "<command>"');
  const probe: StoreProbe = o.inbox ? { kind: 'inbox', path: resolvePath(o.inbox), source: provider.name } : { kind: 'command', command: o.stored as string };
  const events = parseIntFlag(o.events, '--events', 1, 100_000, 20);
  const concurrency = parseIntFlag(o.concurrency, '--concurrency', 1, 1_000, 8);
  const rounds = parseIntFlag(o.rounds, '--rounds', 1, 10_000, 1);
  const killAfter = parseIntFlag(o.killAfter, '--kill-after', 1, events, 1);
  const killPoint = o.killPoint ?? 'after-ack';
  if (killPoint !== 'after-ack' && killPoint !== 'random') throw new UsageError(`--kill-point ${killPoint}: expected after-ack or random`);
  const signalName = (o.signal ?? 'KILL').toUpperCase().replace(/^SIG/, '');
  if (signalName !== 'KILL' && signalName !== 'TERM') throw new UsageError(`--signal ${o.signal}: expected KILL or TERM`);
  const signal: KillSignal = signalName === 'KILL' ? 'SIGKILL' : 'SIGTERM';
  const readyTimeoutMs = parseDuration(o.readyTimeout ?? '10s', '--ready-timeout');
  const settleMs = parseDuration(o.settle ?? '1s', '--settle');
  const scaled = resolveTimingFlags(provider, { profile: o.profile, timeScale: o.timeScale }, 0.01);
  // At most three retries per delivery: enough to get through a restart, and a receiver that keeps
  // refusing cannot stretch a chaos run over the provider's whole schedule (Stripe's is 3 days).
  const timing: Timing = { ...scaled, retryDelaysMs: scaled.retryDelaysMs.slice(0, MAX_RETRIES) };
  const fixtures = resolveFixtures(o.fixtures ?? [], provider.name);
  const factories = fixtures.map((f) => compileFixture(provider, f, []));
  const random = o.random ?? Math.random;
  const port = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
  const env = { PORT: String(port) };

  const supervisor = new Supervisor({ command: o.receiver, host: url.hostname.replace(/^\[|\]$/g, ''), port, env, readyTimeoutMs });
  const mask = (text: string) => secrets.reduce((t, s) => (s ? t.split(s).join('***') : t), text);
  await warmUpHttpClient();
  const dispatcher = new TargetDispatcher(url.origin, concurrency);
  const slots = new Semaphore(concurrency);
  const runStartMs = performance.now();
  const tracked: Tracked[] = [];
  const reports: Omit<ChaosRound, 'stored' | 'lost' | 'unacknowledgedStored'>[] = [];

  const context = (onAttempt?: DeliveryContext['onAttempt'], t: Timing = timing): DeliveryContext => ({
    provider,
    secrets,
    url,
    timing: t,
    expectation: parseExpectation('2xx'),
    extraHeaders: [],
    dispatcher,
    slots,
    runStartMs,
    ...(onAttempt ? { onAttempt } : {}),
  });

  /** Deliver items (each from its next attempt on), all at once within the concurrency limit. */
  const deliverAll = async (items: Tracked[], ctx: DeliveryContext) => {
    await Promise.all(
      items.map(async (item, i) => {
        await slots.acquire();
        const record = await deliver(
          item.event,
          {
            seq: i,
            copy: 1,
            fixture: item.event.eventType,
            firstAttempt: item.nextAttempt,
            ...(item.lastReason ? { lastReason: item.lastReason } : {}),
          },
          ctx,
        );
        item.attempts.push(...record.attempts);
        item.nextAttempt += record.attempts.length;
        item.lastReason = record.attempts.at(-1)?.reason;
        if (record.outcome === 'acknowledged') item.acked = true;
      }),
    );
  };

  /** After a restart: the unacknowledged get the rest of their provider's schedule. */
  const retryUnacknowledged = async () => {
    const due = tracked.filter((t) => !t.acked && t.nextAttempt <= timing.retryDelaysMs.length + 1);
    if (due.length > 0) await deliverAll(due, context());
  };

  try {
    try {
      await supervisor.start();
      let lastPhaseMs: number | undefined;
      for (let round = 1; round <= rounds; round++) {
        if (!supervisor.running) await supervisor.start();
        await retryUnacknowledged();

        const batch: Tracked[] = Array.from({ length: events }, (_, i) => ({
          event: (factories[i % factories.length] as (typeof factories)[number]).make(Date.now()),
          round,
          attempts: [],
          nextAttempt: 1,
          lastReason: undefined,
          acked: false,
        }));
        tracked.push(...batch);
        let acks = 0;
        let killedAt: number | undefined;
        let killSentMs: number | undefined;
        const killNow = () => {
          if (killedAt !== undefined) return;
          killedAt = performance.now();
          supervisor.kill(signal);
          killSentMs = performance.now() - killedAt;
        };
        let randomKill: Promise<void> | undefined;
        const phaseStarted = performance.now();
        if (killPoint === 'random') {
          // A random moment within about as long as a round takes: the last round's send phase,
          // or ~20 ms per wave of requests on loopback for the first. It may land mid-request,
          // between requests, or after the last answer: every moment is fair game.
          const windowMs = lastPhaseMs ?? 20 * Math.ceil(events / concurrency);
          randomKill = new Promise((r) => setTimeout(() => r(killNow()), random() * windowMs));
        }
        const onAttempt: DeliveryContext['onAttempt'] = (attempt) => {
          if (attempt.status !== undefined && attempt.status >= 200 && attempt.status < 300) {
            acks++;
            if (killPoint === 'after-ack' && acks === killAfter) killNow();
          }
        };
        // First attempts only: the retries come after the restart, as a real sender's would.
        await deliverAll(batch, context(onAttempt, { ...timing, retryDelaysMs: [] }));
        lastPhaseMs = performance.now() - phaseStarted;
        await randomKill;
        const killed = killedAt !== undefined;
        if (!killed) killNow(); // fewer than K acks: end the round with the kill all the same
        const escalation = signal === 'SIGTERM' ? await escalate(supervisor) : (await supervisor.waitExit(), false);
        reports.push({
          round,
          sent: batch.length,
          acknowledged: batch.filter((t) => t.acked).length,
          killed,
          acknowledgedAfterRestart: 0,
          ...(killed && killPoint === 'after-ack'
            ? { killSentMs: Math.round((killSentMs ?? 0) * 100) / 100, killLandedMs: Math.round(performance.now() - (killedAt as number)) }
            : {}),
          ...(signal === 'SIGTERM' ? { escalated: escalation } : {}),
        });
      }
      // Back up once more, let the sender's retries through, let the receiver's work settle.
      await supervisor.start();
      await retryUnacknowledged();
      await new Promise((r) => setTimeout(r, settleMs));
    } catch (err) {
      if (err instanceof ReceiverStartError) throw new ReceiverStartError(mask(err.message));
      throw err;
    }

    const allIds = tracked.map((t) => t.event.deliveryId);
    // The probes' own error output is the user's, and may echo a secret from their command line.
    const masked = <T>(p: Promise<T>) =>
      p.catch((err: unknown) => {
        throw err instanceof UsageError ? new UsageError(mask(err.message)) : err;
      });
    const stored = await masked(storedIds(probe, allIds, env));
    const processedList = o.processed ? await masked(runIdsCommand(o.processed, '--processed', env)) : undefined;
    const processedCount = new Map<string, number>();
    for (const id of processedList ?? []) processedCount.set(id, (processedCount.get(id) ?? 0) + 1);

    const roundsOut: ChaosRound[] = reports.map((r) => {
      const mine = tracked.filter((t) => t.round === r.round);
      const ackedIds = mine.filter((t) => t.acked).map((t) => t.event.deliveryId);
      const out: ChaosRound = {
        ...r,
        acknowledgedAfterRestart: ackedIds.length - r.acknowledged,
        acknowledged: ackedIds.length, // including acks to retries after the restart
        stored: mine.filter((t) => stored.has(t.event.deliveryId)).length,
        lost: ackedIds.filter((id) => !stored.has(id)),
        unacknowledgedStored: mine.filter((t) => !t.acked && stored.has(t.event.deliveryId)).length,
      };
      if (processedList) {
        out.processed = mine.filter((t) => processedCount.has(t.event.deliveryId)).length;
        out.processedTwice = mine.map((t) => t.event.deliveryId).filter((id) => (processedCount.get(id) ?? 0) > 1);
        out.notProcessed = ackedIds.filter((id) => !processedCount.has(id));
      }
      o.onRound?.(out);
      return out;
    });

    const sum = (f: (r: ChaosRound) => number) => roundsOut.reduce((n, r) => n + f(r), 0);
    const totals: ChaosResult['totals'] = {
      sent: sum((r) => r.sent),
      acknowledged: sum((r) => r.acknowledged),
      acknowledgedAfterRestart: sum((r) => r.acknowledgedAfterRestart),
      kills: roundsOut.filter((r) => r.killed).length,
      stored: sum((r) => r.stored),
      lost: roundsOut.flatMap((r) => r.lost),
      unacknowledgedStored: sum((r) => r.unacknowledgedStored),
      ...(processedList
        ? {
            processed: sum((r) => r.processed ?? 0),
            processedTwice: roundsOut.flatMap((r) => r.processedTwice ?? []),
            notProcessed: roundsOut.flatMap((r) => r.notProcessed ?? []),
          }
        : {}),
    };
    const problems: string[] = [];
    if (totals.lost.length > 0) problems.push(`${totals.lost.length} acknowledged deliveries were lost`);
    if ((totals.notProcessed ?? []).length > 0) problems.push(`${totals.notProcessed?.length} acknowledged deliveries were never processed`);
    if (totals.acknowledged === 0) problems.push('the receiver acknowledged nothing, so nothing was tested (is the secret right?)');
    return {
      command: 'chaos',
      ok: problems.length === 0,
      problems,
      provider: provider.name,
      url: displayUrl(url),
      receiver: mask(o.receiver),
      signal: signalName,
      killPoint,
      killAfter,
      timing,
      receiverStarts: supervisor.starts,
      rounds: roundsOut,
      totals,
      elapsedMs: Math.round(performance.now() - started),
    };
  } finally {
    await supervisor.stop(2_000);
    await dispatcher.close();
  }
}

/** TERM was sent: give the receiver a moment to go, then KILL it; true when KILL was needed. */
async function escalate(supervisor: Supervisor): Promise<boolean> {
  const gone = await Promise.race([supervisor.waitExit().then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), 2_000))]);
  if (gone) return false;
  supervisor.kill('SIGKILL');
  await supervisor.waitExit();
  return true;
}
