import chalk from 'chalk';
import type { ProfilesResult } from '../providers/profiles.js';
import { formatDelays, formatDuration } from '../util/duration.js';
import { escapeStrings } from '../util/terminal.js';

/** Shipped data, nothing from outside; escaped first all the same, as every renderer's input is. */
export function renderProfiles(profiles: ProfilesResult): string {
  const result = escapeStrings(profiles);
  const lines: string[] = [];
  for (const p of result.profiles) {
    const retries = p.retryDelaysMs.length === 0 ? 'no retries' : `retries after ${formatDelays(p.retryDelaysMs)}`;
    const source = p.published ? '' : chalk.yellow(' (partly chosen by hookdrill: the provider does not publish all of it)');
    lines.push(`${chalk.bold(p.name)}${p.default ? chalk.dim(` (default for ${p.provider})`) : ''}${source}`);
    lines.push(`  timeout ${formatDuration(p.timeoutMs)}, ${retries}`);
    lines.push(chalk.dim(`  ${p.summary}`));
  }
  if (result.contract) {
    lines.push('', chalk.bold(`how ${result.contract.title} delivers`));
    for (const f of result.contract.facts) lines.push(`  ${f.fact}`, chalk.dim(`    source: ${f.source}`));
  }
  lines.push('', chalk.dim('use one with: hookdrill send --profile NAME; compress it with --time-scale 0.01'));
  if (!result.contract)
    lines.push(chalk.dim('how a provider delivers (batches, re-sends, endpoint checks, its answer): hookdrill profiles PROVIDER'));
  return `${lines.join('\n')}\n`;
}
