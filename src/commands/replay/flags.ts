import { defineCommand } from '../../cli/spec.js';
import { INBOX_DEFAULT_HELP, SCHEMA_HELP, inboxOrDefault } from '../../cli/flags/inbox.js';
import { declareTls, tlsOptions } from '../../cli/flags/tls.js';
import type { TlsFlags } from '../../cli/flags/tls.js';
import { pick } from '../../cli/io.js';
import { declareOutput } from '../../cli/flags/output.js';
import type { OutputFlags } from '../../cli/flags/output.js';
import { declareSelectors, selectorOptions } from '../../cli/flags/selectors.js';
import type { SelectorFlagsRaw } from '../../cli/flags/selectors.js';
import { declareSigner, signerOptions } from '../../cli/flags/signer.js';
import type { SignerFlags } from '../../cli/flags/signer.js';
import { declareTiming, timingOptions } from '../../cli/flags/timing.js';
import type { TimingFlags } from '../../cli/flags/timing.js';
import { REPLAY_DEFAULTS } from '../../incident/replay-defaults.js';
import type { ReplayOptions } from '../../incident/replay.js';

export interface ReplayFlags extends SelectorFlagsRaw, TlsFlags, SignerFlags, TimingFlags, OutputFlags {
  verbose?: boolean;
  inbox?: string;
  schema?: string;
  to: string;
  originalHeaders?: boolean;
  concurrency?: string;
  rate?: string;
  limit?: string;
}

export const replay = defineCommand<ReplayFlags, ReplayOptions>({
  name: 'replay',
  declare: (cmd) => {
    cmd
      .description('re-send stored deliveries to a URL: re-signed (fresh timestamp, original id) or with their original headers')
      .option('--inbox <file|url>', `the inbox file (read-only); or postgres://user@host/db, redis://host:6379/QUEUE ${INBOX_DEFAULT_HELP}`)
      .option('--schema <name>', SCHEMA_HELP)
      .requiredOption('--to <url>', 'where to send them');
    declareSigner(cmd, { provider: "sign as this provider (default: the rows' source)", secret: 'signing secret' });
    declareTls(cmd);
    cmd.option('--original-headers', 'send the stored headers untouched instead of re-signing');
    declareTiming(cmd, undefined, {
      profile: "retry on this timing profile's schedule (default: one attempt per row; 400, 401, 403, 404 and 410 are never retried)",
      timeout: "per-attempt timeout (default: the provider's)",
      retryDelays: 'retry on this schedule instead of one attempt per row (100ms,1s,5s)',
      timeScale: "retry on the provider's schedule, every delay multiplied by this (0.01)",
      retry: 'one attempt per row (the default, unless --profile, --retry-delays or --time-scale asks for a schedule)',
    });
    cmd
      .option('--concurrency <n>', `requests in flight at most (default: ${REPLAY_DEFAULTS.concurrency})`)
      .option('--rate <r>', 'deliveries started per second at most')
      .option('--limit <n>', `replay at most this many rows (default: ${REPLAY_DEFAULTS.limit})`);
    declareSelectors(cmd, 'only rows in this status (repeatable)', { ids: true });
    cmd.option('--verbose', "print each attempt's request (headers, body) and the answer on stderr");
    return declareOutput(cmd, { junit: 'write a JUnit report, one test case per delivery', quiet: true });
  },
  options: ({ flags, env }) => ({
    ...inboxOrDefault(flags),
    to: flags.to,
    ...selectorOptions(flags),
    ...signerOptions(flags, env),
    ...tlsOptions(flags),
    ...timingOptions(flags),
    ...pick(flags, ['concurrency', 'rate', 'limit']),
    originalHeaders: flags.originalHeaders === true,
  }),
  async execute(options, flags) {
    const [{ run, NothingToReplay }, { executeDeliveries }, { selectorText }, { safeJson, safeOutput }] = await Promise.all([
      import('../../incident/replay.js'),
      import('../send/execute.js'),
      import('../../render/inspect.js'),
      import('../../util/terminal.js'),
    ]);
    const nothing = (err: unknown) => {
      if (!(err instanceof NothingToReplay)) throw err;
      // As requeue: an empty match is said and is exit 0; --id naming no row, or only pruned rows, exit 1.
      const ok = err.matched === 0 && !err.selector.ids;
      const said = `${err.message} (${selectorText(err.selector)})`;
      process.stdout.write(
        flags.json ? `${safeJson(JSON.stringify({ command: 'replay', ok, matched: err.matched, said }))}\n` : safeOutput(`${said}\n`),
      );
      process.exitCode = ok ? 0 : 1;
    };
    await executeDeliveries((hooks) => run({ ...options, ...hooks }), flags, {
      suite: 'hookdrill replay',
      showCopy: false,
      expect: '2xx',
      url: options.to,
    }).catch(nothing);
  },
});
