import chalk from 'chalk';
import type { ScenarioResult } from '../scenario/run.js';
import { escapeStrings } from '../util/terminal.js';

/**
 * One line per ordering (what was sent, and how it ended), then the verdict. The problem quotes the
 * receiver's answer and what the --state command printed; the scenario file is the user's: escaped first.
 */
export function renderScenario(result: ScenarioResult): string {
  const r = escapeStrings(result);
  const lines = [`${r.scenario} → ${r.url}${r.description ? `\n  ${chalk.dim(r.description)}` : ''}`];
  for (const o of r.orderings) {
    const mark = o.ok ? chalk.green('✓') : chalk.red('✗');
    lines.push(`${mark} ${o.order.padEnd(9)} ${o.sequence.join(' → ')}${o.ok ? '' : `\n    ${o.problem ?? 'failed'}`}`);
  }
  const passed = r.orderings.filter((o) => o.ok).length;
  const verdict = r.ok ? chalk.green('PASS') : chalk.red('FAIL');
  lines.push(`${verdict} ${passed} of ${r.orderings.length} orderings ended in the expected state · seed ${r.seed} · ${r.elapsedMs}ms`);
  return `${lines.join('\n')}\n`;
}
