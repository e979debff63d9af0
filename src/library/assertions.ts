import type { ChaosResult } from '../chaos/run.js';
import { count } from '../util/words.js';
import type { CheckResult } from '../check/run.js';
import type { SendResult } from '../delivery/send.js';

/**
 * A result that is not a pass, for any test runner (node:test, Vitest, Jest treat a thrown Error
 * as a failure). The message names what failed; `result` is the whole Result for a closer look.
 */
export class HookdrillAssertionError extends Error {
  override readonly name = 'HookdrillAssertionError';
  constructor(
    message: string,
    readonly result: CheckResult | ChaosResult | SendResult,
  ) {
    super(message);
  }
}

const SHOWN = 10;

function some(items: readonly string[]): string {
  return items.length > SHOWN ? `${items.slice(0, SHOWN).join(', ')} … and ${items.length - SHOWN} more` : items.join(', ');
}

/** Throws unless every case that ran passed (warnings allowed), naming each failed case and what it saw. */
export function assertCheckPassed(result: CheckResult): void {
  if (result.ok) return;
  const failed = result.cases.filter((c) => c.status === 'fail');
  throw new HookdrillAssertionError(
    [
      `hookdrill check: ${failed.length} of ${result.cases.filter((c) => c.status !== 'skipped').length} cases failed against ${result.url}${result.interrupted ? ' (interrupted)' : ''}${result.notJudged ? `, ${result.notJudged} not judged (they depend on a failed case)` : ''}`,
      // What was seen, then the defect as a developer fixes it: a test log must say why.
      ...failed.flatMap((c) => [`  ✗ ${c.name}: ${c.observed}`, ...(c.diagnosis ? [`    → ${c.diagnosis}`] : [])]),
    ].join('\n'),
    result,
  );
}

/** Throws unless nothing acknowledged was lost and every other verdict held, naming the deliveries at fault. */
export function assertChaosPassed(result: ChaosResult): void {
  if (result.ok) return;
  const t = result.totals;
  const lines = [
    `hookdrill chaos: ${count(result.problems.length, 'problem')} over ${count(result.rounds.length, 'round')} against ${result.url}`,
  ];
  for (const p of result.problems) lines.push(`  ✗ ${p}`);
  if (t.lost.length) lines.push(`  lost (acknowledged, then not held): ${some(t.lost)}`);
  if (t.notProcessed?.length) lines.push(`  never processed: ${some(t.notProcessed)}`);
  throw new HookdrillAssertionError(lines.join('\n'), result);
}

/** Throws unless every delivery met its expectation, naming the ones that did not and what they got. */
export function assertSendPassed(result: SendResult): void {
  if (result.ok) return;
  const missed = result.deliveries.filter((d) => !d.met);
  throw new HookdrillAssertionError(
    [
      `hookdrill send: ${missed.length} of ${result.deliveries.length} deliveries did not get ${result.expect} from ${result.url}${result.interrupted ? ' (interrupted)' : ''}`,
      ...missed
        .slice(0, SHOWN)
        .map(
          (d) =>
            `  ✗ ${d.deliveryId} (${d.eventType}): ${d.finalStatus ?? 'no answer'} after ${d.attempts.length} attempt(s), ${d.outcome}`,
        ),
      ...(missed.length > SHOWN ? [`  … and ${missed.length - SHOWN} more`] : []),
    ].join('\n'),
    result,
  );
}
