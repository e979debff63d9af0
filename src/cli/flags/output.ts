import type { Command } from 'commander';

export interface OutputFlags {
  json?: boolean;
  junit?: string;
  quiet?: boolean;
}

/** --json always; --junit FILE and --quiet where the command has them. */
export function declareOutput(cmd: Command, options: { json?: string; junit?: string; quiet?: boolean | string } = {}): Command {
  cmd.option('--json', options.json ?? 'print the result as one JSON object');
  if (options.junit) cmd.option('--junit <file>', options.junit);
  if (options.quiet)
    cmd.option('--quiet', typeof options.quiet === 'string' ? options.quiet : 'print only failed deliveries and the summary');
  return cmd;
}
