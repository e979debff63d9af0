import { defineCommand } from '../../cli/spec.js';
import { pick } from '../../cli/io.js';
import { SCHEMA_HELP, inboxOptions } from '../../flags/inbox.js';
import type { ReconcileOptions } from './run.js';

export interface ReconcileFlags {
  provider?: string;
  since?: string;
  until?: string;
  apiKeyEnv?: string;
  apiBase?: string;
  inbox?: string;
  schema?: string;
  stored?: string;
  onlyFailed?: boolean;
  fix?: boolean;
  dryRun?: boolean;
  json?: boolean;
}

export const reconcile = defineCommand<ReconcileFlags, ReconcileOptions>({
  name: 'reconcile',
  declare: (cmd) =>
    cmd
      .description("find the events that never arrived: the sender's record (its API) against what the receiver holds")
      .option('--provider <name>', 'stripe [project file: provider]')
      .option('--since <time>', 'from (3d, 12h, or an ISO time)')
      .option('--until <time>', 'to (default: now)')
      .option('--api-key-env <NAME>', 'the environment variable holding the API key (default: STRIPE_API_KEY); never printed')
      .option('--api-base <url>', "the provider's API (default: https://api.stripe.com; for a mock server or tests)")
      .option('--inbox <file|url>', 'what the receiver holds: its hookdrill inbox (missing, and held but dead)')
      .option('--schema <name>', SCHEMA_HELP)
      .option('--stored <command>', 'or: a command printing the delivery ids it holds, one per line')
      .option('--only-failed', 'only events Stripe itself saw fail to deliver (delivery_success=false)')
      .option(
        '--fix',
        'put the missing events into --inbox as pending (origin: reconcile) for its worker; a late real delivery is then a duplicate',
      )
      .option('--dry-run', 'with --fix: say how many would be put, put nothing')
      .option('--json', 'print the result as JSON'),
  options: ({ flags, env }) => ({
    ...pick(flags, ['provider', 'since', 'until', 'apiKeyEnv', 'apiBase', 'stored']),
    ...inboxOptions(flags),
    ...(flags.onlyFailed ? { onlyFailed: true } : {}),
    ...(flags.fix ? { fix: true } : {}),
    ...(flags.dryRun ? { dryRun: true } : {}),
    env,
  }),
  async execute(options, flags) {
    const [{ run }, { renderReconcile }, io] = await Promise.all([
      import('./run.js'),
      import('../../render/reconcile.js'),
      import('../../cli/io.js'),
    ]);
    io.printResult(await run(options), flags.json, renderReconcile);
  },
});
