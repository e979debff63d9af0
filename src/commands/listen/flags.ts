import { defineCommand } from '../../cli/spec.js';
import { SIGNAL_EXIT, pick } from '../../cli/io.js';
import { formatDuration } from '../../duration.js';
import { declareSigner, signerOptions } from '../../flags/signer.js';
import type { SignerFlags } from '../../flags/signer.js';
import { RECEIVER_DEFAULTS } from '../../receiver/defaults.js';
import { DEFAULT_BACKOFF } from '../../worker/backoff.js';
import { WORKER_DEFAULTS } from '../../worker/defaults.js';
import { LISTEN_DEFAULTS } from './defaults.js';
import type { ListenOptions } from './run.js';

export interface ListenFlags extends SignerFlags {
  port?: string;
  host?: string;
  inbox?: string;
  forwardTo?: string;
  forwardTimeout?: string;
  commitBatch?: string;
  commitWait?: string;
  forwardSecret?: string;
  forwardOriginalHeaders?: boolean;
  maxBytes?: string;
  tolerance?: string;
  concurrency?: string;
  maxAttempts?: string;
  lease?: string;
  backoffBase?: string;
  backoffMax?: string;
  /** commander's name for --no-worker: false when given. */
  worker?: boolean;
  json?: boolean;
}

const ms = formatDuration;

export const listen = defineCommand<ListenFlags, ListenOptions>({
  name: 'listen',
  declare: (cmd) => {
    cmd.description('receive webhooks durably: verify, store in an inbox, answer 200, then process (forward) with retries');
    declareSigner(cmd, { provider: 'whose signatures to verify', secret: 'signing secret; repeat to accept several (rotation)' });
    return cmd
      .option('--port <port>', `port to listen on (0: any free port; default: ${LISTEN_DEFAULTS.port})`)
      .option('--host <address>', `address to listen on (default: ${LISTEN_DEFAULTS.host})`)
      .option('--inbox <file>', `the SQLite inbox file, created if missing (default: ${LISTEN_DEFAULTS.inbox})`)
      .option('--forward-to <url>', 'POST each stored delivery to your app; 2xx is done, anything else is retried')
      .option('--forward-timeout <duration>', `how long the app may take per forward (default: ${ms(LISTEN_DEFAULTS.forwardTimeoutMs)})`)
      .option('--forward-secret <secret>', 'sign forwards with this secret (default: --secret) [env: HOOKDRILL_FORWARD_SECRET]')
      .option('--forward-original-headers', 'forward the signature as received instead of signing anew (goes stale after 5 minutes)')
      .option('--max-bytes <n>', `bodies larger than this get 413 (default: ${RECEIVER_DEFAULTS.maxBytes / 1024 / 1024} MiB)`)
      .option('--tolerance <duration>', `how old (or new) a signed timestamp may be (default: ${RECEIVER_DEFAULTS.toleranceSec}s)`)
      .option(
        '--commit-batch <n>',
        `deliveries committed in one transaction at most: group commit (default: ${LISTEN_DEFAULTS.commitBatch}; 1: each delivery in its own)`,
      )
      .option('--commit-wait <duration>', 'with --commit-batch: how long a batch waits for more (default: 0, the current event-loop turn)')
      .option('--concurrency <n>', `deliveries processed at once (default: ${WORKER_DEFAULTS.concurrency})`)
      .option('--max-attempts <n>', `processing attempts before a delivery is dead (default: ${WORKER_DEFAULTS.maxAttempts})`)
      .option(
        '--lease <duration>',
        `how long a claim holds a row; a crashed worker releases it then (default: ${ms(WORKER_DEFAULTS.leaseMs)})`,
      )
      .option(
        '--backoff-base <duration>',
        `retry delay after the first failure, doubling with jitter (default: ${ms(DEFAULT_BACKOFF.baseMs)})`,
      )
      .option('--backoff-max <duration>', `longest retry delay (default: ${ms(DEFAULT_BACKOFF.maxMs)})`)
      .option('--no-worker', 'only receive and store; leave rows pending')
      .option('--json', 'one JSON object per line: ready, each request, each outcome, stopped');
  },
  options: ({ flags, env }) => {
    const forwardSecret = flags.forwardSecret ?? env.HOOKDRILL_FORWARD_SECRET;
    return {
      ...pick(flags, [
        'commitBatch',
        'commitWait',
        'port',
        'host',
        'inbox',
        'forwardTo',
        'forwardTimeout',
        'maxBytes',
        'tolerance',
        'concurrency',
        'maxAttempts',
        'lease',
        'backoffBase',
        'backoffMax',
      ]),
      ...signerOptions(flags, env),
      ...(forwardSecret ? { forwardSecret } : {}),
      forwardOriginalHeaders: flags.forwardOriginalHeaders === true,
      noWorker: flags.worker === false,
    };
  },
  async execute(options, flags) {
    const [{ start }, render] = await Promise.all([import('./run.js'), import('../../render/listen.js')]);
    const json = flags.json === true;
    const write = (line: string | undefined) => {
      if (line !== undefined) process.stdout.write(`${line}\n`);
    };
    const handle = await start({
      ...options,
      onRequest: (e) => write(render.requestLine(e, json)),
      onOutcome: (o) => write(render.outcomeLine(o, json)),
      onError: (err) => process.stderr.write(`hookdrill: inbox error: ${err instanceof Error ? err.message : String(err)}\n`),
    });
    write(render.readyLine(handle.ready, json));
    await new Promise<void>((resolve) => {
      // SIGINT, SIGTERM or SIGHUP (a closed terminal): the same clean stop; a second one means "now".
      const names = Object.keys(SIGNAL_EXIT) as (keyof typeof SIGNAL_EXIT)[];
      const onSignal = () => {
        for (const n of names) {
          process.off(n, onSignal);
          process.once(n, () => process.exit(SIGNAL_EXIT[n]));
        }
        resolve();
      };
      for (const n of names) process.on(n, onSignal);
    });
    write(render.summaryLine(await handle.stop(), json));
  },
});
