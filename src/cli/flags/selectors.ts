import type { Command } from 'commander';
import type { SelectorFlags } from '../../inbox/selector.js';
import { collect } from './signer.js';
import { UsageError } from '../../util/errors.js';

/** The row-selecting flags as commander gives them: --id arrives as `id`. */
export interface SelectorFlagsRaw extends Omit<SelectorFlags, 'ids' | 'check'> {
  id?: string[] | string;
  excludeCheck?: boolean;
  checkRun?: string;
}

/** --status (repeatable), --type, --since, --until, --error, --source; and --id where the command takes several. */
export function declareSelectors(cmd: Command, statusHelp: string, options: { ids?: boolean } = {}): Command {
  if (options.ids) cmd.option('--id <id>', 'a delivery id (repeatable)', collect);
  return cmd
    .option('--status <status>', statusHelp, collect)
    .option('--type <type>', 'only this event type')
    .option('--since <time>', 'received at or after: ISO time or a time ago (2h)')
    .option('--until <time>', 'received before: ISO time or a time ago')
    .option('--error <text>', 'only rows whose last error contains this text')
    .option('--without-error', 'only rows with no recorded error (the "(no error recorded)" group)')
    .option('--source <provider>', 'only deliveries from this provider')
    .option('--route <name>', "only deliveries listen gave this route (listen --route, the project file's routes)")
    .option('--exclude-check', 'leave out the rows hookdrill check sent (marked X-Hookdrill-Check)')
    .option('--check-run <id>', 'only the rows one hookdrill check run sent (the run id check prints)');
}

export function selectorOptions(flags: SelectorFlagsRaw): SelectorFlags {
  const out: SelectorFlags = {};
  if (Array.isArray(flags.id)) out.ids = flags.id;
  if (flags.status) out.status = flags.status;
  for (const key of ['type', 'since', 'until', 'error', 'source', 'route'] as const) if (flags[key] !== undefined) out[key] = flags[key];
  if (flags.excludeCheck && flags.checkRun !== undefined) throw new UsageError('give one of --exclude-check and --check-run, not both');
  if (flags.excludeCheck) out.check = false;
  if (flags.withoutError) out.withoutError = true;
  if (flags.checkRun !== undefined) out.check = flags.checkRun;
  return out;
}
