import type { DeliveryRecord } from '../delivery/deliver.js';
import type { SendResult } from '../delivery/send.js';
import { escapeStrings } from '../util/terminal.js';
import { junitReport, xml } from './xml.js';

/** A JUnit XML report: one test case per delivery, failed when its expectation did not hold. */
export function renderJunit(sent: Omit<SendResult, 'command'>, suiteName = 'hookdrill send'): string {
  // Ids, errors and answers are outside values: escaped like any printed line (a CI page shows them to a person), then made XML.
  const result = escapeStrings(sent);
  const cases = result.deliveries.map((d) => testCase(d, result));
  const failures = result.deliveries.filter((d) => !d.met).length;
  return junitReport(suiteName, cases, { failures, seconds: result.summary.elapsedMs / 1000 });
}

function testCase(d: DeliveryRecord, r: Omit<SendResult, 'command'>): string {
  // Named by fixture and place, not by the random id: CI tracks a case's history by its name.
  const name = `${d.fixture} #${d.seq + 1}${r.duplicates > 1 ? ` copy ${d.copy}` : ''}`;
  const time = (d.attempts.reduce((s, a) => s + a.latencyMs, 0) / 1000).toFixed(3);
  const trail = [
    `delivery ${d.deliveryId} (${d.eventType})`,
    ...d.attempts.map((a) => `attempt ${a.n}: ${a.status ?? a.error}${a.detail ? ` (${a.detail})` : ''} in ${Math.round(a.latencyMs)}ms`),
  ].join('\n');
  const open = `    <testcase classname="${xml(`${r.provider}.${d.fixture}`)}" name="${xml(name)}" time="${time}"`;
  if (d.met) return `${open}/>`;
  const message = `expected ${r.expect}, got ${d.finalStatus ?? d.attempts.at(-1)?.error ?? 'nothing'} (${d.outcome})`;
  return `${open}>\n      <failure message="${xml(message)}" type="expectation">${xml(trail)}</failure>\n    </testcase>`;
}
