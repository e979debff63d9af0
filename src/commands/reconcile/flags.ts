import { defineCommand } from '../../cli/spec.js';
import { pick } from '../../cli/io.js';
import { SCHEMA_HELP, inboxOptions } from '../../cli/flags/inbox.js';
import { declareOutput } from '../../cli/flags/output.js';
import type { OutputFlags } from '../../cli/flags/output.js';
import { collect, declareSecretSources, secretsFrom } from '../../cli/flags/signer.js';
import type { ReconcileOptions, ReconcileProgress } from '../../reconcile/run.js';

export interface ReconcileFlags extends OutputFlags {
  provider?: string;
  since?: string;
  until?: string;
  apiKeyEnv?: string;
  apiBase?: string;
  apiTimeout?: string;
  repo?: string;
  org?: string;
  hookId?: string;
  app?: boolean;
  appId?: string;
  inbox?: string;
  schema?: string;
  stored?: string;
  onlyFailed?: boolean;
  type?: string[];
  fix?: boolean;
  redeliverTo?: string;
  secret?: string[];
  concurrency?: string;
  dryRun?: boolean;
  withPayloads?: boolean;
}

export const reconcile = defineCommand<ReconcileFlags, ReconcileOptions>({
  name: 'reconcile',
  declare: (cmd) => {
    cmd
      .description("find the events that never arrived: the sender's record (its API) against what the receiver holds")
      .option('--provider <name>', 'stripe or github [project file: provider]')
      .option('--since <time>', 'from (3d, 12h, or an ISO time)')
      .option('--until <time>', 'to (default: now)')
      .option(
        '--api-key-env <NAME>',
        'the environment variable holding the API credential (default: STRIPE_API_KEY; GITHUB_TOKEN; with --app-id GITHUB_APP_PRIVATE_KEY); never printed',
      )
      .option(
        '--api-base <url>',
        "the provider's API (default: https://api.stripe.com, https://api.github.com; for a mock server or GitHub Enterprise)",
      )
      .option('--api-timeout <duration>', 'each API request, headers and body (default: 30s)')
      .option('--repo <owner/name>', "GitHub: a repository's webhook (with --hook-id)")
      .option('--org <name>', "GitHub: an organization's webhook (with --hook-id)")
      .option('--hook-id <n>', "GitHub: the webhook's id (in its settings URL)")
      .option('--app', "GitHub: the GitHub App's webhook (the credential is the app's JWT, or give --app-id)")
      .option('--app-id <id>', "GitHub: the app's id; the credential variable then holds its private key (PEM) and a JWT is made from both")
      .option('--inbox <file|url>', 'what the receiver holds: its hookdrill inbox (missing, and held but dead)')
      .option('--schema <name>', SCHEMA_HELP)
      .option('--stored <command>', 'or: a command printing the delivery ids it holds, one per line')
      .option('--only-failed', 'only events the sender itself saw fail to deliver (Stripe delivery_success=false, GitHub status=failure)')
      .option(
        '--type <type>',
        'only this event type (repeatable; Stripe: invoice.* too, at most 20; GitHub: issues or issues.opened)',
        collect,
      )
      .option(
        '--fix',
        'put the missing events into --inbox as pending (origin: reconcile) for its worker; a late real delivery is then a duplicate',
      )
      .option('--redeliver-to <url>', 'or: sign the missing events as the provider does (original ids) and deliver each once to this URL');
    declareSecretSources(cmd, 'the signing secret for --redeliver-to');
    cmd
      .option('--concurrency <n>', 'with --redeliver-to: requests in flight at most (default: 8)')
      .option('--dry-run', 'with --fix or --redeliver-to: say what would happen, change nothing')
      .option('--with-payloads', "--json: each missing event's payload and headers, as the sender's API gives them");
    return declareOutput(cmd, {
      json: 'print the result as JSON',
      junit: 'write a JUnit report: a failed case per missing event, a case per dead one, one for the rest',
    });
  },
  options: ({ flags, env }) => {
    const secrets = secretsFrom(flags, env, flags.redeliverTo !== undefined);
    return {
      ...pick(flags, [
        'provider',
        'since',
        'until',
        'apiKeyEnv',
        'apiBase',
        'apiTimeout',
        'stored',
        'repo',
        'org',
        'hookId',
        'appId',
        'redeliverTo',
        'concurrency',
      ]),
      ...inboxOptions(flags),
      ...(flags.app ? { app: true } : {}),
      ...(flags.onlyFailed ? { onlyFailed: true } : {}),
      ...(flags.type?.length ? { types: flags.type } : {}),
      ...(flags.fix ? { fix: true } : {}),
      ...(flags.dryRun ? { dryRun: true } : {}),
      ...(flags.withPayloads ? { withPayloads: true } : {}),
      ...(secrets.length ? { secrets } : {}),
      env,
    };
  },
  async execute(options, flags) {
    const [{ run }, { renderReconcile, renderReconcileJunit }, { createStatusLine }, io] = await Promise.all([
      import('../../reconcile/run.js'),
      import('../../render/reconcile.js'),
      import('../../render/progress.js'),
      import('../../cli/io.js'),
    ]);
    if (flags.junit) io.checkWritable(flags.junit);
    const line = createStatusLine();
    const interrupt = io.interruptOnSignals();
    try {
      const result = await run({
        ...options,
        signal: interrupt.signal,
        ...(line ? { onProgress: (p) => line.update(progressText(p)) } : {}),
      });
      line?.stop();
      if (flags.junit) io.writeAtomically(flags.junit, renderReconcileJunit(result));
      io.printResult(result, flags.json, renderReconcile);
    } finally {
      line?.stop();
      interrupt.dispose();
    }
  },
});

const PHASES = {
  listing: "listing the sender's record",
  comparing: 'comparing with the receiver',
  fetching: 'fetching payloads',
  redelivering: 'redelivering',
} as const;

function progressText(p: ReconcileProgress): string {
  return `${PHASES[p.phase]}: ${p.done}${p.total !== undefined ? ` of ${p.total}` : ' events'}`;
}
