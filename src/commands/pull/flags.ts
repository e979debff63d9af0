import { safeOutput, safeJson } from '../../util/terminal.js';
import { Option } from 'commander';
import { defineCommand } from '../../cli/spec.js';
import { pick } from '../../cli/io.js';
import { SCHEMA_HELP, inboxOptions } from '../../cli/flags/inbox.js';
import { collect, declareSecretSources, secretsFrom } from '../../cli/flags/signer.js';
import { declareTiming, timingOptions } from '../../cli/flags/timing.js';
import type { TimingFlags } from '../../cli/flags/timing.js';
import type { PullOptions } from '../../pull/run.js';
import { PULL_DEFAULTS } from '../../pull/defaults.js';

export interface PullFlags extends TimingFlags {
  provider?: string;
  to?: string;
  toInbox?: string;
  schema?: string;
  secret?: string[];
  follow?: boolean;
  interval?: string;
  type?: string[];
  since?: string;
  fromNow?: boolean;
  resetCursor?: boolean;
  state?: string;
  skipFailed?: boolean;
  concurrency?: string;
  apiKeyEnv?: string;
  apiBase?: string;
  apiTimeout?: string;
  apiVersion?: string;
  repo?: string;
  org?: string;
  hookId?: string;
  app?: boolean;
  appId?: string;
  json?: boolean;
}

export const pull = defineCommand<PullFlags, PullOptions>({
  name: 'pull',
  declare: (cmd) => {
    cmd
      .description(
        "bring real events from the provider's API (Stripe's events, a GitHub hook's deliveries) to a local receiver, signed with your secret: no tunnel, and what happened while it was off is caught up from a saved cursor",
      )
      .addOption(new Option('--provider <name>', 'stripe or github [project file: provider]').choices(['stripe', 'github']))
      .option('--to <url>', 'the receiver to deliver to, e.g. http://127.0.0.1:3000/webhooks')
      .option(
        '--to-inbox <file|url>',
        'or: put each event straight into this hookdrill inbox as pending (origin: pull), as reconcile --fix does',
      )
      .option('--schema <name>', SCHEMA_HELP);
    declareSecretSources(cmd, "your receiver's signing secret, to sign each event with (not the provider's)");
    cmd
      .option('--follow', 'keep polling for new events until Ctrl-C (which prints a summary and keeps the cursor)')
      .option(
        '--interval <duration>',
        `between polls with --follow (default: stripe ${PULL_DEFAULTS.intervalMs.stripe / 1000}s, 1,800 requests an hour; github ${PULL_DEFAULTS.intervalMs.github / 1000}s, 360 an hour — 7% of GitHub's 5,000 — plus one per new delivery)`,
      )
      .option(
        '--type <type>',
        'only this event type (repeatable; Stripe: invoice.* too, at most 20; GitHub: issues or issues.opened); kept with the cursor: another --type on the same state is refused',
        collect,
      )
      .option('--since <time>', 'a first run starts this far back (2h, or an ISO time); a saved cursor wins unless --reset-cursor')
      .option(
        '--from-now',
        'a first run starts from now (as it does anyway); with --reset-cursor, skip what happened since the saved cursor',
      )
      .option(
        '--reset-cursor',
        'move the saved cursor to --since or --from-now (without it, a saved cursor wins: the same command run twice resumes)',
      )
      .option(
        '--state <file>',
        'where the cursor is kept (default: .hookdrill/pull/<provider>-<account or hook>.json); written only after the receiver acknowledged, so a crash in between delivers that one event twice, with the same id; one pull at a time on it (a lock file beside it)',
      )
      .option('--skip-failed', 'an event the receiver keeps failing is skipped (and listed) instead of holding the cursor')
      .option('--concurrency <n>', `requests in flight at most (default: ${PULL_DEFAULTS.concurrency}: in order)`);
    declareTiming(cmd, ['profile', 'timeout', 'retryDelays', 'timeScale', 'scaleTimeout', 'delayScale', 'retry'], {
      retry: 'one attempt per event (a failure holds the cursor, or is skipped with --skip-failed)',
    });
    cmd
      .option(
        '--api-key-env <NAME>',
        'the environment variable holding the API credential (default: STRIPE_API_KEY — a restricted key that reads events is enough; GITHUB_TOKEN; with --app-id GITHUB_APP_PRIVATE_KEY); never printed',
      )
      .option(
        '--api-base <url>',
        "the provider's API (default: https://api.stripe.com, https://api.github.com; for a mock server or GitHub Enterprise)",
      )
      .option('--api-timeout <duration>', 'each API request, headers and body (default: 30s)')
      .option(
        '--api-version <version>',
        "Stripe: the Stripe-Version to render events at (default: the account's, as an endpoint without one gets)",
      )
      .option('--repo <owner/name>', "GitHub: a repository's webhook (with --hook-id)")
      .option('--org <name>', "GitHub: an organization's webhook (with --hook-id)")
      .option('--hook-id <n>', "GitHub: the webhook's id (in its settings URL); it may point anywhere: GitHub records every delivery")
      .option('--app', "GitHub: the GitHub App's webhook (the credential is the app's JWT, or give --app-id)")
      .option('--app-id <id>', "GitHub: the app's id; the credential variable then holds its private key (PEM)")
      .option('--json', 'one JSON object per line: each event, each note, then the summary');
    return cmd;
  },
  options: ({ flags, env }) => {
    const secrets = secretsFrom(flags, env, flags.to !== undefined);
    const { inbox } = inboxOptions({ ...(flags.toInbox !== undefined ? { inbox: flags.toInbox } : {}), ...pick(flags, ['schema']) });
    return {
      ...pick(flags, [
        'provider',
        'to',
        'interval',
        'since',
        'state',
        'concurrency',
        'apiKeyEnv',
        'apiBase',
        'apiTimeout',
        'apiVersion',
        'repo',
        'org',
        'hookId',
        'appId',
      ]),
      ...timingOptions(flags),
      ...(inbox !== undefined ? { toInbox: inbox } : {}),
      ...(secrets.length ? { secrets } : {}),
      ...(flags.follow ? { follow: true } : {}),
      ...(flags.fromNow ? { fromNow: true } : {}),
      ...(flags.resetCursor ? { resetCursor: true } : {}),
      ...(flags.skipFailed ? { skipFailed: true } : {}),
      ...(flags.app ? { app: true } : {}),
      ...(flags.type?.length ? { types: flags.type } : {}),
      env,
    };
  },
  async execute(options, flags) {
    const [{ run }, render, { createStatusLine }, io, { retryLine }, { attemptHint }] = await Promise.all([
      import('../../pull/run.js'),
      import('../../render/pull.js'),
      import('../../render/progress.js'),
      import('../../cli/io.js'),
      import('../../render/send.js'),
      import('../../render/attempt-hint.js'),
    ]);
    const json = flags.json === true;
    const line = createStatusLine();
    const print = (text: string) => {
      line?.stop();
      process.stdout.write(safeOutput(`${text}\n`));
    };
    const interrupt = io.interruptOnSignals();
    try {
      const result = await run({
        ...options,
        signal: interrupt.signal,
        onStart: (s) => print(render.startLine(s, json)),
        onEvent: (r) => print(render.pulledLine(r, json)),
        onNote: (text) => print(render.noteLine(text, json)),
        // A failed attempt as it fails, with what to check: a receiver that is down must not look like a hang.
        onRetry: (r) => {
          line?.stop();
          if (json)
            process.stdout.write(`${safeJson(JSON.stringify({ event: 'retry', ...r, hint: attemptHint(r.failed, options.to) }))}\n`);
          else process.stderr.write(safeOutput(retryLine(r, options.to)));
        },
        ...(line ? { onStatus: (s) => line.update(render.statusText(s)) } : {}),
      });
      line?.stop();
      process.stdout.write(json ? `${safeJson(JSON.stringify({ event: 'summary', ...result }))}\n` : safeOutput(render.renderPull(result)));
      process.exitCode = result.ok ? 0 : 1;
    } finally {
      line?.stop();
      interrupt.dispose();
    }
  },
});
