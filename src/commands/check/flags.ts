import { forTerminal, safeOutput } from '../../util/terminal.js';
import { PUBLIC_URL_HELP } from '../../cli/flags/public-url.js';
import { defineCommand } from '../../cli/spec.js';
import { SCHEMA_HELP, inboxOptions } from '../../cli/flags/inbox.js';
import { declareTls, tlsOptions } from '../../cli/flags/tls.js';
import type { TlsFlags } from '../../cli/flags/tls.js';
import { pick } from '../../cli/io.js';
import { declareOutput } from '../../cli/flags/output.js';
import type { OutputFlags } from '../../cli/flags/output.js';
import { declareSigner, signerOptions } from '../../cli/flags/signer.js';
import type { SignerFlags } from '../../cli/flags/signer.js';
import { RECEIVER_DEFAULTS } from '../../receiver/defaults.js';
import type { CheckOptions } from '../../check/run.js';
import type { CaseStatus } from '../../check/cases/index.js';
import { CHECK_DEFAULTS } from '../../check/defaults.js';
import { RECEIVER_PROCESS_DEFAULTS } from '../../harness/defaults.js';
import { LISTEN_DEFAULTS } from '../../receiver/listen-defaults.js';
import { routeUnderCheck } from '../../check/route-of.js';
import { UsageError } from '../../util/errors.js';
import { PROJECT_FILE } from '../../project/file.js';
import type { Route } from '../../routes/types.js';
import type { ReceiveEntry } from '../../project/receive.js';

export interface CheckFlags extends TlsFlags, SignerFlags, OutputFlags {
  url?: string;
  publicUrl?: string;
  inbox?: string;
  schema?: string;
  stored?: string;
  only?: string;
  skip?: string;
  maxBytes?: string;
  timeout?: string;
  receiver?: string;
  readyTimeout?: string;
  runId?: string;
  contentType?: string;
  list?: boolean;
  route?: string;
  /** From the project file (with --route): listen's routes and the providers it receives. */
  projectRoutes?: Route[];
  projectReceive?: ReceiveEntry[];
}

export const check = defineCommand<CheckFlags, CheckOptions>({
  name: 'check',
  declare: (cmd) => {
    cmd
      .description('run a conformance battery against a receiver and name every way it mishandles webhooks')
      .option('--url <url>', 'the receiver, e.g. http://127.0.0.1:3000/webhooks [project file: url]')
      .option('--public-url <url>', PUBLIC_URL_HELP)
      .option('--receiver <command>', 'start the receiver with this shell command first (PORT is set from --url), stop it after')
      .option(
        '--route <name>',
        `judge the service a listen route of ${PROJECT_FILE} forwards to: its target URL, sent what listen forwards (re-signed with the receive secret, X-Hookdrill-* headers, the route's event types only), held to listen's forward timeout (${LISTEN_DEFAULTS.forwardTimeoutMs / 1000}s); what listen answers itself is skipped`,
      )
      .option(
        '--ready-timeout <duration>',
        `with --receiver: how long it may take to accept connections (default: ${RECEIVER_PROCESS_DEFAULTS.readyTimeoutMs / 1000}s)`,
      );
    declareSigner(cmd, { provider: 'whose signing to use', secret: 'signing secret' });
    declareTls(cmd);
    cmd
      .option('--inbox <file|url>', 'check what was stored in this hookdrill inbox; or postgres://user@host/db, redis://host:6379/QUEUE')
      .option('--schema <name>', SCHEMA_HELP)
      .option('--stored <command>', 'or: a command printing the stored delivery ids, one per line')
      .option('--list', 'print every case, what it proves and where it does not apply; then exit')
      .option('--only <cases>', 'run only these cases (comma list)')
      .option('--skip <cases>', 'skip these cases (comma list)')
      .option(
        '--timeout <duration>',
        `per attempt (default: the provider's own timeout for what it would send; at most ${CHECK_DEFAULTS.refusalTimeoutMs / 1000}s for requests that must be refused)`,
      )
      .option(
        '--max-bytes <n>',
        `the receiver's body limit: bytes, or 512KiB, 5MB, 32MiB (default: ${RECEIVER_DEFAULTS.maxBytes / 1024 / 1024} MiB)`,
      )
      .option('--content-type <type>', 'json, or form: the content type of the GitHub hook the receiver is behind (default: json)')
      .option(
        '--run-id <id>',
        'mark every request with X-Hookdrill-Check: ID (default: chk-<UTC time>-<random>); inspect --check-run ID finds the rows it left',
      );
    return declareOutput(cmd, {
      junit: 'write a JUnit report, one test case per case',
      quiet: 'print only failed and warning cases, then the verdict',
    });
  },
  options: ({ flags, env }) => (flags.route !== undefined ? routedOptions(flags, env) : directOptions(flags, env)),
  async execute(options, flags) {
    const [
      { run, listCases },
      { isNotAsked, renderCaseLine, renderCaseList, renderCheckEnd, renderCheckJunit, renderCheckErrorJunit },
      io,
      { UsageError },
    ] = await Promise.all([
      import('../../check/run.js'),
      import('../../render/check.js'),
      import('../../cli/io.js'),
      import('../../util/errors.js'),
    ]);
    if (flags.list) {
      const cases = listCases();
      io.show(flags.json, cases, () => renderCaseList(cases));
      return;
    }
    if (flags.junit) io.checkWritable(flags.junit);
    // Each case's line as it finishes: a receiver that hangs shows where, not minutes of nothing.
    // --quiet: only what needs a look (failures and warnings), then the verdict.
    // The cases --only left out are one line at the end ("26 cases not asked for"), not a SKIP each.
    const shown = (c: { status: CaseStatus; observed: string }) =>
      !isNotAsked(c) && (!flags.quiet || c.status === 'fail' || c.status === 'warn');
    // Ctrl-C, or a CI job's timeout (SIGTERM): the case in hand stops, what was judged is printed
    // and written to the JUnit report (the rest as skipped), and the exit code is the signal's.
    const stop = io.interruptOnSignals();
    const result = await run({
      ...options,
      signal: stop.signal,
      ...(flags.json ? {} : { onCase: (c) => shown(c) && process.stdout.write(forTerminal(safeOutput(renderCaseLine(c)))) }),
    })
      .catch((err: unknown) => {
        // Nothing could be judged (nothing listens, the receiver would not start, a --stored that
        // prints no delivery ids): the report holds that one error, not a failure per case.
        if (flags.junit && err instanceof UsageError) io.writeAtomically(flags.junit, renderCheckErrorJunit(options.provider, err.message));
        throw err;
      })
      .finally(() => stop.dispose());
    if (flags.junit) io.writeAtomically(flags.junit, renderCheckJunit(result));
    // At a terminal, wrapped at a space to its width: the terminal would break words at its edge.
    io.printResult(result, flags.json, (r) => forTerminal(renderCheckEnd(r)));
    // Ctrl-C may reach the --stored probe before hookdrill's own handler: its signal is the run's.
    const signal = stop.received() ?? result.interruptedBy;
    if (signal) process.exitCode = io.SIGNAL_EXIT[signal as keyof typeof io.SIGNAL_EXIT] ?? 130;
  },
});

function directOptions(flags: CheckFlags, env: NodeJS.ProcessEnv): CheckOptions {
  return {
    ...pick(flags, [
      'url',
      'publicUrl',
      'stored',
      'only',
      'skip',
      'maxBytes',
      'timeout',
      'receiver',
      'readyTimeout',
      'runId',
      'contentType',
    ]),
    ...inboxOptions(flags),
    ...signerOptions(flags, env),
    ...tlsOptions(flags),
  };
}

/** check --route: the route's target, provider, secrets and event types in place of --url, --provider and --secret. */
function routedOptions(flags: CheckFlags, env: NodeJS.ProcessEnv): CheckOptions {
  if (flags.url !== undefined) throw new UsageError(`check --route ${flags.route}: the route names the URL to check; leave --url out`);
  const { provider, secrets, ...rest } = directOptions(flags, env);
  const routed = routeUnderCheck({
    name: flags.route ?? '',
    routes: flags.projectRoutes,
    receive: flags.projectReceive,
    provider,
    secrets: [...(typeof secrets === 'string' ? [secrets] : (secrets ?? []))],
    env,
    file: PROJECT_FILE,
  });
  return { ...rest, ...routed };
}
