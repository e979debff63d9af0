import { mayResend } from '../providers/contract.js';
import { resolveTarget } from '../inbox/open.js';
import { UsageError } from '../util/errors.js';
import { compileFixture, resolveFixtures } from '../fixtures/index.js';
import { resolveSigner, resolveTimingFlags } from '../delivery/signer.js';
import type { Timing } from '../delivery/timing.js';
import { parseDuration } from '../util/duration.js';
import { displayUrl, hostAndPort, parseIntFlag, parseUrl } from '../util/options.js';
import { maskSecrets } from '../util/secrets.js';
import { ReceiverStartError, Supervisor } from '../harness/supervisor.js';
import type { KillSignal } from '../harness/supervisor.js';
import { runIdsCommand, storedCounts } from '../harness/store-probe.js';
import { PowerCutDisk } from './power-cut.js';
import { claimCounts } from './settle.js';
import type { StoreProbe } from '../harness/store-probe.js';
import { account } from './accounting.js';
import type { ChaosRound, ChaosTotals, RoundKill, RowState } from './accounting.js';
import { ChaosSender } from './sender.js';
import type { ChaosDelivery } from './sender.js';
import { waitForRows } from './settle.js';
import { CHAOS_DEFAULTS } from './defaults.js';
import { sleep } from '../util/wait.js';
import { envOption, stringOption, stringsOption } from '../util/shapes.js';
import type { Strings } from '../util/shapes.js';
import type { ProviderName } from '../providers/index.js';
import type { SettleWait } from './settle.js';
import { serveKeys } from '../delivery/key-server.js';

export interface ChaosOptions {
  receiver?: string;
  url?: string;
  provider?: ProviderName | (string & {});
  secrets?: Strings;
  inbox?: string;
  stored?: string;
  processed?: string;
  fixtures?: Strings;
  /** More environment for the receiver (PORT, and DATA_DIR with powerCut, are chaos's own). */
  env?: Readonly<Record<string, string>>;
  profile?: string;
  events?: string | number;
  concurrency?: string | number;
  rounds?: string | number;
  killAfter?: string | number;
  killPoint?: string;
  /** How the receiver is killed: 'KILL' (the default), or 'TERM' (then KILL after 2 s if ignored). The CLI's --signal. */
  killSignal?: 'KILL' | 'TERM' | 'SIGKILL' | 'SIGTERM';
  readyTimeout?: string | number;
  settle?: string;
  /** With --inbox and --processed: how long to wait for rows still leased or pending after --settle. */
  settleMax?: string;
  /** Scales the retry delays; the provider's timeout stays its own unless scaleTimeout. */
  timeScale?: string | number;
  /** Scale the provider's timeout by timeScale too (never below 1 s): stricter than the provider. */
  scaleTimeout?: boolean;
  /** After each restart, re-send this many of the last round's acknowledged deliveries (default 5; 0: none). */
  duplicates?: string | number;
  /** The receiver's handler is idempotent by design: processing a delivery twice does not fail the run. */
  allowReprocess?: boolean;
  /**
   * The receiver keeps its data in this directory (given to it as DATA_DIR): chaos mounts a fresh
   * filesystem there and each kill becomes a power cut (root and loop devices needed).
   */
  powerCut?: string;
  random?: () => number;
  onRound?: (round: ChaosRound) => void;
  /** Told when chaos waits for rows still leased by a killed worker (the CLI says so on stderr). */
  onSettleWait?: (wait: SettleWait) => void;
  /** Aborting it stops the run after the round in hand (its receiver killed) and reports what was done. */
  signal?: AbortSignal;
}

export type { ChaosRound, ChaosTotals } from './accounting.js';
export type { SettleWait } from './settle.js';

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
  /**
   * What the kills can judge: `power-cut` (what reached the disk), or `process-kill` (what reached
   * the operating system: an unsynced write survives a process kill, and not a power cut).
   */
  durability: 'power-cut' | 'process-kill';
  /** --allow-reprocess: a delivery processed twice was not held against the run. */
  allowReprocess: boolean;
  receiverStarts: number;
  /** How long chaos waited, after --settle, for rows still leased or pending (--inbox with --processed). */
  settleWaitMs?: number;
  /** Stopped early by an interrupt: the rounds done are reported, and the run does not pass. */
  interrupted: boolean;
  /** The rounds asked for (--rounds): more than `rounds` holds where the run was interrupted. */
  roundsPlanned: number;
  /** Why the run failed, one line each (lost, refused, never processed, nothing acknowledged). */
  problems: string[];
  /** Facts of the provider the run met, not findings (a provider that never re-sends loses what was in flight at a kill). */
  notes: string[];
  rounds: ChaosRound[];
  totals: ChaosTotals;
  elapsedMs: number;
}

const MAX_RETRIES = 3;

export async function run(o: ChaosOptions): Promise<ChaosResult> {
  const started = performance.now();
  if (!o.receiver) throw new UsageError('--receiver is required: the shell command that starts your receiver');
  const url = parseUrl(stringOption(o.url, 'url'), '--url');
  const { provider, secrets } = resolveSigner(o);
  if (o.inbox && o.stored) throw new UsageError('give one of --inbox and --stored, not both');
  if (!o.inbox && !o.stored) throw new UsageError('say where the receiver keeps deliveries: --inbox FILE or --stored "<command>"');
  // A JWT provider's public keys, where the receiver fetches them (test mode: delivery/key-server.ts).
  await serveKeys(provider, secrets);
  const probe: StoreProbe = o.inbox
    ? { kind: 'inbox', target: resolveTarget(o.inbox), source: provider.name, aliases: provider.otherIds }
    : { kind: 'command', command: o.stored as string, aliases: provider.otherIds };
  const d = CHAOS_DEFAULTS;
  const events = parseIntFlag(o.events, '--events', 1, 100_000, d.events);
  const concurrency = parseIntFlag(o.concurrency, '--concurrency', 1, 1_000, d.concurrency);
  const rounds = parseIntFlag(o.rounds, '--rounds', 1, 10_000, d.rounds);
  const killAfter = parseIntFlag(o.killAfter, '--kill-after', 1, events, d.killAfter);
  const killPoint = o.killPoint ?? d.killPoint;
  if (killPoint !== 'after-ack' && killPoint !== 'random') throw new UsageError(`--kill-point ${killPoint}: expected after-ack or random`);
  const signalName = String(stringOption(o.killSignal, 'killSignal') ?? d.signal)
    .toUpperCase()
    .replace(/^SIG/, '');
  if (signalName !== 'KILL' && signalName !== 'TERM') throw new UsageError(`--signal ${o.killSignal}: expected KILL or TERM`);
  const signal: KillSignal = signalName === 'KILL' ? 'SIGKILL' : 'SIGTERM';
  const duplicates = mayResend(provider.contract) ? parseIntFlag(o.duplicates, '--duplicates', 0, 10_000, d.duplicates) : 0;
  if (o.powerCut !== undefined && o.inbox && /^(postgres(ql)?|rediss?):\/\//.test(o.inbox))
    throw new UsageError("--power-cut cuts the power of a local disk: the store behind --inbox is a server's, not the receiver's");
  const readyTimeoutMs = o.readyTimeout !== undefined ? parseDuration(o.readyTimeout, '--ready-timeout') : d.readyTimeoutMs;
  const settleMs = o.settle !== undefined ? parseDuration(o.settle, '--settle') : d.settleMs;
  const settleMaxMs = o.settleMax !== undefined ? parseDuration(o.settleMax, '--settle-max') : d.settleMaxMs;
  const scaled = resolveTimingFlags(provider, { profile: o.profile, timeScale: o.timeScale, scaleTimeout: o.scaleTimeout }, d.timeScale);
  // At most three retries per delivery: enough to get through a restart, and a receiver that keeps
  // refusing cannot stretch a chaos run over the provider's whole schedule (Stripe's is 3 days).
  // A provider that never retries (GitHub: redelivery is manual) gets one redelivery right after
  // the restart, as a person would press Redeliver: what the kill cut off is still put to the test.
  // A provider that never sends a request twice (Discord's interactions, its contract) gets none:
  // re-sending what it never re-sends would let a receiver that loses work score "0 lost".
  const never = !mayResend(provider.contract);
  const retries = scaled.retryDelaysMs.slice(0, MAX_RETRIES);
  const timing: Timing = { ...scaled, retryDelaysMs: retries.length > 0 ? retries : never ? [] : [0] };
  const fixtures = resolveFixtures(stringsOption(o.fixtures, 'fixtures') ?? [], provider.name);
  const factories = fixtures.map((f) => compileFixture(provider, f, []));
  const random = o.random ?? Math.random;
  const { host, port } = hostAndPort(url);
  const disk = o.powerCut !== undefined ? await PowerCutDisk.create(o.powerCut) : undefined;
  const env: Record<string, string> = { ...envOption(o.env), PORT: String(port), ...(disk ? { DATA_DIR: disk.dir } : {}) };
  const mask = (text: string) => maskSecrets(text, secrets);

  const supervisor = new Supervisor({ command: o.receiver, host, port, env, readyTimeoutMs });
  const sender = new ChaosSender({ provider, secrets, url, timing, concurrency, ...(o.signal ? { signal: o.signal } : {}) });
  const interrupted = () => o.signal?.aborted === true;
  const tracked: ChaosDelivery[] = [];
  const copies: { round: number; id: string; answer: string }[] = [];
  /** After a restart: copies of what the round before had acknowledged, as a provider re-sends. */
  const resendAcknowledged = async (round: number) => {
    // Only copies of what the receiver already holds: a copy of one it lost would be a second
    // chance to store it, and would hide the loss the round's kill is there to show.
    const acked = tracked.filter((t) => t.round === round && t.acked);
    if (duplicates === 0 || acked.length === 0) return;
    const held = await storedCounts(
      probe,
      acked.map((t) => t.id),
      env,
    ).catch((err: unknown) => {
      throw err instanceof UsageError ? new UsageError(mask(err.message)) : err;
    });
    const picked = acked.filter((_, i) => (held[i] ?? 0) > 0).slice(0, duplicates);
    if (picked.length === 0) return;
    const answers = await sender.deliverCopies(picked);
    for (const [i, t] of picked.entries()) copies.push({ round, id: t.id, answer: answers[i] as string });
  };
  const kills: RoundKill[] = [];
  /** Rounds whose sending the interrupt cut short: nothing in them is judged. */
  const cutRounds = new Set<number>();
  let settleWaitMs: number | undefined;
  let rows: Map<string, RowState> | undefined;
  // What the scheme has the receiver fetch (SNS's signing certificate), served while the rounds run.
  let served: Awaited<ReturnType<NonNullable<typeof provider.serve>>> | undefined;

  try {
    try {
      served = await provider.serve?.({ share: true });
      await sender.warmUp();
      await supervisor.start();
      let lastPhaseMs: number | undefined;
      for (let round = 1; round <= rounds && !interrupted(); round++) {
        if (!supervisor.running) await supervisor.start();
        await sender.retryUnacknowledged(tracked);
        if (round > 1) await resendAcknowledged(round - 1);

        const batch: ChaosDelivery[] = Array.from({ length: events }, (_, i) => {
          const event = (factories[i % factories.length] as (typeof factories)[number]).make(Date.now());
          return { id: event.deliveryId, round, acked: false, answers: [], event, nextAttempt: 1, lastReason: undefined };
        });
        tracked.push(...batch);
        let acks = 0;
        let ackAt: number | undefined;
        let killSentMs: number | undefined;
        let killed = false;
        let cut: Promise<void> | undefined;
        /**
         * Signal first, record after: nothing may stand between the ack and the signal. The time
         * taken is to the kill system call: once it is made the signal is pending and the receiver
         * runs no more of its code, though on a busy machine the call itself may return late
         * (the dying receiver's threads are woken and scheduled first).
         */
        const killNow = (answeredAt?: number) => {
          if (killed) return;
          killed = true;
          const sentAt = performance.now();
          if (disk) {
            // The power goes: frozen at once (no more writes), the disk copied as it is, then killed.
            supervisor.kill('SIGSTOP');
            cut = disk.snapshot().finally(() => supervisor.kill('SIGKILL'));
          } else supervisor.kill(signal);
          if (answeredAt !== undefined) {
            ackAt = answeredAt;
            killSentMs = sentAt - answeredAt;
          }
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
        // First attempts only: the retries come after the restart, as a real sender's would.
        await sender.deliverAll(batch, {
          retries: false,
          onAnswer: (status) => {
            if (status < 200 || status >= 300) return;
            acks++;
            if (killPoint === 'after-ack' && acks === killAfter) killNow(performance.now());
          },
        });
        lastPhaseMs = performance.now() - phaseStarted;
        if (interrupted()) cutRounds.add(round);
        await randomKill;
        const killedInRound = killed;
        killNow(); // fewer than K acks: end the round with the kill all the same
        // KILL cannot be ignored; a TERM the receiver ignores is followed by KILL after 2 s.
        let escalated = false;
        if (cut) {
          await cut;
          await supervisor.waitExit();
          await disk?.restore();
        } else if (signal === 'SIGTERM') ({ escalated } = await supervisor.awaitGone(2_000));
        else await supervisor.waitExit();
        kills.push({
          round,
          killed: killedInRound,
          acknowledgedBeforeKill: batch.filter((t) => t.acked).length,
          ...(killSentMs !== undefined ? { killSentMs: round2(killSentMs) } : {}),
          ...(ackAt !== undefined ? { killLandedMs: round2(performance.now() - ackAt) } : {}),
          ...(signal === 'SIGTERM' ? { escalated } : {}),
        });
      }
      // Back up once more, let the sender's retries through, let the receiver's work settle
      // (interrupted: report what the rounds done left in the store, now).
      if (!interrupted()) {
        await supervisor.start();
        await sender.retryUnacknowledged(tracked);
        await resendAcknowledged(kills.length);
        await sleep(settleMs, o.signal);
      }
      if (probe.kind === 'inbox' && o.processed && !interrupted()) {
        const waited = await waitForRows(
          probe.target,
          probe.source,
          tracked.map((t) => t.id),
          {
            maxMs: settleMaxMs,
            ...(o.signal ? { signal: o.signal } : {}),
            ...(o.onSettleWait ? { onWait: o.onSettleWait } : {}),
          },
        );
        settleWaitMs = waited.waitedMs;
        rows = waited.rows;
      }
    } catch (err) {
      // The receiver's stderr, quoted in the error, may echo a secret from its command line.
      if (err instanceof ReceiverStartError) throw new ReceiverStartError(mask(err.message));
      throw err;
    }

    // The probes' own error output is the user's, and may echo a secret from their command line.
    const masked = <T>(p: Promise<T>) =>
      p.catch((err: unknown) => {
        throw err instanceof UsageError ? new UsageError(mask(err.message)) : err;
      });
    const ids = tracked.map((t) => t.id);
    const counts = await masked(storedCounts(probe, ids, env));
    const stored = new Set(ids.filter((_, i) => (counts[i] ?? 0) > 0));
    const storedTimes = new Map(ids.map((id, i) => [id, counts[i] ?? 0] as const).filter(([, n]) => n > 1));
    const processedList = o.processed ? await masked(runIdsCommand(o.processed, '--processed', env)) : undefined;
    let processed: Map<string, number> | undefined;
    if (processedList) {
      processed = new Map();
      for (const id of processedList) processed.set(id, (processed.get(id) ?? 0) + 1);
    }
    // A delivery processed twice is explained where the inbox shows its row claimed twice (a
    // killed worker's lease ran out); only the inbox can show that.
    const twice = processed ? ids.filter((id) => (processed?.get(id) ?? 0) > 1) : [];
    const claims = probe.kind === 'inbox' && twice.length > 0 ? await claimCounts(probe.target, probe.source, twice) : undefined;
    // Interrupted: a delivery not acknowledged that was still due a retry (after a restart that
    // never came) was not given up on by the sender, so it is not judged either.
    const stillDue = (t: ChaosDelivery) => !t.acked && t.nextAttempt <= timing.retryDelaysMs.length + 1;
    const verdict = account({
      ...(interrupted() ? { interrupted: { rounds: cutRounds, deliveries: new Set(tracked.filter(stillDue).map((t) => t.id)) } } : {}),
      deliveries: tracked,
      kills,
      stored,
      storedTimes,
      duplicates: copies,
      ...(claims ? { claims } : {}),
      allowReprocess: o.allowReprocess === true,
      ...(processed ? { processed } : {}),
      ...(rows ? { rows } : {}),
      target: { https: url.protocol === 'https:', timeoutMs: timing.timeoutMs },
      ...(never ? { neverResent: { title: provider.title, source: provider.contract.resends.source } } : {}),
    });
    for (const r of verdict.rounds) o.onRound?.(r);
    const unjudged = verdict.totals.unjudged?.length ?? 0;
    const problems = interrupted()
      ? [
          `interrupted in round ${kills.length} of ${rounds}: the ${unjudged} deliveries it had not finished with (sent in a round it cut short, or still due a retry) are not judged, neither lost nor refused; an interrupted run is no verdict`,
          ...verdict.problems,
        ]
      : verdict.problems;
    return {
      command: 'chaos',
      ok: problems.length === 0,
      interrupted: interrupted(),
      roundsPlanned: rounds,
      problems,
      notes: verdict.notes,
      provider: provider.name,
      url: displayUrl(url),
      receiver: mask(o.receiver),
      signal: signalName,
      killPoint,
      killAfter,
      timing,
      durability: disk ? 'power-cut' : 'process-kill',
      allowReprocess: o.allowReprocess === true,
      receiverStarts: supervisor.starts,
      ...(settleWaitMs !== undefined ? { settleWaitMs } : {}),
      rounds: verdict.rounds,
      totals: verdict.totals,
      elapsedMs: Math.round(performance.now() - started),
    };
  } finally {
    await supervisor.close(2_000);
    await sender.close();
    await disk?.close();
    await served?.close();
  }
}

const round2 = (ms: number) => Math.round(ms * 1000) / 1000;
