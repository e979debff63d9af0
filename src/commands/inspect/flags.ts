import { safeOutput, safeJson } from '../../util/terminal.js';
import { defineCommand } from '../../cli/spec.js';
import { INBOX_DEFAULT_HELP, SCHEMA_HELP, inboxOrDefault } from '../../cli/flags/inbox.js';
import { UsageError } from '../../util/errors.js';
import { declareSelectors, selectorOptions } from '../../cli/flags/selectors.js';
import type { SelectorFlagsRaw } from '../../cli/flags/selectors.js';
import { INSPECT_DEFAULTS } from '../../incident/inspect-defaults.js';
import type { InspectOptions } from '../../incident/inspect.js';

export interface InspectFlags extends SelectorFlagsRaw {
  inbox?: string;
  schema?: string;
  body?: boolean;
  limit?: string;
  order?: string;
  after?: string;
  watch?: string;
  json?: boolean;
}

export const inspect = defineCommand<InspectFlags, InspectOptions>({
  name: 'inspect',
  declare: (cmd) => {
    cmd
      .description('see what an inbox holds: counts, the oldest pending, dead rows by error; or rows, or one delivery')
      .option(
        '--inbox <file|url>',
        `the inbox file (opened read-only: safe while listen runs); or postgres://user@host/db, redis://host:6379/QUEUE ${INBOX_DEFAULT_HELP}`,
      )
      .option('--schema <name>', SCHEMA_HELP)
      .option('--id <id>', 'one delivery in full')
      .option(
        '--body',
        "with --id: print the body as received, nothing else (a secret carried in it, as Graph's clientState is, taken out)",
      )
      .option('--limit <n>', `rows to list (default: ${INSPECT_DEFAULTS.limit})`)
      .option('--order <newest|oldest>', `which rows a list starts with (default: ${INSPECT_DEFAULTS.order})`)
      .option('--after <cursor>', 'the next page of a list: the cursor its last line (or "next" in --json) gave');
    declareSelectors(cmd, 'only rows in this status: pending, working, done, dead (repeatable)');
    return cmd
      .option('--watch <seconds>', 'refresh the overview every N seconds (Ctrl-C to stop)')
      .option('--json', 'print the result as JSON');
  },
  options: ({ flags }) => {
    // inspect's --id names one delivery (a string), not a list.
    const { id, ...rest } = flags;
    if (flags.body && !id) throw new UsageError('--body goes with --id');
    return {
      ...inboxOrDefault(flags),
      ...selectorOptions(rest),
      ...(typeof id === 'string' ? { id } : {}),
      ...(flags.limit !== undefined ? { limit: flags.limit } : {}),
      ...(flags.order !== undefined ? { order: flags.order as InspectOptions['order'] } : {}),
      ...(flags.after !== undefined ? { after: flags.after } : {}),
    };
  },
  async execute(options, flags) {
    const [{ run }, render, { sleep }] = await Promise.all([
      import('../../incident/inspect.js'),
      import('../../render/inspect.js'),
      import('../../util/wait.js'),
    ]);
    if (flags.body) {
      const result = await run(options);
      if (result.view !== 'delivery') return;
      const first = result.deliveries[0];
      if (first?.body === null) throw new UsageError(`the body of ${options.id} was pruned`);
      process.stdout.write(first?.body ?? Buffer.alloc(0));
      return;
    }
    const show = async () => {
      const result = await run(options);
      return flags.json ? `${safeJson(render.inspectJson(result))}\n` : safeOutput(render.renderInspect(result));
    };
    if (flags.watch === undefined) {
      process.stdout.write(await show());
      return;
    }
    const seconds = Number(flags.watch);
    if (!(seconds > 0)) throw new UsageError(`--watch ${flags.watch}: expected seconds above 0`);
    const tty = process.stdout.isTTY === true;
    for (;;) {
      const text = await show();
      // On a terminal, redraw in place; piped, print one view after another.
      process.stdout.write(tty ? `\u001b[H\u001b[2J${text}` : `${text}\n`);
      await sleep(seconds * 1000);
    }
  },
});
