import { safeOutput } from '../../util/terminal.js';
import { Option } from 'commander';
import { defineCommand } from '../../cli/spec.js';
import { SCHEMA_HELP, inboxOptions } from '../../cli/flags/inbox.js';
import { pick } from '../../cli/io.js';
import { CHAOS_DEFAULTS as D } from '../../chaos/defaults.js';
import { formatDuration } from '../../util/duration.js';
import { declareOutput } from '../../cli/flags/output.js';
import type { OutputFlags } from '../../cli/flags/output.js';
import { declareSigner, signerOptions } from '../../cli/flags/signer.js';
import type { SignerFlags } from '../../cli/flags/signer.js';
import { declareTiming } from '../../cli/flags/timing.js';
import type { ChaosOptions } from '../../chaos/run.js';

export interface ChaosFlags extends SignerFlags, OutputFlags {
  receiver?: string;
  url?: string;
  inbox?: string;
  schema?: string;
  stored?: string;
  processed?: string;
  profile?: string;
  events?: string;
  concurrency?: string;
  rounds?: string;
  killAfter?: string;
  killPoint?: string;
  signal?: string;
  readyTimeout?: string;
  settle?: string;
  settleMax?: string;
  timeScale?: string;
  scaleTimeout?: boolean;
  duplicates?: string;
  allowReprocess?: boolean;
  powerCut?: string;
}

export const chaos = defineCommand<ChaosFlags, ChaosOptions>({
  name: 'chaos',
  declare: (cmd) => {
    cmd
      .description('start your receiver, SIGKILL it right after it answers 200, restart it, and prove nothing acknowledged was lost')
      .argument('[fixtures...]', "what to send (default: the provider's default fixture)")
      .option('--receiver <command>', 'shell command that starts the receiver (PORT is set from --url) [project file: receiver]')
      .option('--url <url>', 'where the receiver listens, e.g. http://127.0.0.1:3000/webhooks [project file: url]');
    declareSigner(cmd, { provider: 'whose signing and timing to use', secret: 'signing secret' });
    cmd
      .option(
        '--inbox <file|url>',
        'the receiver is hookdrill listen (or uses a hookdrill inbox): read it directly; or postgres://user@host/db, redis://host:6379/QUEUE',
      )
      .option('--schema <name>', SCHEMA_HELP)
      .option('--stored <command>', 'a command that prints the delivery ids the receiver holds, one per line')
      .option('--processed <command>', 'a command that prints the ids whose work was done (twice = processed twice)');
    declareTiming(cmd, ['profile', 'timeScale', 'scaleTimeout'], {
      profile: 'timing profile for the retries after a restart',
      timeScale: `scale the profile's retry delays; the timeout stays the provider's own (default: ${D.timeScale})`,
    });
    cmd
      .option('--events <n>', `events per round (default: ${D.events})`)
      .option('--concurrency <n>', `requests in flight at most (default: ${D.concurrency})`)
      .option('--rounds <n>', `kill-and-restart rounds (default: ${D.rounds})`)
      .option('--kill-after <k>', `kill the moment the K-th 2xx of a round arrives (default: ${D.killAfter})`)
      .addOption(
        new Option('--kill-point <when>', `after-ack, or a random moment, mid-request included (default: ${D.killPoint})`).choices([
          'after-ack',
          'random',
        ]),
      )
      .addOption(
        new Option('--signal <signal>', `KILL, or TERM (then KILL after 2 s if ignored) (default: ${D.signal})`).choices(['KILL', 'TERM']),
      )
      .option(
        '--ready-timeout <duration>',
        `how long the receiver may take to accept connections (default: ${formatDuration(D.readyTimeoutMs)})`,
      )
      .option(
        '--duplicates <n>',
        `after each restart, send again this many of the last round's acknowledged deliveries, as providers do: each must get 2xx and be stored once (default: ${D.duplicates})`,
      )
      .option('--allow-reprocess', 'the handler is idempotent by design: a delivery processed twice does not fail the run')
      .option(
        '--power-cut <dir>',
        'the receiver keeps its data in DIR (also $DATA_DIR): chaos mounts a fresh filesystem there and each kill is a power cut, so only what was synced survives (root, loop devices)',
      )
      .option('--settle <duration>', `wait after the last retry before reading what is stored (default: ${formatDuration(D.settleMs)})`)
      .option(
        '--settle-max <duration>',
        `with --inbox and --processed: then wait at most this long for rows a killed worker still leases (default: ${formatDuration(D.settleMaxMs)})`,
      );
    return declareOutput(cmd, { junit: 'write a JUnit report, one test case per round' });
  },
  options: ({ args, flags, env }) => ({
    fixtures: (args[0] as string[] | undefined) ?? [],
    ...pick(flags, [
      'receiver',
      'url',
      'stored',
      'processed',
      'profile',
      'events',
      'concurrency',
      'rounds',
      'killAfter',
      'killPoint',
      'readyTimeout',
      'settle',
      'settleMax',
      'timeScale',
      'scaleTimeout',
      'duplicates',
      'allowReprocess',
      'powerCut',
    ]),
    ...(flags.signal !== undefined ? { killSignal: flags.signal as 'KILL' | 'TERM' } : {}),
    ...inboxOptions(flags),
    ...signerOptions(flags, env),
  }),
  async execute(options, flags) {
    const [{ run }, { renderChaos, renderChaosJunit, renderSettleWait }, { killAllReceivers }, io] = await Promise.all([
      import('../../chaos/run.js'),
      import('../../render/chaos.js'),
      import('../../harness/supervisor.js'),
      import('../../cli/io.js'),
    ]);
    if (flags.junit) io.checkWritable(flags.junit);
    // Ctrl-C, or a CI job's timeout (SIGTERM): the round in hand ends with its kill and what was
    // done is reported; a second signal kills the receiver and leaves at once. No receiver
    // outlives hookdrill either way.
    const stop = io.interruptOnSignals(killAllReceivers);
    const result = await run({
      ...options,
      signal: stop.signal,
      onSettleWait: (w) => process.stderr.write(safeOutput(renderSettleWait(w))),
    }).finally(() => stop.dispose());
    if (flags.junit) io.writeAtomically(flags.junit, renderChaosJunit(result));
    io.printResult(result, flags.json, renderChaos);
    // Interrupted: no verdict either way, so the signal's own code (130, 143), as check exits.
    const received = stop.received();
    if (received && result.interrupted) process.exitCode = io.SIGNAL_EXIT[received];
  },
});
