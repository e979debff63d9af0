// Nothing printed can forge a line (issue 36): every renderer, given values from outside holding line
// breaks, tabs, escape sequences, C1 and the Unicode separators and bidi controls, prints the same
// lines it prints for plain values, with only chalk's own colour codes, and the values shown escaped.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Chalk } from 'chalk';
import chalk from 'chalk';
import { renderChaos, renderChaosJunit, renderSettleWait } from '../src/render/chaos.js';
import type { ChaosResult } from '../src/chaos/run.js';
import { renderCaseLine, renderCaseList, renderCheckEnd, renderCheckErrorJunit, renderCheckJunit } from '../src/render/check.js';
import type { CaseReport, CheckResult } from '../src/check/run.js';
import { renderDemo } from '../src/render/demo.js';
import type { DemoResult } from '../src/demo/run.js';
import { renderCapture, renderFixtures, renderShow } from '../src/render/fixtures.js';
import type { CaptureResult } from '../src/fixtures/capture-to-file.js';
import type { FixturesResult, ShowResult } from '../src/fixtures/list.js';
import { renderImport } from '../src/render/import.js';
import type { ImportResult } from '../src/fixtures/import/run.js';
import { renderInspect, renderRequeue, rowTable, selectorText } from '../src/render/inspect.js';
import type { InspectResult, RowSummary } from '../src/incident/inspect.js';
import type { RequeueResult } from '../src/incident/requeue.js';
import { renderJunit } from '../src/render/junit.js';
import { outcomeLine, readyLine, requestLine, statusLine, summaryLine } from '../src/render/listen.js';
import type { Ready } from '../src/receiver/listen.js';
import { renderProfiles } from '../src/render/profiles.js';
import type { ProfilesResult } from '../src/providers/profiles.js';
import { createProgressBar, createStatusLine } from '../src/render/progress.js';
import { noteLine, pulledLine, renderPull, startLine, statusText } from '../src/render/pull.js';
import type { PullResult, PulledRecord } from '../src/pull/run.js';
import { renderReconcile, renderReconcileJunit } from '../src/render/reconcile.js';
import type { ReconcileResult } from '../src/reconcile/run.js';
import { renderScenario } from '../src/render/scenario.js';
import type { ScenarioResult } from '../src/scenario/run.js';
import { deliveryLine, renderSendEnd, retryLine, wireText } from '../src/render/send.js';
import type { DeliveryRecord } from '../src/delivery/deliver.js';
import type { SendResult } from '../src/delivery/send.js';
import type { Timing } from '../src/delivery/timing.js';
import { scaleNote } from '../src/render/timing.js';
import { renderVerify } from '../src/render/verify.js';
import type { VerifyResult } from '../src/verify/explain.js';
import { junitReport, xml } from '../src/render/xml.js';
// A namespace import: run on the code before issue 36 (no CHALK_SGR), each test still runs and fails on its own.
import * as terminal from '../src/util/terminal.js';
import { hookdrill } from './helpers/cli.js';
import { deadRows } from './helpers/dead-rows.js';
import { startStripeApi } from './helpers/stripe-api.js';
import { tempDir } from './helpers/tmp.js';

const { safe, safeOutput } = terminal;

// Colour on, as at a terminal: the checks below must see chalk's codes pass and nothing else.
chalk.level = 1;

/** Everything a hostile value may try: CR LF, TAB, conceal, a screen clear, a title change (OSC … BEL), U+2028, U+202E, C1 CSI. */
const HOSTILE = 'evt_1\r\n\u001b[8m\t\u001b[2J\u001b]0;title\u0007\u2028\u202e\u009bOK 0 missing';
const BENIGN = 'evt_1 plain-value';
/** How the start of HOSTILE must be shown: escaped, visible, not dropped. */
const VISIBLE = 'evt_1\\r\\n\\x1b[8m\\t\\x1b[2J';

// biome-ignore lint/suspicious/noControlCharactersInRegex: chalk's codes, to take out before looking for anything else
const CHALK_CODE = /\u001b\[(\d+)m/g;
/** What chalk writes for bold, dim, red, green, yellow, cyan (open and close): the test's own list, not the code's. */
const ALLOWED_SGR = new Set(['1', '2', '22', '31', '32', '33', '36', '39']);
// biome-ignore lint/suspicious/noControlCharactersInRegex: what may not reach a terminal raw
const RAW = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

// biome-ignore lint/suspicious/noControlCharactersInRegex: the redraw's own code
const ERASE_LINE = /\u001b\[K$/;

/** No ESC but chalk's own colour codes, no control but LF, no separator or bidi control. */
function assertClean(what: string, text: string): void {
  const rest = text.replace(CHALK_CODE, (m, code: string) => (ALLOWED_SGR.has(code) ? '' : m));
  const m = RAW.exec(rest);
  assert.equal(m, null, `${what}: raw U+${m?.[0].charCodeAt(0).toString(16).padStart(4, '0')} in ${JSON.stringify(text.slice(0, 300))}`);
}

const lineCount = (text: string) => text.split('\n').length;

/** visible: false for a renderer with no outside value to show; xml: a JUnit report. */
interface Options {
  visible?: boolean;
  xml?: boolean;
}

/**
 * The judgement for one renderer: the hostile output has as many lines as the benign one, is clean
 * (and so the last guard, safeOutput, has nothing left to change), and shows the value escaped.
 */
function judge(what: string, render: (value: string) => string, o: Options = {}): void {
  const benign = render(BENIGN);
  const hostile = render(HOSTILE);
  assert.equal(lineCount(hostile), lineCount(benign), `${what}: a hostile value added lines:\n${hostile}`);
  assertClean(what, hostile);
  assert.equal(safeOutput(hostile), hostile, `${what}: the last guard had to change something`);
  if (o.visible !== false) assert.ok(hostile.includes(VISIBLE), `${what}: the value is not shown escaped:\n${hostile}`);
  // A JUnit report: the same elements as with plain values (no test case or element added).
  const tags = (text: string) => text.match(/<\/?[a-z-]+/g)?.join(' ');
  if (o.xml) assert.equal(tags(hostile), tags(benign), `${what}: the XML's elements changed`);
}

const TIMING = (h: string): Timing => ({
  profile: h,
  timeScale: 0.01,
  timeoutMs: 10_000,
  retryDelaysMs: [1_000, 2_000],
  maxRedirects: 0,
  retryAfterStatuses: [429],
  stopStatuses: [410],
  stopHeader: { name: h, value: h },
});

const delivery = (h: string, met = false): DeliveryRecord => ({
  seq: 0,
  copy: 1,
  deliveryId: h,
  eventType: h,
  fixture: h,
  attempts: [
    {
      n: 1,
      atMs: 0,
      latencyMs: 12,
      error: h as never,
      detail: h,
      retryHeaders: { [h]: h },
      nextDelayMs: 1_000,
    },
    { n: 2, atMs: 1_000, latencyMs: 15, status: 500, bodySnippet: h, retryHeaders: { 'X-Retry': h } },
  ],
  outcome: 'exhausted',
  finalStatus: 500,
  met,
});

const sendResult = (h: string): Omit<SendResult, 'command'> => ({
  ok: false,
  provider: 'stripe',
  url: h,
  expect: h,
  timing: TIMING(h),
  duplicates: 2,
  interrupted: true,
  summary: {
    events: 2,
    deliveries: 2,
    delivered: 1,
    failed: 1,
    attempts: 3,
    retries: 1,
    transportErrors: 1,
    latencyMs: { p50: 12, p99: 15, max: 15 },
    elapsedMs: 1_000,
    deliveriesPerSec: 2,
  },
  deliveries: [delivery(h), delivery(h, true)],
});

const round = (h: string, n: number) => ({
  round: n,
  sent: 3,
  acknowledged: 2,
  killed: true,
  killSentMs: 3,
  killLandedMs: 5,
  acknowledgedAfterRestart: 1,
  escalated: true,
  answers: { [h]: 1 },
  stored: 1,
  storedTwice: [h],
  duplicatesSent: 1,
  duplicatesRefused: [h],
  lost: [h],
  refused: [h],
  unacknowledgedStored: 0,
  processed: 1,
  processedTwice: [h],
  reprocessedAfterLease: [h],
  notProcessed: [h],
});

const chaosResult = (h: string): ChaosResult => ({
  command: 'chaos',
  ok: false,
  notes: [h],
  provider: 'stripe',
  url: h,
  receiver: h,
  signal: 'KILL',
  killPoint: 'after-ack',
  killAfter: 2,
  timing: TIMING(h),
  durability: 'process-kill',
  allowReprocess: false,
  receiverStarts: 2,
  interrupted: false,
  roundsPlanned: 2,
  problems: [h, `the receiver said ${h}`],
  rounds: [round(h, 1), round(h, 2)],
  totals: { ...round(h, 0), kills: 2, maxKillSentMs: 3 },
  elapsedMs: 2_000,
});

const caseReport = (h: string, status: CaseReport['status']): CaseReport => ({
  name: 'valid-signature',
  summary: h,
  status,
  observed: h,
  diagnosis: h,
  answer: h,
  notJudged: h,
  ms: 10,
});

const checkResult = (h: string): CheckResult => ({
  command: 'check',
  ok: false,
  runId: h,
  provider: 'stripe',
  url: h,
  store: 'inbox',
  receiver: h,
  cases: [caseReport(h, 'fail'), caseReport(h, 'warn'), caseReport(h, 'skipped'), caseReport(h, 'pass')],
  counts: { pass: 1, fail: 1, warn: 1, skipped: 1 },
  roots: [h],
  notJudged: 1,
  interrupted: false,
  elapsedMs: 100,
});

const demoResult = (h: string): DemoResult => ({
  command: 'demo',
  ok: false,
  elapsedMs: 100,
  inlineVsQueue: {
    timing: { timeoutMs: 300, retryDelaysMs: [0, 20], crmMs: 600 },
    inline: { attempts: 3, timedOut: 2, answered2xx: 1, crmUpdates: 3 },
    queueFirst: { attempts: 1, answered2xx: 1, firstAnswerMs: 3, pendingBeforeWorker: 1, doneAfterWorker: 1, crmUpdates: 1 },
  },
  ackVsStore: { ackFirst: { sent: 3, acknowledged: 3, processed: 0 }, storeFirst: { sent: 3, acknowledged: 3, processed: 3 } },
  verifyOrder: {
    storeThenVerify: { requests: 5, answered2xx: 0, rows: 5, bytes: 5_000 },
    verifyThenStore: { requests: 5, answered2xx: 0, rows: 0, bytes: 0 },
  },
  surprises: [h, h],
});

const row = (h: string, status: RowSummary['status'], now: number): RowSummary => ({
  source: 'stripe',
  deliveryId: h,
  eventType: h,
  status,
  attempts: 3,
  receivedAt: now - 60_000,
  nextAttemptAt: status === 'pending' ? now + 5_000 : undefined,
  lastError: h,
  finishedAt: status === 'dead' ? now - 1_000 : undefined,
  bytes: 10,
});

const NOW = Date.parse('2026-01-01T00:00:00Z');
const selector = (h: string) => ({
  ids: [h],
  statuses: ['dead' as const],
  type: h,
  error: h,
  source: h,
  check: h,
  since: NOW - 1,
  until: NOW,
});

const inspectResults = (h: string): InspectResult[] => [
  {
    command: 'inspect',
    view: 'overview',
    inbox: h,
    now: NOW,
    overview: {
      stats: { counts: { pending: 1, working: 0, done: 1, dead: 2 }, total: 4, oldestPendingAt: NOW - 60_000 },
      perMinute: Array.from({ length: 60 }, (_, i) => i % 5),
      perMinuteByStatus: { pending: [], working: [], done: [], dead: [] },
      deadByError: [
        { error: h, count: 2, exampleId: h, newestAt: NOW - 1_000, oldestAt: NOW - 5_000, checkRows: 0 },
        { error: '', count: 1, exampleId: h, newestAt: NOW - 1_000, oldestAt: NOW - 1_000, checkRows: 0 },
      ],
      retryingByError: [{ error: h, count: 1, exampleId: h, nextAt: NOW + 30_000, checkRows: 0 }],
      attempts: { 3: 2 },
      requeues: [{ at: NOW - 1_000, moved: 1, selector: selector(h), resetAttempts: true }],
      retentionMs: 60_000,
    },
  },
  {
    command: 'inspect',
    view: 'rows',
    inbox: h,
    now: NOW,
    order: 'newest',
    selector: selector(h),
    total: 3,
    rows: [row(h, 'dead', NOW), row(h, 'pending', NOW), row(h, 'done', NOW)],
  },
  {
    command: 'inspect',
    view: 'delivery',
    inbox: h,
    now: NOW,
    deliveries: [{ ...row(h, 'dead', NOW), source: h, headers: { [h]: h, 'x-note': h }, body: Buffer.from(h) }],
  },
];

const requeueResult = (h: string, dryRun: boolean): RequeueResult => ({
  command: 'requeue',
  inbox: h,
  dryRun,
  selector: selector(h),
  matched: 3,
  moved: dryRun ? 0 : 2,
  resetAttempts: true,
  sample: [row(h, 'dead', NOW), row(h, 'done', NOW)],
  notFound: [h, h],
  ok: false,
});

const ready = (h: string): Ready => ({
  event: 'ready',
  url: h,
  inbox: h,
  provider: h,
  forwardTo: h,
  worker: true,
  retries: { maxAttempts: 5, baseMs: 1_000, maxMs: 60_000, deadAfterMs: { minMs: 10_000, maxMs: 60_000 } },
  pid: 1,
  warnings: [h],
});

const pulled = (h: string, outcome: PulledRecord['outcome']): PulledRecord => ({
  at: '2026-01-01T00:00:00.000Z',
  id: h,
  type: h,
  created: 1,
  outcome,
  error: h,
  attempts: 2,
  latencyMs: 5,
});

const pullResult = (h: string): PullResult => ({
  command: 'pull',
  ok: false,
  provider: 'stripe',
  apiBase: h,
  source: h,
  to: h,
  into: 'inbox',
  stateFile: h,
  start: 'resumed',
  follow: false,
  timing: TIMING(h),
  delivered: 1,
  stored: 1,
  duplicates: 0,
  skipped: [pulled(h, 'skipped'), pulled(h, 'skipped')],
  held: pulled(h, 'failed'),
  gone: [pulled(h, 'gone')],
  apiRequests: 3,
  interrupted: true,
  notes: [h],
  elapsedMs: 1_000,
});

const reconcileResult = (h: string): ReconcileResult => ({
  command: 'reconcile',
  ok: false,
  provider: 'stripe',
  apiBase: h,
  hook: h,
  since: NOW - 3_600_000,
  until: NOW,
  store: 'inbox',
  sent: 5,
  held: 3,
  missing: [
    { id: h, type: h, created: 1_700_000_000, status: h },
    { id: 'evt_real_missing', type: 'invoice.paid', created: 1_700_000_001 },
  ],
  dead: [{ id: h, type: h, created: 1_700_000_000 }],
  fixed: 1,
  dryRun: true,
  redelivered: {
    url: h,
    interrupted: true,
    failed: [{ id: h, status: h }],
    summary: sendResult(h).summary,
  },
  unfetched: [{ id: h, error: h }],
  notes: [h],
  elapsedMs: 10,
});

const scenarioResult = (h: string): ScenarioResult => ({
  command: 'scenario',
  ok: false,
  scenario: h,
  description: h,
  provider: 'stripe',
  url: h,
  seed: 1,
  orderings: [
    { order: 'in-order', sequence: [h, h], answers: [200], vars: { [h]: h }, expected: { [h]: h }, ok: false, problem: h },
    { order: 'reversed', sequence: [h], answers: [200], vars: {}, expected: {}, ok: true },
  ],
  elapsedMs: 10,
});

const verifyResult = (h: string, ok: boolean): VerifyResult => ({
  command: 'verify',
  ok,
  code: ok ? 'valid' : ('no_match' as VerifyResult['code']),
  provider: 'stripe',
  source: h,
  deliveryId: h,
  eventType: h,
  findings: [h, h, h],
  judgedAtMs: NOW,
});

const fixturesResult = (h: string): FixturesResult => ({
  command: 'fixtures',
  ok: true,
  providers: [{ provider: 'stripe', count: 2, shipped: 1, catalogue: h }],
  fixtures: [
    { provider: 'stripe', name: h, eventType: h, source: h },
    { provider: 'stripe', name: 'stripe/invoice.paid', eventType: 'invoice.paid', source: 'shipped' },
  ],
});

const showResult = (h: string): ShowResult => ({
  command: 'fixtures show',
  ok: true,
  name: h,
  provider: 'stripe',
  eventType: h,
  source: h,
  headers: { [h]: h, 'Stripe-Signature': h },
  body: { id: h, nested: { [h]: [h, 1, null] } },
});

const captureResult = (h: string, redacted: boolean): CaptureResult => ({
  command: 'fixtures capture',
  inbox: h,
  deliveryId: h,
  provider: h,
  eventType: h,
  file: h,
  path: h,
  redacted,
  ...(redacted ? { redactions: { email: 1, name: 0, login: 0, address: 0, phone: 0, card: 0, ip: 0, location: 0 } } : {}),
  credentials: [h],
  send: `hookdrill send ${h}`,
});

const importResult = (h: string, interrupted: boolean): ImportResult => ({
  command: 'import',
  ok: false,
  inbox: h,
  provider: h,
  read: 2,
  stored: 0,
  duplicates: 0,
  skipped: [
    { where: h, why: h },
    { where: `${h} #entry 2`, why: `header ${h}: its value holds a control character` },
  ],
  ...(interrupted ? { interrupted: { done: 1 } } : {}),
});

const profilesResult = (h: string): ProfilesResult => ({
  command: 'profiles',
  profiles: [{ ...TIMING(h), name: h, summary: h, published: false, provider: 'stripe', default: true }],
});

/** Every renderer in src/render, each way it prints (the variants that show other fields). */
type Case = readonly [what: string, render: (h: string) => string, options?: Options];
const RENDERERS: readonly Case[] = [
  ['check: renderCaseLine (fail)', (h) => renderCaseLine(caseReport(h, 'fail'))],
  ['check: renderCaseLine (skipped)', (h) => renderCaseLine(caseReport(h, 'skipped'))],
  ['check: renderCaseList', (h) => renderCaseList([{ name: h, summary: h, notFor: [h] }])],
  ['check: renderCheckEnd', (h) => renderCheckEnd(checkResult(h))],
  ['check: renderCheckJunit', (h) => renderCheckJunit(checkResult(h)), { xml: true }],
  ['check: renderCheckErrorJunit', (h) => renderCheckErrorJunit(h, h), { xml: true }],
  ['chaos: renderChaos', (h) => renderChaos(chaosResult(h))],
  ['chaos: renderChaos (power cut)', (h) => renderChaos({ ...chaosResult(h), durability: 'power-cut', ok: true })],
  ['chaos: renderChaosJunit', (h) => renderChaosJunit(chaosResult(h)), { xml: true }],
  [
    'chaos: renderSettleWait',
    () => renderSettleWait({ leased: 1, pending: 2, until: Date.now() + 1_000, giveUpAt: Date.now() + 5_000 }),
    { visible: false },
  ],
  ['demo: renderDemo', (h) => renderDemo(demoResult(h))],
  ['demo: renderDemo (ok)', (h) => renderDemo({ ...demoResult(h), ok: true }), { visible: false }],
  ['fixtures: renderFixtures', (h) => renderFixtures(fixturesResult(h))],
  ['fixtures: renderShow', (h) => renderShow(showResult(h))],
  ['fixtures: renderCapture', (h) => renderCapture(captureResult(h, false))],
  ['fixtures: renderCapture (redacted)', (h) => renderCapture(captureResult(h, true))],
  ['import: renderImport', (h) => renderImport(importResult(h, false))],
  ['import: renderImport (interrupted)', (h) => renderImport(importResult(h, true))],
  ...inspectResults('x').map(
    (r, i) => [`inspect: renderInspect (${r.view})`, (h: string) => renderInspect(inspectResults(h)[i] as InspectResult)] as const,
  ),
  ['inspect: rowTable', (h) => `${rowTable([row(h, 'dead', NOW), row(h, 'pending', NOW)], NOW, 200).join('\n')}\n`],
  ['inspect: selectorText', (h) => selectorText(selector(h))],
  ['inspect: renderRequeue (dry run)', (h) => renderRequeue(requeueResult(h, true))],
  ['inspect: renderRequeue', (h) => renderRequeue(requeueResult(h, false))],
  ['listen: readyLine', (h) => readyLine(ready(h), false)],
  ['listen: readyLine (no worker)', (h) => readyLine({ ...ready(h), forwardTo: null, worker: false }, false)],
  [
    'listen: requestLine',
    (h) => requestLine({ status: 401, result: 'rejected', deliveryId: h, eventType: h, reason: h, code: h }, false) ?? '',
  ],
  ...(['retry', 'dead', 'done', 'fenced'] as const).map(
    (outcome) =>
      [
        `listen: outcomeLine (${outcome})`,
        (h: string) =>
          outcomeLine(
            { key: { source: 'stripe', deliveryId: h }, attempt: 2, eventType: h, outcome, ms: 5, error: h, retryInMs: 1_000 } as never,
            false,
          ),
      ] as const,
  ),
  [
    'listen: summaryLine, statusLine',
    () =>
      `${summaryLine(
        {
          command: 'listen',
          requests: 1,
          stored: 1,
          duplicates: 0,
          rejected: 0,
          processed: { done: 1, retried: 0, dead: 0 },
          inbox: { counts: { pending: 0, working: 0, done: 1, dead: 0 }, total: 1, oldestPendingAt: undefined },
        },
        false,
      )}\n${statusLine({ requests: 3, stored: 1, duplicates: 1, rejected: 1, failed: 1, done: 1, retried: 1, dead: 1 }, 2)}`,
    { visible: false },
  ],
  ['profiles: renderProfiles', (h) => renderProfiles(profilesResult(h))],
  ['pull: pulledLine', (h) => pulledLine(pulled(h, 'failed'), false)],
  ['pull: noteLine', (h) => noteLine(h, false)],
  [
    'pull: startLine',
    (h) => startLine({ provider: 'stripe', source: h, to: h, stateFile: h, start: 'since', follow: true, timing: TIMING(h) }, false),
  ],
  [
    'pull: statusText',
    () => statusText({ phase: 'polling', delivered: 1, waiting: 2, requests: 3, budget: { remaining: 1, limit: 5, resetAt: 0 } }),
    { visible: false },
  ],
  ['pull: renderPull', (h) => renderPull(pullResult(h))],
  ['reconcile: renderReconcile', (h) => renderReconcile(reconcileResult(h))],
  ['reconcile: renderReconcile (fix)', (h) => renderReconcile({ ...reconcileResult(h), dryRun: false })],
  ['reconcile: renderReconcileJunit', (h) => renderReconcileJunit(reconcileResult(h)), { xml: true }],
  ['scenario: renderScenario', (h) => renderScenario(scenarioResult(h))],
  ['send: deliveryLine', (h) => deliveryLine(delivery(h), true, h)],
  ['send: retryLine', (h) => retryLine({ deliveryId: h, eventType: h, failed: delivery(h).attempts[0] as never, dueAt: NOW })],
  ['send: renderSendEnd', (h) => renderSendEnd(sendResult(h))],
  ['send: renderJunit', (h) => renderJunit(sendResult(h), h), { xml: true }],
  [
    'send: wireText (no answer)',
    (h) => wireText({ deliveryId: h, n: 1, request: { method: 'POST', url: h, headers: { [h]: h }, body: 'x' }, error: h }),
  ],
  ['timing: scaleNote', () => `${scaleNote({ timeScale: 0.01, timeoutMs: 1_000 })}|${scaleNote(TIMING('x'))}`, { visible: false }],
  ['verify: renderVerify (invalid)', (h) => renderVerify(verifyResult(h, false))],
  ['verify: renderVerify (valid)', (h) => renderVerify(verifyResult(h, true))],
  ['xml: junitReport around xml()', (h) => junitReport(h, [`<testcase name="${xml(safe(h))}"/>`], { failures: 0, seconds: 1 })],
];

// The renderers (or ways of printing) that show a value from outside: each its own test.
for (const [what, render, o] of RENDERERS.filter(([, , o]) => o?.visible !== false)) {
  test(`${what}: a hostile value prints no line of its own, no escape but chalk's colour, and shows escaped`, () => {
    judge(what, render, o);
  });
}

// Those that print only hookdrill's own words and numbers: held to the same rule, so one that
// starts showing an outside value is already under test (these pass on the code before issue 36 too).
test('the renderers that print no outside value (settle wait, demo passing, listen summary and status, pull status, timing) are clean', () => {
  for (const [what, render, o] of RENDERERS.filter(([, , o]) => o?.visible === false)) judge(what, render, o);
});

test('send --verbose: a body is shown a line at a time, every line under its > or <, a header value on its own line', () => {
  const w = (h: string) =>
    wireText({
      deliveryId: h,
      n: 1,
      request: { method: 'POST', url: h, headers: { [h]: h }, body: `{"a":1}\n${h}` },
      response: { status: 500, headers: { [h]: h }, body: `line one\r\n${h}` },
    });
  const text = w(HOSTILE);
  assertClean('wireText', text);
  const lines = text.trimEnd().split('\n');
  // A body's own line breaks are shown as its lines (HOSTILE holds one, in each of the two bodies);
  // nothing else adds any: not the id, the URL, a header's name or value.
  const breaks = HOSTILE.split('\n').length - 1;
  assert.equal(lines.length, w(BENIGN).trimEnd().split('\n').length + 2 * breaks);
  const plain = (l: string) => l.replace(CHALK_CODE, '');
  for (const l of lines) assert.match(plain(l), /^[<>]( |$)/, `a line not marked as the request's or the answer's: ${JSON.stringify(l)}`);
  assert.ok(text.includes(`< line one\\r`), 'a CR at a line end is shown');
  assert.ok(text.includes(VISIBLE));
});

test('the progress and status lines at a terminal: one line redrawn, nothing but the redraw codes', () => {
  const written: string[] = [];
  const stream = { isTTY: true, write: (s: string) => written.push(s) } as unknown as NodeJS.WriteStream;
  const ci = process.env.CI;
  delete process.env.CI;
  try {
    const status = createStatusLine(stream);
    status?.update(`importing: ${HOSTILE}`);
    status?.stop();
    const bar = createProgressBar(stream);
    bar?.update({ done: 1, total: 2, failed: 1 } as never);
    bar?.stop();
  } finally {
    if (ci !== undefined) process.env.CI = ci;
  }
  assert.ok(written.length >= 4, JSON.stringify(written));
  for (const w of written) {
    // The redraw itself: CR at the start, erase-to-end-of-line (ESC [ K) at the end; nothing in between.
    const inner = w.replace(/^\r/, '').replace(ERASE_LINE, '');
    assertClean('progress', inner.replace(/\n/g, '\u0000'));
  }
});

test('safe() escapes every control, TAB, CR and LF included, the separators and the bidi controls; it is idempotent', () => {
  assert.equal(safe('a\tb\nc\rd'), 'a\\tb\\nc\\rd');
  assert.equal(safe('\u0000\u001b\u007f\u009b\u0085'), '\\x00\\x1b\\x7f\\x9b\\x85');
  assert.equal(
    safe('\u2028\u2029\u202a\u202e\u2066\u2069\u200e\u200f\u061c'),
    '\\u2028\\u2029\\u202a\\u202e\\u2066\\u2069\\u200e\\u200f\\u061c',
  );
  assert.equal(safe('café 🐛 日本語 — "quoted"'), 'café 🐛 日本語 — "quoted"', 'text is left as it is');
  assert.equal(safe(safe(HOSTILE)), safe(HOSTILE));
  assertClean('safe', safe(HOSTILE));
});

test('safeOutput, the last guard: chalk colour and LF pass; conceal, a screen clear, a title, CR, TAB, C1 and bidi are escaped', () => {
  const own = `${chalk.red('missing')} ${chalk.bold(chalk.green('OK'))}\n${chalk.dim(chalk.yellow('x'))} ${chalk.cyan('y')}\n`;
  assert.equal(safeOutput(own), own);
  assert.equal(
    safeOutput('\u001b[8mhidden\u001b[0m\u001b[2J\u001b]0;t\u0007\r\t\u009b\u202e\u001b[1;31m'),
    '\\x1b[8mhidden\\x1b[0m\\x1b[2J\\x1b]0;t\\x07\\r\\t\\x9b\\u202e\\x1b[1;31m',
  );
});

test('CHALK_SGR holds every code chalk writes for the styles hookdrill uses, at every colour level (a new style: add its codes there)', () => {
  const styles = ['bold', 'dim', 'red', 'green', 'yellow', 'cyan'] as const;
  for (const level of [1, 2, 3] as const) {
    const c = new Chalk({ level });
    for (const s of styles) {
      // Alone, nested in each other style, and across a line break (chalk closes and reopens around it).
      for (const text of [c[s]('x'), ...styles.map((t) => c[t](`a ${c[s]('b\nc')} d`))]) {
        for (const [, code] of text.matchAll(CHALK_CODE))
          assert.ok(ALLOWED_SGR.has(code as string), `chalk.${s} at level ${level} writes ESC[${code}m`);
      }
    }
  }
  assert.deepEqual([...terminal.CHALK_SGR].sort(), [...ALLOWED_SGR].sort(), 'what the last guard lets through');
});

test('end to end: reconcile against a Stripe API serving a hostile event id — no forged OK line, the real missing lines shown', async () => {
  const KEY = 'sk_test_51HostileOutput000000000000abcd';
  const now = Math.floor(Date.now() / 1000);
  const forged = 'evt_1\n\u001b[32mOK\u001b[0m stripe sent 3 events · 3 held · 0 missing\u001b[8m';
  const api = await startStripeApi({
    key: KEY,
    events: [
      { id: forged, type: 'invoice.paid', created: now - 60, delivered: true },
      { id: 'evt_real_a', type: 'invoice.paid', created: now - 50, delivered: false },
      { id: 'evt_real_b', type: `customer.created\r\u001b[2K`, created: now - 40, delivered: true },
      { id: 'evt_held', type: 'invoice.paid', created: now - 30, delivered: true },
    ],
  });
  try {
    const inbox = join(tempDir(), 'inbox.db');
    await deadRows(inbox, [{ deliveryId: 'evt_held' }], 'crm down');
    const r = await hookdrill(['reconcile', '--provider', 'stripe', '--since', '1h', '--api-base', api.url, '--inbox', inbox], {
      STRIPE_API_KEY: KEY,
      FORCE_COLOR: '1',
    });
    assert.equal(r.code, 1, r.stderr);
    const lines = r.stdout.replace(CHALK_CODE, '').trimEnd().split('\n');
    assert.deepEqual(
      lines.filter((l) => /^OK\b/.test(l)),
      [],
      `a forged verdict line:\n${r.stdout}`,
    );
    assert.equal(lines.filter((l) => l.startsWith('missing ')).length, 3, r.stdout);
    assert.ok(
      lines.some((l) => l.startsWith('missing evt_real_a  invoice.paid')),
      r.stdout,
    );
    assert.ok(
      lines.some((l) => l.startsWith('missing evt_real_b  customer.created\\r\\x1b[2K')),
      r.stdout,
    );
    assert.ok(
      lines.some((l) => l.startsWith('missing evt_1\\n\\x1b[32mOK\\x1b[0m stripe sent 3 events')),
      r.stdout,
    );
    assert.match(lines.at(-1) ?? '', /^MISSING stripe sent 4 events .* 1 held · 3 missing · 1 held but dead/);
    assert.equal(lines.length, 5, r.stdout);
    assertClean('reconcile stdout', r.stdout);
  } finally {
    await api.close();
  }
});

test('end to end: import of captures with hostile ids, then inspect — the table has one line per row; a hostile header name is one error line', async () => {
  const dir = tempDir();
  const inbox = join(dir, 'inbox.db');
  const ids = ['evt_a\n\u001b[32mOK\u001b[0m nothing dead\u001b[8m', 'evt_b\r\u001b[2J\u2028\u202eevil', 'evt_plain'];
  const event = (id: string) => ({ id, object: 'event', type: `invoice.paid\n${id}`, created: 1764460800, data: { object: {} } });
  writeFileSync(join(dir, 'events.jsonl'), `${ids.map((id) => JSON.stringify(event(id))).join('\n')}\n`);
  const imported = await hookdrill(['import', join(dir, 'events.jsonl'), '--inbox', inbox, '--provider', 'stripe'], { FORCE_COLOR: '1' });
  assert.equal(imported.code, 0, imported.stderr);
  assertClean('import', imported.stdout);
  assert.equal(imported.stdout.trimEnd().split('\n').length, 1, imported.stdout);

  const shown = await hookdrill(['inspect', '--inbox', inbox, '--status', 'pending'], { FORCE_COLOR: '1', COLUMNS: '200' });
  assert.equal(shown.code, 0, shown.stderr);
  const lines = shown.stdout.replace(CHALK_CODE, '').trimEnd().split('\n');
  // The header, one line per row, the count.
  assert.equal(lines.length, 1 + ids.length + 1, shown.stdout);
  assert.match(lines[0] ?? '', /^id\s+type\s+status/);
  assert.match(lines.at(-1) ?? '', /^3 of 3 matching rows/);
  for (const l of lines.slice(1, -1)) assert.match(l, /^evt_.* {2}invoice\.paid\\nevt_.* {2}pending {2}0 /, shown.stdout);
  assert.ok(shown.stdout.includes('evt_a\\n\\x1b[32mOK\\x1b[0m'), shown.stdout);
  assertClean('inspect', shown.stdout);

  // A HAR whose header name holds a line break: the error names it on one line.
  const har = {
    log: {
      entries: [
        {
          request: {
            method: 'POST',
            url: 'http://x/hooks',
            headers: [{ name: 'X-Note\n\u001b[32mimported into\u001b[0m ok', value: 'x' }],
            postData: { mimeType: 'application/json', text: JSON.stringify(event('evt_har')) },
          },
        },
      ],
    },
  };
  writeFileSync(join(dir, 'c.har'), JSON.stringify(har));
  const bad = await hookdrill(['import', join(dir, 'c.har'), '--inbox', join(dir, 'other.db'), '--provider', 'stripe']);
  assert.equal(bad.code, 2, bad.stderr);
  assert.equal(bad.stderr.trimEnd().split('\n').length, 1, bad.stderr);
  assert.match(bad.stderr, /header "X-Note\\n\\x1b\[32mimported into\\x1b\[0m ok" is not a valid header name/);
  assertClean('import error', bad.stderr);
});
