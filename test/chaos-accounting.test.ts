import { test } from 'node:test';
import assert from 'node:assert/strict';
import { account } from '../src/chaos/accounting.js';
import type { AccountInput, TrackedDelivery } from '../src/chaos/accounting.js';

const target = { https: false, timeoutMs: 200 };
const d = (id: string, round: number, answers: string[]): TrackedDelivery => ({
  id,
  round,
  answers,
  acked: answers.some((a) => /^2\d\d$/.test(a)),
});
const kill = (round: number, acknowledgedBeforeKill: number, killSentMs?: number) => ({
  round,
  killed: true,
  acknowledgedBeforeKill,
  ...(killSentMs !== undefined ? { killSentMs, killLandedMs: killSentMs + 5 } : {}),
});

test('lost = acknowledged and not stored; stored-but-unacknowledged is not lost', () => {
  const input: AccountInput = {
    deliveries: [d('a', 1, ['200']), d('b', 1, ['200']), d('c', 1, ['reset', '200'])],
    kills: [kill(1, 2, 0.2)],
    stored: new Set(['a', 'c']),
    target,
  };
  const r = account(input);
  assert.deepEqual(r.totals.lost, ['b']);
  assert.equal(r.rounds[0]?.acknowledgedAfterRestart, 1);
  assert.deepEqual(r.rounds[0]?.answers, { '200': 3, reset: 1 });
  assert.deepEqual(r.problems, ['1 acknowledged delivery was lost']);
});

test('never acknowledged after the retries is a finding, and says whether the receiver held them', () => {
  const r = account({
    deliveries: [d('a', 1, ['200']), d('b', 1, ['reset', '500', '500', '500'])],
    kills: [kill(1, 1)],
    stored: new Set(['a', 'b']),
    target,
  });
  assert.deepEqual(r.totals.refused, ['b']);
  assert.equal(r.totals.unacknowledgedStored, 1);
  assert.deepEqual(r.problems, [
    '1 deliveries were never acknowledged, even by the retries after the restart (last answers: 500 ×1); the receiver holds 1 of them, so it refused what it already had: the sender gives up on them',
  ]);
});

test('nothing acknowledged: the most common answer and its usual meaning', () => {
  const base = { kills: [kill(1, 0)], stored: new Set<string>(), target };
  assert.match(
    account({ ...base, deliveries: [d('a', 1, ['401', '401']), d('b', 1, ['401', 'refused'])] }).problems[0] ?? '',
    /3 of 4 attempts got 401 \(is the secret right/,
  );
  assert.match(account({ ...base, deliveries: [d('a', 1, ['refused'])] }).problems[0] ?? '', /got refused \(is the receiver listening/);
  assert.match(account({ ...base, deliveries: [d('a', 1, ['timeout'])] }).problems[0] ?? '', /slower than the timeout, 200ms/);
  assert.match(
    account({ ...base, target: { https: true, timeoutMs: 1 }, deliveries: [d('a', 1, ['reset'])] }).problems[0] ?? '',
    /https:\/\/ --url for a receiver that speaks plain HTTP/,
  );
});

test('processed: twice and never, with rows still leased or pending explained', () => {
  const until = Date.parse('2026-12-01T03:00:00Z');
  const r = account({
    deliveries: [d('a', 1, ['200']), d('b', 1, ['200']), d('c', 2, ['200'])],
    kills: [kill(1, 2, 0.1), kill(2, 1, 0.4)],
    stored: new Set(['a', 'b', 'c']),
    processed: new Map([['a', 2]]),
    rows: new Map([
      ['b', { status: 'working', until }],
      ['c', { status: 'pending', until }],
    ]),
    target,
  });
  assert.deepEqual(r.totals.processedTwice, ['a']);
  assert.deepEqual(r.totals.notProcessed, ['b', 'c']);
  assert.equal(r.totals.maxKillSentMs, 0.4);
  // Processed twice with nothing to explain it (no claim count seen) fails the run (issue 21).
  assert.deepEqual(r.problems, [
    "1 deliveries were processed more than once: the receiver's work is not deduplicated across a restart (if the handler is idempotent by design, pass --allow-reprocess)",
    "2 acknowledged deliveries were never processed (1 still leased until 2026-12-01T03:00:00.000Z, 1 pending, due by 2026-12-01T03:00:00.000Z: raise --settle-max, or shorten the receiver's lease)",
  ]);
});

test('a clean run has no problems', () => {
  const r = account({
    deliveries: [d('a', 1, ['200'])],
    kills: [kill(1, 1, 0.1)],
    stored: new Set(['a']),
    processed: new Map([['a', 1]]),
    target,
  });
  assert.deepEqual(r.problems, []);
  assert.equal(r.totals.kills, 1);
});

test('no round killed after an acknowledgement: nothing was tested, the run fails', () => {
  const r = account({
    deliveries: [d('a', 1, ['200']), d('b', 1, ['200'])],
    kills: [{ round: 1, killed: false, acknowledgedBeforeKill: 2 }],
    stored: new Set(['a', 'b']),
    target,
  });
  assert.match(r.problems.join('\n'), /no round killed the receiver right after an acknowledgement/);
});

test('answers that came too late are reported as too slow, never as a refusal', () => {
  const r = account({
    deliveries: [d('a', 1, ['200']), d('b', 1, ['timeout', 'timeout']), d('c', 1, ['reset', 'timeout'])],
    kills: [kill(1, 1)],
    stored: new Set(['a', 'b', 'c']),
    target: { https: false, timeoutMs: 1000 },
  });
  assert.equal(r.problems.length, 1);
  assert.match(r.problems[0] ?? '', /^2 deliveries were never acknowledged in time: too slow \(no answer within the 1000 ms timeout/);
  assert.doesNotMatch(r.problems[0] ?? '', /refused/);
});

test('a delivery stored twice fails the run; processed twice fails unless a second claim explains it or it is allowed', () => {
  const base = { deliveries: [d('a', 1, ['200']), d('b', 1, ['200'])], kills: [kill(1, 1)], stored: new Set(['a', 'b']), target };
  const twice = account({ ...base, storedTimes: new Map([['a', 2]]) });
  assert.deepEqual(twice.totals.storedTwice, ['a']);
  assert.match(twice.problems[0] ?? '', /^1 deliveries are stored more than once/);
  const processed = new Map([
    ['a', 2],
    ['b', 1],
  ]);
  assert.match(account({ ...base, processed }).problems[0] ?? '', /^1 deliveries were processed more than once: .*--allow-reprocess/);
  assert.deepEqual(account({ ...base, processed, allowReprocess: true }).problems, []);
  const leased = account({ ...base, processed, claims: new Map([['a', 2]]) });
  assert.deepEqual(leased.problems, [], 'claimed twice: its lease ran out, processing it again is at least once by design');
  assert.deepEqual(leased.totals.reprocessedAfterLease, ['a']);
  const refusedCopy = account({ ...base, duplicates: [{ round: 1, id: 'a', answer: '500' }] });
  assert.match(refusedCopy.problems[0] ?? '', /^1 of 1 copies of acknowledged deliveries, re-sent after the restart/);
});

test('interrupted: the round cut short and deliveries still due a retry are not judged — neither lost nor refused; a loss in a finished round stands', () => {
  const r = account({
    deliveries: [
      d('a', 1, ['200']),
      d('b', 1, ['200']), // finished round, acknowledged, not stored: a real loss
      d('c', 1, ['refused']), // finished round, still due a retry the interrupt never let come
      d('x', 2, ['200']), // the round cut short: acknowledged, not stored
      d('y', 2, ['interrupted']),
    ],
    kills: [kill(1, 2), kill(2, 1)],
    stored: new Set(['a', 'c']),
    duplicates: [{ round: 1, id: 'a', answer: 'interrupted' }],
    interrupted: { rounds: new Set([2]), deliveries: new Set(['c', 'y']) },
    target,
  });
  assert.deepEqual(r.totals.lost, ['b']);
  assert.deepEqual(r.totals.refused, []);
  assert.deepEqual(r.totals.duplicatesRefused, []);
  assert.deepEqual(r.totals.unjudged, ['c', 'x', 'y']);
  assert.equal(r.rounds[1]?.interrupted, true);
  assert.deepEqual(r.problems, ['1 acknowledged delivery was lost']);
});
