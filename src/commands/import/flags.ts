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
    const [{ run }, io] = await Promise.all([import('../../fixtures/import/run.js'), import('../../cli/io.js')]);
    io.printResult(await run(options), flags.json, (r) => {
      const lines = r.skipped.map((s) => `skipped ${s.where}: ${s.why}`);
      lines.push(
        `imported into ${r.inbox}: ${r.read} read · ${r.stored} stored (pending) · ${r.duplicates} already there · ${r.skipped.length} skipped`,
      );
      return `${lines.join('\n')}\n`;
    });
  },
});
