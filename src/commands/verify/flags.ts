import { defineCommand } from '../../cli/spec.js';
import { SCHEMA_HELP, inboxOptions } from '../../cli/flags/inbox.js';
import { declareSigner, signerOptions } from '../../cli/flags/signer.js';
import type { SignerFlags } from '../../cli/flags/signer.js';
import { pick } from '../../cli/io.js';
import type { VerifyRequestOptions } from '../../verify/run.js';

export interface VerifyFlags extends SignerFlags {
  entry?: string;
  inbox?: string;
  schema?: string;
  id?: string;
  at?: string;
  ui?: string;
  refused?: string;
  publicUrl?: string;
  json?: boolean;
}

export const verify = defineCommand<VerifyFlags, VerifyRequestOptions>({
  name: 'verify',
  declare: (cmd) => {
    cmd
      .description(
        "say whether a captured request's signature is valid, and when it is not, why: the timestamp's age, a changed body (line ends, whitespace, escapes, charset), which secret, a malformed header",
      )
      .argument('[capture]', 'a raw HTTP request or a HAR file; - or nothing reads a raw request from stdin');
    declareSigner(cmd, {
      provider: 'whose signature it carries (default: the one whose header it has)',
      secret: 'signing secret; give it twice to try two',
    });
    return cmd
      .option('--entry <n>', 'with a HAR file: which entry (default: its only POST)')
      .option('--inbox <file|url>', 'or: verify a row of this inbox (with --id and --provider)')
      .option('--schema <name>', SCHEMA_HELP)
      .option('--id <delivery-id>', 'with --inbox: the row')
      .option(
        '--ui <url>',
        "or: a request listen --ui refused — the inspector's URL, and --refused; its token from HOOKDRILL_UI_TOKEN (a ?token= in the URL is visible to every local user in the process list)",
      )
      .option(
        '--public-url <url>',
        "Square, HubSpot: the URL the receiver verifies over (default: the capture's own, tried with either scheme)",
      )
      .option('--refused <id>', "with --ui: the refused request's id (r12, as the inspector lists it)")
      .option('--at <time>', 'judge as of this moment (ISO time or Unix seconds; default: when the capture says it arrived, else now)')
      .option('--json', 'print the verdict as JSON');
  },
  options: ({ args, flags, env }) => ({
    ...(args[0] !== undefined ? { file: args[0] as string } : {}),
    ...pick(flags, ['entry', 'id', 'at', 'ui', 'refused', 'publicUrl']),
    ...(env.HOOKDRILL_UI_TOKEN ? { uiToken: env.HOOKDRILL_UI_TOKEN } : {}),
    ...inboxOptions(flags),
    ...signerOptions(flags, env),
  }),
  async execute(options, flags) {
    const [{ run }, { renderVerify }, io] = await Promise.all([
      import('../../verify/run.js'),
      import('../../render/verify.js'),
      import('../../cli/io.js'),
    ]);
    const result = await run({ ...options, stdin: process.stdin });
    // 0 valid, 1 invalid (printResult), 2 a capture that cannot be judged (a UsageError).
    io.printResult(result, flags.json, renderVerify);
  },
});
