import { Option } from 'commander';
import { defineCommand } from '../../cli/spec.js';
import { pick } from '../../cli/io.js';
import type { InitOptions } from '../../project/init.js';
import { UsageError } from '../../util/errors.js';
import { listOption } from '../../util/shapes.js';
import { PROVIDER_NAMES } from '../../providers/names.js';

export interface InitFlags {
  provider?: string;
  secretEnv?: string;
  secret?: string;
  url?: string;
  receiver?: string;
  inbox?: string;
  stored?: string;
  processed?: string;
  skip?: string;
  force?: boolean;
  json?: boolean;
}

export const init = defineCommand<InitFlags, InitOptions>({
  name: 'init',
  declare: (cmd) =>
    cmd
      .description('write hookdrill.config.json, so check, chaos and send run with no flags (asks at a terminal; else from flags)')
      .option('--provider <name>', `${PROVIDER_NAMES.join(', ')}, or one the project file declares`)
      .option('--secret-env <NAME>', 'the environment variable holding the signing secret (the secret itself is never written)')
      .option('--url <url>', 'where the receiver listens')
      .option('--receiver <command>', 'the shell command that starts it')
      .option('--inbox <file|url>', 'its hookdrill inbox')
      .option('--stored <command>', 'or: a command printing the delivery ids it holds')
      .option('--processed <command>', 'a command printing the delivery ids it has processed')
      .option('--skip <cases>', 'check cases to skip (comma list)')
      .option('--force', 'replace a hookdrill.config.json that is already there')
      .option('--json', 'print the result as JSON')
      // Every other command takes --secret: here it is caught to say what init takes instead
      // (commander's own guess for it was --stored).
      .addOption(new Option('--secret <value>').hideHelp()),
  options: ({ flags }) => {
    if (flags.secret !== undefined)
      throw new UsageError(
        'init writes no secret: --secret-env NAME names the environment variable that holds it (check, chaos and send read it from there)',
      );
    return {
      ...pick(flags, ['provider', 'secretEnv', 'url', 'receiver', 'inbox', 'stored', 'processed']),
      ...(flags.skip !== undefined ? { skip: listOption(flags.skip, '--skip') } : {}),
      ...(flags.force ? { force: true } : {}),
    };
  },
  async execute(options, flags) {
    const [{ run }, { askForProjectFile }] = await Promise.all([import('../../project/init.js'), import('./ask.js')]);
    // At a terminal, what the flags left out is asked for; in CI (or piped) the flags are all there is.
    const interactive = process.stdin.isTTY === true && process.stdout.isTTY === true && !process.env.CI;
    const settings = interactive ? await askForProjectFile(options) : options;
    const result = await run(settings);
    // The values are the user's own (flags, answers): escaped all the same, as every printed line is.
    const { safe, safeJson } = await import('../../util/terminal.js');
    process.stdout.write(
      flags.json
        ? `${safeJson(JSON.stringify(result, null, 2))}\n`
        : `wrote ${safe(result.file)}: ${Object.entries(result.config)
            .map(([k, v]) => safe(`${k} ${Array.isArray(v) ? v.join(',') : v}`))
            .join(' · ')}\n`,
    );
  },
});
