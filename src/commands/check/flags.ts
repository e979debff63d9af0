import { defineCommand } from '../../cli/spec.js';
import { pick } from '../../cli/io.js';
import { declareOutput } from '../../flags/output.js';
import type { OutputFlags } from '../../flags/output.js';
import { declareSigner, signerOptions } from '../../flags/signer.js';
import type { SignerFlags } from '../../flags/signer.js';
import { RECEIVER_DEFAULTS } from '../../receiver/defaults.js';
import type { CheckOptions } from './run.js';

export interface CheckFlags extends SignerFlags, OutputFlags {
  url: string;
  inbox?: string;
  stored?: string;
  only?: string;
  skip?: string;
  maxBytes?: string;
}

export const check = defineCommand<CheckFlags, CheckOptions>({
  name: 'check',
  declare: (cmd) => {
    cmd
      .description('run a conformance battery against a receiver and name every way it mishandles webhooks')
      .requiredOption('--url <url>', 'the receiver, e.g. http://127.0.0.1:3000/webhooks');
    declareSigner(cmd, { provider: 'whose signing to use', secret: 'signing secret' });
    cmd
      .option('--inbox <file>', 'check what was stored in this hookdrill inbox')
      .option('--stored <command>', 'or: a command printing the stored delivery ids, one per line')
      .option('--only <cases>', 'run only these cases (comma list)')
      .option('--skip <cases>', 'skip these cases (comma list)')
      .option('--max-bytes <n>', `the receiver's body limit (default: ${RECEIVER_DEFAULTS.maxBytes / 1024 / 1024} MiB)`);
    return declareOutput(cmd, { junit: 'write a JUnit report, one test case per case' });
  },
  options: ({ flags, env }) => ({
    ...pick(flags, ['url', 'inbox', 'stored', 'only', 'skip', 'maxBytes']),
    ...signerOptions(flags, env),
  }),
  async execute(options, flags) {
    const [{ run }, { renderCheck, renderCheckJunit }, io] = await Promise.all([
      import('./run.js'),
      import('../../render/check.js'),
      import('../../cli/io.js'),
    ]);
    if (flags.junit) io.checkWritable(flags.junit);
    const result = await run(options);
    if (flags.junit) io.writeAtomically(flags.junit, renderCheckJunit(result));
    io.printResult(result, flags.json, renderCheck);
  },
});
