import chalk from 'chalk';
import type { FixturesResult } from '../commands/fixtures/run.js';

export function renderFixtures(result: FixturesResult): string {
  const width = Math.max(...result.fixtures.map((f) => f.name.length), 4);
  const lines = result.fixtures.map((f) => `${f.name.padEnd(width)}  ${chalk.dim(f.eventType)}`);
  lines.push('', chalk.dim('send one with: hookdrill send stripe/invoice.paid --url URL --secret S'));
  return `${lines.join('\n')}\n`;
}
