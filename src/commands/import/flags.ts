import { count } from '../../util/words.js';
import { defineCommand } from '../../cli/spec.js';
import { SCHEMA_HELP, inboxOptions } from '../../cli/flags/inbox.js';
import type { ImportOptions } from '../../fixtures/import/run.js';

export interface ImportFlags {
  inbox?: string;
  schema?: string;
  provider?: string;
  json?: boolean;
}

export const importCommand = defineCommand<ImportFlags, ImportOptions>({
  name: 'import',
  declare: (cmd) =>
    cmd
      .description('put captured deliveries into an inbox: HAR files, JSON arrays of events, JSON lines (stripe listen --format JSON)')
      .argument('<files...>', 'the files')
      .option('--inbox <file|url>', 'the inbox to put them in (created if missing) [project file: inbox]')
      .option('--schema <name>', SCHEMA_HELP)
      .option('--provider <name>', 'whose deliveries they are [project file: provider]')
      .option('--json', 'print the result as JSON'),
  options: ({ args, flags }) => ({
    files: (args[0] as string[] | undefined) ?? [],
    ...inboxOptions(flags),
    ...(flags.provider !== undefined ? { provider: flags.provider } : {}),
  }),
  async execute(options, flags) {
    const [{ run }, { createStatusLine }, { renderImport }, io] = await Promise.all([
      import('../../fixtures/import/run.js'),
      import('../../render/progress.js'),
      import('../../render/import.js'),
      import('../../cli/io.js'),
    ]);
    // At a terminal, a line of progress on stderr; Ctrl-C stops after the batch in hand.
    const line = createStatusLine();
    const stop = io.interruptOnSignals();
    const result = await run({
      ...options,
      signal: stop.signal,
      ...(line
        ? {
            onProgress: (p: { done: number; total: number }) =>
              line.update(`importing: ${count(p.done, 'capture')} of ${p.total.toLocaleString('en-US')}`),
          }
        : {}),
    }).finally(() => {
      line?.stop();
      stop.dispose();
    });
    io.printResult(result, flags.json, renderImport);
  },
});
