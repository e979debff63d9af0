/*
 * The arithmetic of a chaos verdict, kept pure: what was sent, acknowledged, stored, lost and
 * processed, per round and in total, and which problems fail the run. Nothing here touches a
 * process, a socket or a clock, so every rule of the verdict has a plain unit test.
 */

import { count } from '../util/words.js';

/** One delivery as chaos followed it: each attempt's answer, and whether any was a 2xx. */
export interface TrackedDelivery {
  id: string;
  round: number;
  acked: boolean;
  /** Each attempt's answer, in order: an HTTP status ("200", "500") or a transport error ("refused"). */
  answers: string[];
}

/** What happened to the receiver in one round. */
export interface RoundKill {
  round: number;
  /** Whether the receiver was killed in this round (not when it never gave K acks). */
  killed: boolean;
  /** From the K-th 2xx arriving (the HTTP client's callback) to the kill system call for the receiver's group, in ms. */
  killSentMs?: number;
  /** From the K-th 2xx arriving to no process of the group being left alive (as observed), in ms. */
  killLandedMs?: number;
  /** --signal TERM was ignored and hookdrill had to SIGKILL. */
  escalated?: boolean;
  /** Acknowledged before the round's kill (the rest were acknowledged by retries after the restart). */
  acknowledgedBeforeKill: number;
}

/** Where a row the receiver holds stands, for acknowledged deliveries it has not processed. */
export interface RowState {
  status: 'pending' | 'working' | 'done' | 'dead';
  /** Pending: due at; working: the lease runs out at (unix ms). */
  until: number;
}

export interface ChaosRound {
  round: number;
  sent: number;
  acknowledged: number;
  killed: boolean;
  killSentMs?: number;
  killLandedMs?: number;
  /** Of the acknowledged, how many were acknowledged only by a retry after the restart. */
  acknowledgedAfterRestart: number;
  escalated?: boolean;
  /** Every attempt's answer in this round, counted: {"200": 18, "refused": 2}. */
  answers: Record<string, number>;
  stored: number;
  /** Held more than once (a --stored command printed them twice): a duplicate stored again. */
  storedTwice: string[];
  /** Copies of acknowledged deliveries chaos re-sent after the restart, as providers do (at least once). */
  duplicatesSent: number;
  /** Of those copies, the ones not answered 2xx: a duplicate must be acknowledged. */
  duplicatesRefused: string[];
  /** Acknowledged but not stored: the receiver answered 2xx and then lost the event. */
  lost: string[];
  /**
   * Never acknowledged, though the sender retried after the restart: the sender gives up on these
   * (stored or not), e.g. a receiver answering 500 to a duplicate of what it already holds.
   */
  refused: string[];
  /** Stored though never acknowledged: how many of `refused` the receiver holds all the same. */
  unacknowledgedStored: number;
  processed?: number;
  /** Processed more than once with no lease expiry to explain it (fails the run unless allowed). */
  processedTwice?: string[];
  /** Processed more than once after the row was claimed again (a killed worker's lease ran out): at least once, as designed. */
  reprocessedAfterLease?: string[];
  /** With --processed: acknowledged but never processed, even after settling. */
  notProcessed?: string[];
  /** The run was interrupted while this round's deliveries were being sent: nothing in it is judged. */
  interrupted?: true;
  /**
   * Interrupted: deliveries the run did not finish with (sent in the interrupted round, or still due
   * a retry after a restart that never came), counted neither lost nor never acknowledged.
   */
  unjudged?: string[];
}

/** A round's counts summed over the run (ids concatenated), plus how many rounds killed and the slowest kill. */
export type ChaosTotals = Omit<ChaosRound, 'round' | 'killed' | 'killSentMs' | 'killLandedMs' | 'escalated' | 'interrupted'> & {
  kills: number;
  /** The longest ack→signal time of any round, in ms. */
  maxKillSentMs?: number;
};

export interface AccountInput {
  deliveries: readonly TrackedDelivery[];
  kills: readonly RoundKill[];
  stored: ReadonlySet<string>;
  /** With --processed: how many times each id was processed. */
  processed?: ReadonlyMap<string, number>;
  /** With --inbox: where the rows not processed stand (for explaining, not for judging). */
  rows?: ReadonlyMap<string, RowState>;
  /** How many times the receiver holds each id, where more than once (a --stored command's repeats). */
  storedTimes?: ReadonlyMap<string, number>;
  /** The copies of acknowledged deliveries re-sent after a restart, and what each got. */
  duplicates?: readonly { round: number; id: string; answer: string }[];
  /** With --inbox: how many times each row was claimed (a second claim means a lease ran out). */
  claims?: ReadonlyMap<string, number>;
  /** The handler is idempotent by design: processing twice is no failure. */
  allowReprocess?: boolean;
  /** For the hint when nothing was acknowledged. */
  target: { https: boolean; timeoutMs: number };
  /**
   * The run was interrupted: the rounds it cut short (nothing in them is judged), and the
   * deliveries it did not finish with elsewhere (still due a retry) — neither lost nor refused.
   */
  interrupted?: { rounds: ReadonlySet<number>; deliveries: ReadonlySet<string> };
  /**
   * The provider never sends a request twice (its contract: Discord's interactions): what was in
   * flight at a kill is what the provider itself loses — a fact about it, not a finding.
   */
  neverResent?: { title: string; source: string };
}

export interface Account {
  rounds: ChaosRound[];
  totals: ChaosTotals;
  /** Why the run failed, one line each; empty when it passed. */
  problems: string[];
  /** Facts of the provider the run met, not findings against the receiver (what a provider that never re-sends loses at a kill). */
  notes: string[];
}

export function account(input: AccountInput): Account {
  const { deliveries, stored, processed } = input;
  const times = input.storedTimes ?? new Map<string, number>();
  const claims = input.claims;
  const cut = input.interrupted;
  // An interrupted run judges only what it finished: a round it cut short, a delivery still due a
  // retry, a copy whose send was interrupted are none of them the receiver's doing.
  const unjudged = (d: TrackedDelivery) => cut !== undefined && (cut.rounds.has(d.round) || cut.deliveries.has(d.id));
  const rounds: ChaosRound[] = input.kills.map((k) => {
    const copies = (input.duplicates ?? []).filter((d) => d.round === k.round && !(cut && d.answer === 'interrupted'));
    const all = deliveries.filter((d) => d.round === k.round);
    const mine = all.filter((d) => !unjudged(d));
    const acked = mine.filter((d) => d.acked).map((d) => d.id);
    const refused = mine.filter((d) => !d.acked).map((d) => d.id);
    const out: ChaosRound = {
      round: k.round,
      sent: all.length,
      acknowledged: all.filter((d) => d.acked).length,
      killed: k.killed,
      ...(k.killSentMs !== undefined ? { killSentMs: k.killSentMs } : {}),
      ...(k.killLandedMs !== undefined ? { killLandedMs: k.killLandedMs } : {}),
      acknowledgedAfterRestart: all.filter((d) => d.acked).length - k.acknowledgedBeforeKill,
      ...(k.escalated !== undefined ? { escalated: k.escalated } : {}),
      answers: countAnswers(all.flatMap((d) => d.answers)),
      stored: all.filter((d) => stored.has(d.id)).length,
      storedTwice: mine.map((d) => d.id).filter((id) => (times.get(id) ?? 0) > 1),
      duplicatesSent: copies.length,
      duplicatesRefused: copies.filter((c) => !/^2\d\d$/.test(c.answer)).map((c) => c.id),
      lost: acked.filter((id) => !stored.has(id)),
      refused,
      unacknowledgedStored: refused.filter((id) => stored.has(id)).length,
      ...(cut?.rounds.has(k.round) ? { interrupted: true as const } : {}),
      ...(cut ? { unjudged: all.filter(unjudged).map((d) => d.id) } : {}),
    };
    if (processed) {
      out.processed = mine.filter((d) => processed.has(d.id)).length;
      const twice = mine.map((d) => d.id).filter((id) => (processed.get(id) ?? 0) > 1);
      // A row claimed again after its lease ran out (the worker was killed mid-job) is processed
      // again by design: at least once. Only a repeat with no such claim to explain it counts.
      const explained = (id: string) => (claims?.get(id) ?? 0) > 1;
      out.processedTwice = twice.filter((id) => !explained(id));
      out.reprocessedAfterLease = twice.filter(explained);
      out.notProcessed = acked.filter((id) => !processed.has(id));
    }
    return out;
  });

  const sum = (f: (r: ChaosRound) => number) => rounds.reduce((n, r) => n + f(r), 0);
  const killTimes = rounds.map((r) => r.killSentMs).filter((ms): ms is number => ms !== undefined);
  const totals: ChaosTotals = {
    sent: sum((r) => r.sent),
    acknowledged: sum((r) => r.acknowledged),
    acknowledgedAfterRestart: sum((r) => r.acknowledgedAfterRestart),
    kills: rounds.filter((r) => r.killed).length,
    ...(killTimes.length ? { maxKillSentMs: Math.max(...killTimes) } : {}),
    answers: countAnswers(deliveries.flatMap((d) => d.answers)),
    stored: sum((r) => r.stored),
    storedTwice: rounds.flatMap((r) => r.storedTwice),
    duplicatesSent: sum((r) => r.duplicatesSent),
    duplicatesRefused: rounds.flatMap((r) => r.duplicatesRefused),
    lost: rounds.flatMap((r) => r.lost),
    refused: rounds.flatMap((r) => r.refused),
    unacknowledgedStored: sum((r) => r.unacknowledgedStored),
    ...(processed
      ? {
          processed: sum((r) => r.processed ?? 0),
          processedTwice: rounds.flatMap((r) => r.processedTwice ?? []),
          reprocessedAfterLease: rounds.flatMap((r) => r.reprocessedAfterLease ?? []),
          notProcessed: rounds.flatMap((r) => r.notProcessed ?? []),
        }
      : {}),
    ...(cut ? { unjudged: rounds.flatMap((r) => r.unjudged ?? []) } : {}),
  };

  const problems: string[] = [];
  const notes: string[] = [];
  // Where the provider never sends a request twice, one cut off by a kill (no answer: in flight) is
  // lost on the provider's side whatever the receiver does; one the receiver answered non-2xx is its own.
  const inFlight = (d: TrackedDelivery) => !/^\d{3}$/.test(d.answers.at(-1) ?? '');
  const providerLost = input.neverResent ? totals.refused.filter((id) => deliveries.some((d) => d.id === id && inFlight(d))) : [];
  if (input.neverResent && providerLost.length > 0) {
    notes.push(
      `${count(providerLost.length, 'delivery was', 'deliveries were')} in flight at a kill and never answered: ${input.neverResent.title} never sends a request again (${input.neverResent.source}), so it loses these itself — a fact of the provider, not a finding against the receiver`,
    );
    totals.refused = totals.refused.filter((id) => !providerLost.includes(id));
    for (const r of rounds) r.refused = r.refused.filter((id) => !providerLost.includes(id));
  }
  // Cut short, "nothing was tested" is the interrupt's doing, not the receiver's: only what the
  // finished part of the run found is said.
  if (totals.acknowledged === 0 && !cut) {
    problems.push(`the receiver acknowledged nothing, so nothing was tested: ${cause(deliveries, input.target)}`);
  } else if (totals.refused.length > 0) {
    // A delivery never acknowledged is one the sender gives up on: lost from the sender's side.
    const last = countAnswers(deliveries.filter((d) => !d.acked).map((d) => d.answers.at(-1) ?? 'no attempt'));
    const slow = Object.entries(last)
      .filter(([a]) => a.startsWith('timeout'))
      .reduce((n, [, k]) => n + k, 0);
    const timeout = Math.round(input.target.timeoutMs);
    if (slow === totals.refused.length) {
      // Every last attempt timed out: the receiver was too slow, which is not refusing.
      const held = totals.unacknowledgedStored ? `; the receiver holds ${totals.unacknowledgedStored} of them` : '';
      problems.push(
        `${totals.refused.length} deliveries were never acknowledged in time: too slow (no answer within the ${timeout} ms timeout, every retry included)${held}: the sender gives up on them`,
      );
    } else {
      const held = totals.unacknowledgedStored
        ? `; the receiver holds ${totals.unacknowledgedStored} of them, so it ${slow ? 'refused or was too slow for' : 'refused'} what it already had`
        : '';
      problems.push(
        `${totals.refused.length} deliveries were never acknowledged, even by the retries after the restart (last answers: ${describeCounts(last)}${slow ? `; timeout = no answer within ${timeout} ms` : ''})${held}: the sender gives up on them`,
      );
    }
  }
  if (!cut && totals.acknowledged > 0 && totals.kills === 0) {
    // Every round ended before its K-th acknowledgement, so the kill never came right after one:
    // the very thing chaos exists to test was not tested.
    problems.push(
      'no round killed the receiver right after an acknowledgement (each had fewer than --kill-after acks): nothing was tested',
    );
  }
  if (totals.lost.length > 0)
    problems.push(`${count(totals.lost.length, 'acknowledged delivery was', 'acknowledged deliveries were')} lost`);
  if (totals.storedTwice.length > 0)
    problems.push(
      `${totals.storedTwice.length} deliveries are stored more than once: the receiver stored a duplicate again (it dedupes in memory, forgotten at a restart, or on something other than the delivery id)`,
    );
  if (totals.duplicatesRefused.length > 0)
    problems.push(
      `${totals.duplicatesRefused.length} of ${totals.duplicatesSent} copies of acknowledged deliveries, re-sent after the restart as providers do, were not answered 2xx: a duplicate must be acknowledged, or the sender retries what the receiver already has`,
    );
  if ((totals.processedTwice ?? []).length > 0 && !input.allowReprocess)
    problems.push(
      `${totals.processedTwice?.length} deliveries were processed more than once${claims ? ' with no lease expiry to explain it' : ''}: the receiver's work is not deduplicated across a restart (if the handler is idempotent by design, pass --allow-reprocess)`,
    );
  if ((totals.notProcessed ?? []).length > 0) problems.push(notProcessedProblem(totals.notProcessed ?? [], input.rows));
  return { rounds, totals, problems, notes };
}

export function countAnswers(answers: readonly string[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const a of answers) out[a] = (out[a] ?? 0) + 1;
  return out;
}

function describeCounts(counts: Record<string, number>): string {
  return Object.entries(counts)
    .sort((a, b) => b[1] - a[1])
    .map(([a, n]) => `${a} ×${n}`)
    .join(', ');
}

/** The most common answer when nothing was acknowledged, and what it usually means. */
function cause(deliveries: readonly TrackedDelivery[], target: AccountInput['target']): string {
  const all = countAnswers(deliveries.flatMap((d) => d.answers));
  const [top, n] = Object.entries(all).sort((a, b) => b[1] - a[1])[0] ?? ['no attempt', 0];
  const total = Object.values(all).reduce((a, b) => a + b, 0);
  return `${n} of ${total} attempts got ${top}${hint(top, target) ? ` (${hint(top, target)})` : ''}`;
}

function hint(answer: string, target: AccountInput['target']): string {
  const status = Number(answer);
  if (status === 401 || status === 403 || status === 400) return 'is the secret right, and --provider the one the receiver verifies?';
  if (status === 404 || status === 405) return "is --url's path the receiver's webhook route?";
  if (status >= 500) return 'the receiver fails to store: see its stderr';
  if (answer.startsWith('refused')) return "is the receiver listening on --url's host and port? (PORT is set for it)";
  if (answer.startsWith('tls') || ((answer.startsWith('reset') || answer.startsWith('other')) && target.https)) {
    return 'an https:// --url for a receiver that speaks plain HTTP?';
  }
  if (answer.startsWith('timeout')) return `the receiver is slower than the timeout, ${Math.round(target.timeoutMs)}ms after --time-scale`;
  return '';
}

function notProcessedProblem(ids: readonly string[], rows: AccountInput['rows']): string {
  const base = `${ids.length} acknowledged deliveries were never processed`;
  if (!rows) return `${base} (if the receiver leases its rows, they may still be under the killed process's lease: raise --settle)`;
  const leased = ids.map((id) => rows.get(id)).filter((r): r is RowState => r?.status === 'working');
  const pending = ids.map((id) => rows.get(id)).filter((r): r is RowState => r?.status === 'pending');
  const parts: string[] = [];
  if (leased.length) parts.push(`${leased.length} still leased until ${new Date(Math.max(...leased.map((r) => r.until))).toISOString()}`);
  if (pending.length) parts.push(`${pending.length} pending, due by ${new Date(Math.max(...pending.map((r) => r.until))).toISOString()}`);
  return parts.length ? `${base} (${parts.join(', ')}: raise --settle-max, or shorten the receiver's lease)` : base;
}
