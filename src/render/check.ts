import chalk from 'chalk';
import { junitReport, xml } from './xml.js';
import type { CaseReport, CheckResult } from '../check/run.js';
import { CASE_NAMES } from '../check/cases/index.js';
import { escapeStrings } from '../util/terminal.js';

const MARK = { pass: chalk.green('PASS'), fail: chalk.red('FAIL'), warn: chalk.yellow('WARN'), skipped: chalk.dim('SKIP') } as const;

/** The names are known before anything runs, so lines printed as cases finish still align. */
const WIDTH = Math.max(...CASE_NAMES.map((n) => n.length));

/** A case --only left out or --skip named: said once for all of them at the end, not a line each. */
export function isNotAsked(c: Pick<CaseReport, 'status' | 'observed'>): boolean {
  return c.status === 'skipped' && (c.observed === 'not in --only' || c.observed === 'in --skip');
}

function notAskedLine(cases: readonly CaseReport[]): string {
  const only = cases.filter((c) => c.observed === 'not in --only').length;
  const skip = cases.length - only;
  return [only ? `${only} case${only === 1 ? '' : 's'} not asked for (--only)` : '', skip ? `${skip} left out (--skip)` : '']
    .filter(Boolean)
    .join(', ');
}

/**
 * A diagnosis's first clause, for the summary: up to its first " — " or ": " outside quotes and
 * brackets, so a quoted answer (`{"type": 1}`) is not cut in half.
 */
export function firstClause(text: string): string {
  let depth = 0;
  let quote: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (quote) {
      if (c === quote) quote = undefined;
      continue;
    }
    if (c === '"' || c === '`') quote = c;
    else if ('([{'.includes(c)) depth++;
    else if (')]}'.includes(c)) depth = Math.max(0, depth - 1);
    else if (depth === 0 && (text.startsWith(' — ', i) || text.startsWith(': ', i))) return text.slice(0, i);
  }
  return text;
}

/** One case, as it finishes. What was observed quotes the receiver (its answer, its headers): escaped first. */
export function renderCaseLine(report: CaseReport): string {
  const c = escapeStrings(report);
  const line = `${MARK[c.status]} ${c.name.padEnd(WIDTH)}  ${c.status === 'skipped' ? chalk.dim(c.observed) : c.observed}\n`;
  // The defect as a developer fixes it, under the line that shows what was seen.
  const why =
    c.diagnosis && (c.status === 'fail' || c.status === 'warn')
      ? `${' '.repeat(WIDTH + 7)}${c.status === 'fail' ? chalk.red('→') : chalk.yellow('→')} ${c.diagnosis}\n`
      : '';
  const said =
    c.answer !== undefined && (c.status === 'fail' || c.status === 'warn')
      ? `${' '.repeat(WIDTH + 7)}${chalk.dim(`the receiver said: ${c.answer}`)}\n`
      : '';
  return line + why + said;
}

/** `check --list`: every case and what it proves, and the providers it does not apply to. */
export function renderCaseList(list: readonly { name: string; summary: string; notFor: string[] }[]): string {
  const cases = escapeStrings(list);
  return `${cases.map((c) => `${c.name.padEnd(WIDTH)}  ${c.summary}${c.notFor.length ? chalk.dim(` (not for ${c.notFor.join(', ')})`) : ''}`).join('\n')}\n`;
}

/** After the case lines: where, with what store, and the verdict. */
export function renderCheckEnd(result: CheckResult): string {
  const r = escapeStrings(result);
  const lines = [''];
  lines.push(
    chalk.dim(
      `${r.route !== undefined ? `route ${r.route}, as listen forwards to it: ` : ''}${r.provider} → ${r.url}${r.store === 'none' ? ' · no store given: "stored" is not checked (--inbox or --stored)' : ''}`,
    ),
  );
  lines.push(
    chalk.dim(
      // inspect reads an inbox; a receiver's own store (--stored) is the user's to query.
      r.store === 'inbox'
        ? `run ${r.runId} (on every request as X-Hookdrill-Check) · what it left in the inbox: hookdrill inspect --inbox ${r.inbox ?? ''} --check-run ${r.runId}`
        : `run ${r.runId} (on every request as X-Hookdrill-Check) · what it left in your receiver's store carries that header`,
    ),
  );
  // The causes first: a developer fixes these, and the cases not judged are judged next run.
  // Each as its first clause: the whole diagnosis is under the case's line above.
  for (const root of r.cases.filter((x) => x.status === 'fail'))
    lines.push(`${chalk.red('✗')} ${root.name}: ${firstClause(root.diagnosis ?? root.observed)}`);
  // The cases --only left out (or --skip named) as one line, not a SKIP line each.
  const notAsked = r.cases.filter(isNotAsked);
  if (notAsked.length) lines.push(chalk.dim(notAskedLine(notAsked)));
  const c = r.counts;
  const unjudged = r.notJudged ? `, ${r.notJudged} not judged` : '';
  const plainSkips = c.skipped - r.notJudged;
  const interrupted = r.interrupted ? `${chalk.yellow('interrupted')}: ` : '';
  lines.push(
    `${interrupted}${r.ok ? chalk.green('PASS') : chalk.red('FAIL')} ${c.pass} passed, ${c.fail} failed, ${c.warn} warnings, ${plainSkips} skipped${unjudged} · ${(r.elapsedMs / 1000).toFixed(1)}s`,
  );
  // The failed cases the unjudged ones wait on, not every failure (each names its own in `notJudged`).
  const waitedOn = [...new Set(r.cases.map((x) => x.notJudged).filter((x): x is string => !!x && x !== 'interrupted'))];
  if (r.notJudged && !r.interrupted && waitedOn.length)
    lines.push(
      chalk.dim(
        `the ${r.notJudged} not judged depend on ${waitedOn.length === 1 ? 'a failed case' : 'failed cases'}: fix ${waitedOn.join(', ')}, then run check again`,
      ),
    );
  return `${lines.join('\n')}\n`;
}

export function renderCheckJunit(result: CheckResult): string {
  const r = escapeStrings(result);
  const cases = r.cases.map((c) => {
    // Named as check names the case (a test's name, the same from run to run); the sentence of
    // what it asks goes beside it, where JUnit readers show a case's properties.
    const open = `    <testcase classname="hookdrill.check.${xml(r.provider)}" name="${xml(c.name)}" time="${(c.ms / 1000).toFixed(3)}">\n      <properties>\n        <property name="description" value="${xml(c.summary)}"/>\n      </properties>`;
    if (c.status === 'fail')
      return `${open}\n      <failure message="${xml(c.observed)}">${xml(c.diagnosis ?? '')}</failure>\n    </testcase>`;
    if (c.status === 'skipped') return `${open}\n      <skipped message="${xml(c.observed)}"/>\n    </testcase>`;
    if (c.status === 'warn')
      return `${open}\n      <system-out>${xml(`warning: ${c.observed}${c.diagnosis ? ` — ${c.diagnosis}` : ''}`)}</system-out>\n    </testcase>`;
    return `${open}</testcase>`;
  });
  return junitReport('hookdrill check', cases, { failures: r.counts.fail, skipped: r.counts.skipped, seconds: r.elapsedMs / 1000 });
}

/** check could not judge at all (nothing listens, a --stored that says nothing true): one error, not a case per failure. */
export function renderCheckErrorJunit(providerName: string | undefined, error: string): string {
  const [provider, message] = escapeStrings([providerName, error] as const);
  const testcase = [
    `    <testcase classname="hookdrill.check.${xml(provider ?? 'unknown')}" name="check could run" time="0.000">`,
    `      <error message="${xml(message)}"/>`,
    '    </testcase>',
  ].join('\n');
  return junitReport('hookdrill check', [testcase], { failures: 0, errors: 1, seconds: 0 });
}
