import { LISTEN_PUBLIC_URL_HELP } from '../../cli/flags/public-url.js';
import { RefusedLog } from '../../ui/refused.js';
import { resolveTarget } from '../../inbox/open.js';
import { parseIntFlag } from '../../util/options.js';
import { fitToColumns, safe, safeJson, safeOutput } from '../../util/terminal.js';
import { UsageError } from '../../util/errors.js';
import { exposedInspectorWarning, isLoopback } from '../../util/loopback.js';
import { defineCommand } from '../../cli/spec.js';
import { SCHEMA_HELP, inboxOptions } from '../../cli/flags/inbox.js';
import { pick } from '../../cli/io.js';
import { formatDuration, parseDuration, toleranceProblem } from '../../util/duration.js';
import { collect, declareSigner, secretsFrom, signerOptions } from '../../cli/flags/signer.js';
import { parseRouteFlag } from '../../routes/parse.js';
import type { Route } from '../../routes/types.js';
import type { ReceiveEntry } from '../../project/receive.js';
import { PROJECT_FILE } from '../../project/file.js';
import type { SignerFlags } from '../../cli/flags/signer.js';
import { RECEIVER_DEFAULTS } from '../../receiver/defaults.js';
import { DEFAULT_BACKOFF, deadAfter } from '../../worker/backoff.js';
import { WORKER_DEFAULTS } from '../../worker/defaults.js';
import { LISTEN_DEFAULTS } from '../../receiver/listen-defaults.js';
import type { ListenOptions } from '../../receiver/listen.js';

export interface ListenFlags extends SignerFlags {
  publicUrl?: string;
  trustProxy?: boolean;
  /** --ui alone: true; --ui 4041: the port. */
  ui?: boolean | string;
  uiHost?: string;
  port?: string;
  host?: string;
  inbox?: string;
  schema?: string;
  forwardTo?: string;
  forwardTimeout?: string;
  commitBatch?: string;
  commitWait?: string;
  storeDeadline?: string;
  forwardSecret?: string;
  forwardOriginalHeaders?: boolean;
  maxBytes?: string;
  maxBytesInFlight?: string;
  tolerance?: string;
  concurrency?: string;
  maxAttempts?: string;
  lease?: string;
  backoffBase?: string;
  backoffMax?: string;
  /** commander's name for --no-worker: false when given. */
  worker?: boolean;
  json?: boolean;
  log?: string;
  route?: string[];
  events?: string[];
  /** The project file's routes, when no --route is given (project/file.ts). */
  projectRoutes?: Route[];
  /** The project file's providers, when no --provider is given. */
  projectReceive?: ReceiveEntry[];
}

const LOG_MODES = ['requests', 'status', 'summary', 'none'] as const;
type LogMode = (typeof LOG_MODES)[number];

const ms = formatDuration;

export const listen = defineCommand<ListenFlags, ListenOptions>({
  name: 'listen',
  declare: (cmd) => {
    cmd.description('receive webhooks durably: verify, store in an inbox, answer 200, then process (forward) with retries');
    declareSigner(cmd, { provider: 'whose signatures to verify', secret: 'signing secret; repeat to accept several (rotation)' });
    return cmd
      .option('--port <port>', `port to listen on (0: any free port; default: ${LISTEN_DEFAULTS.port})`)
      .option('--host <address>', `address to listen on (default: ${LISTEN_DEFAULTS.host})`)
      .option('--public-url <url>', LISTEN_PUBLIC_URL_HELP)
      .option(
        '--trust-proxy',
        "with Square, HubSpot or Twilio and no --public-url: a proxy in front sets X-Forwarded-Proto and -Host, and each request's URL is rebuilt from the values it added (without a proxy, any client would choose the URL its signature is checked against)",
      )
      .option(
        '--inbox <file|url>',
        `the SQLite inbox file, created if missing (default: ${LISTEN_DEFAULTS.inbox}); or postgres://user@host/db, redis://host:6379/QUEUE`,
      )
      .option('--schema <name>', SCHEMA_HELP)
      .option('--forward-to <url>', 'POST each stored delivery to your app; 2xx is done, anything else is retried')
      .option(
        '--route <rule>',
        "send one provider's event types elsewhere: [NAME=]PROVIDER:PATTERN[,PATTERN]=URL|drop|hold, e.g. billing=stripe:invoice.*=http://127.0.0.1:4000/billing; repeatable, the first match wins, --forward-to takes the rest [project file: routes]",
        collect,
      )
      .option(
        '--events <types>',
        'keep only these event types (comma-separated; invoice.*, github:issues): others are answered 200 and not stored, as stripe listen --events',
        collect,
      )
      .option('--forward-timeout <duration>', `how long the app may take per forward (default: ${ms(LISTEN_DEFAULTS.forwardTimeoutMs)})`)
      .option('--forward-secret <secret>', 'sign forwards with this secret (default: --secret) [env: HOOKDRILL_FORWARD_SECRET]')
      .option('--forward-original-headers', 'forward the signature as received instead of signing anew (goes stale after 5 minutes)')
      .option(
        '--max-bytes <n>',
        `bodies larger than this get 413: bytes, or 512KiB, 5MB, 32MiB (default: ${RECEIVER_DEFAULTS.maxBytes / 1024 / 1024} MiB)`,
      )
      .option(
        '--max-bytes-in-flight <n>',
        `body bytes held across all requests at once; past it, 503 with Retry-After (default: ${RECEIVER_DEFAULTS.maxInFlightBytes / 1024 / 1024} MiB)`,
      )
      .option(
        '--tolerance <duration>',
        `how old (or new) a signed timestamp may be, 1s to 1d (default: the provider's window, ${RECEIVER_DEFAULTS.toleranceSec}s for most; Paddle 5s)`,
      )
      .option(
        '--commit-batch <n>',
        `deliveries committed in one transaction at most: group commit (default: ${LISTEN_DEFAULTS.commitBatch}; 1: each delivery in its own)`,
      )
      .option('--commit-wait <duration>', 'with --commit-batch: how long a batch waits for more (default: 0, the current event-loop turn)')
      .option(
        '--store-deadline <duration>',
        `a delivery not committed within this gets 503, before the sender times out (default: ${ms(RECEIVER_DEFAULTS.storeDeadlineMs)})`,
      )
      .option(
        '--concurrency <n>',
        `deliveries processed (forwarded) at once, and claimed in one statement (default: ${WORKER_DEFAULTS.concurrency}; ${LISTEN_DEFAULTS.markDoneConcurrency} without --forward-to)`,
      )
      .option(
        '--max-attempts <n>',
        `processing attempts before a delivery is dead (default: ${WORKER_DEFAULTS.maxAttempts}: with the default backoff, dead after ${ms(deadAfter(WORKER_DEFAULTS.maxAttempts).minMs)}–${ms(deadAfter(WORKER_DEFAULTS.maxAttempts).maxMs)} of failures, which outlives a common outage; the schedule is printed at start)`,
      )
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
      .option(
        '--ui [port]',
        'also serve the inbox in a browser (hookdrill ui) on PORT (default: 4040), with the requests refused lately and why',
      )
      .option(
        '--ui-host <address>',
        "with --ui: the inspector's address (default: 127.0.0.1, whatever --host is: the page replays and signs with your secret)",
      )
      .option('--json', 'one JSON object per line: ready, each request, each outcome, stopped')
      .option(
        '--log <mode>',
        'requests: a line per request and outcome (default when not at a terminal, or with --json); status: a live line of counts, and lines only for problems (default at a terminal); summary: ready and stopped lines only; none',
      );
  },
  options: ({ flags, env }) => {
    checkTolerance(flags.tolerance);
    const forwardSecret = flags.forwardSecret ?? env.HOOKDRILL_FORWARD_SECRET;
    return {
      ...pick(flags, [
        'publicUrl',
        'trustProxy',
        'commitBatch',
        'commitWait',
        'storeDeadline',
        'port',
        'host',
        'forwardTo',
        'forwardTimeout',
        'maxBytes',
        'maxBytesInFlight',
        'tolerance',
        'concurrency',
        'maxAttempts',
        'lease',
        'backoffBase',
        'backoffMax',
      ]),
      ...inboxOptions(flags),
      // With the project file's providers, each secret comes from its own variable: HOOKDRILL_SECRET is no one's.
      ...(flags.projectReceive ? { secrets: secretsFrom(flags, env, false) } : signerOptions(flags, env)),
      ...(forwardSecret ? { forwardSecret } : {}),
      ...routeOptions(flags),
      ...(flags.events ? { events: flags.events } : {}),
      ...(flags.projectReceive ? { receive: receiveMounts(flags.projectReceive, env) } : {}),
      forwardOriginalHeaders: flags.forwardOriginalHeaders === true,
      noWorker: flags.worker === false,
    };
  },
  async execute(options, flags) {
    const json = flags.json === true;
    const log = logMode(flags.log, json);
    const [{ start }, render, { createLineBuffer, untilSignal }] = await Promise.all([
      import('../../receiver/listen.js'),
      import('../../render/listen.js'),
      import('../../cli/io.js'),
    ]);
    const out = createLineBuffer(process.stdout);
    const status = log === 'status' ? liveStatus(() => handle.counts(), render.statusLine) : undefined;
    const write = (line: string | undefined) => {
      if (line === undefined) return;
      const clean = json ? safeJson(line) : safeOutput(line);
      if (status) status.above(clean);
      else out.write(clean);
    };
    // With --ui: the inspector beside the receiver, and the last requests it refused (a bad
    // signature, a stale timestamp, too large) with the reason — what a developer debugging a
    // signature needs to see, and what no inbox row holds.
    const refused = new RefusedLog();
    // The inspector stays on this machine unless asked by its own flag: --host opens the receiver
    // to senders, which is no reason to open a page that signs with the secret to them too.
    const uiHost = flags.uiHost ?? '127.0.0.1';
    if (flags.ui === undefined && flags.uiHost !== undefined) throw new UsageError('--ui-host is the address of --ui: give --ui too');
    if (uiHost.trim() === '') throw new UsageError('--ui-host is empty: give an address (127.0.0.1 keeps the inspector on this machine)');
    const uiPort = typeof flags.ui === 'string' ? parseIntFlag(flags.ui, '--ui', 0, 65_535, 4040) : 4040;
    const handle = await start({
      ...options,
      onRequest: (e, request) => {
        if (flags.ui !== undefined && (e.result === 'rejected' || e.result === 'too_large')) {
          refused.add(
            {
              at: Date.now(),
              status: e.status,
              result: e.result,
              reason: e.reason ?? '',
              ...(e.code ? { code: e.code } : {}),
              ...(e.bytes !== undefined ? { bytes: e.bytes } : {}),
            },
            request?.(),
          );
        }
        if (log === 'requests' || (log === 'status' && render.isNotable(e))) write(render.requestLine(e, json));
      },
      onOutcome: (o) => {
        if (log === 'requests' || (log === 'status' && render.isNotable(o))) write(render.outcomeLine(o, json));
      },
      // A route pausing or resuming needs a look: said whenever anything is logged.
      onRoute: (c) => {
        if (log !== 'none') write(render.routeLine(c, json));
      },
      onError: (err) => {
        status?.clear();
        process.stderr.write(`hookdrill: inbox error: ${safe(err instanceof Error ? err.message : String(err))}\n`);
      },
      // Said on stderr as it is found, whatever --log and --json say: it needs a person.
      onWarning: (text) => {
        status?.clear();
        process.stderr.write(`hookdrill: warning: ${safe(text)}\n`);
      },
    });
    if (log !== 'none') write(render.readyLine(handle.ready, json));
    const inspector =
      flags.ui === undefined
        ? undefined
        : await (await import('../../ui/thread.js'))
            .startUiThread({
              inbox: resolveTarget(options.inbox ?? LISTEN_DEFAULTS.inbox),
              port: uiPort,
              host: uiHost,
              refused: () => refused.view(),
              // Why one was refused: judged as `hookdrill verify` judges, on the inspector's thread, with
              // every secret listen has and the URL as listen derives it.
              refusedCapture: (id) => refused.capture(id),
              explainWith: {
                ...(options.provider ? { provider: options.provider } : {}),
                secrets: options.secrets ?? [],
                ...(options.publicUrl !== undefined ? { publicUrl: String(options.publicUrl) } : {}),
                ...(options.trustProxy ? { trustProxy: true } : {}),
              },
              // The page replays with listen's own provider and secret: the app behind it verifies those.
              ...(options.provider ? { provider: options.provider } : {}),
              ...(options.secrets?.[0] ? { secrets: [options.secrets[0]] } : {}),
            })
            .catch(async (err: unknown) => {
              await handle.stop();
              throw err;
            });
    if (inspector) process.stderr.write(`hookdrill: the inbox in a browser: ${inspector.pageUrl}\n`);
    if (inspector && !isLoopback(uiHost))
      process.stderr.write(`hookdrill: ${safe(exposedInspectorWarning(uiHost, (options.secrets?.length ?? 0) > 0))}\n`);
    // Even with --log none: a store that may lose what it acknowledged is said once, at start.
    for (const warning of handle.ready.warnings) if (!json) process.stderr.write(`hookdrill: warning: ${safe(warning)}\n`);
    status?.start();
    // SIGINT, SIGTERM or SIGHUP (a closed terminal): the same clean stop; a second one means "now".
    await untilSignal(() => out.flush());
    await inspector?.close();
    const summary = await handle.stop();
    status?.stop();
    if (log !== 'none') write(render.summaryLine(summary, json));
    out.flush();
  },
});

/** --route wins over the project file's routes, as every flag over its setting. */
function routeOptions(flags: ListenFlags): { routes?: Route[] } {
  if (flags.route) return { routes: flags.route.map(parseRouteFlag) };
  return flags.projectRoutes ? { routes: flags.projectRoutes } : {};
}

/** The project file's providers with their secrets read from the variables it names. */
function receiveMounts(entries: readonly ReceiveEntry[], env: NodeJS.ProcessEnv) {
  return entries.map((e) => {
    const secrets = e.secretEnv.map((name) => {
      const v = env[name];
      if (!v) throw new UsageError(`${PROJECT_FILE}: receive.${e.provider}.secretEnv names ${name}, which is not set`);
      return v;
    });
    return { provider: e.provider, path: e.path, secrets, ...(e.publicUrl !== undefined ? { publicUrl: e.publicUrl } : {}) };
  });
}

function logMode(given: string | undefined, json: boolean): LogMode {
  if (given === undefined) return json || !process.stdout.isTTY || process.env.CI ? 'requests' : 'status';
  if (!(LOG_MODES as readonly string[]).includes(given)) throw new UsageError(`--log ${given}: expected one of ${LOG_MODES.join(', ')}`);
  if (given === 'status' && json)
    throw new UsageError('--log status is a line for a person at a terminal; with --json use requests, summary or none');
  return given as LogMode;
}

/**
 * The status view: one line redrawn four times a second with the counts and the rate; lines that
 * need a look are printed above it.
 */
function liveStatus<C extends { requests: number }>(counts: () => C, line: (c: C, perSec: number) => string) {
  const stream = process.stdout;
  let timer: NodeJS.Timeout | undefined;
  let drawn = false;
  let last = { at: Date.now(), requests: 0 };
  let rate = 0;
  const draw = () => {
    const c = counts();
    const now = Date.now();
    if (now - last.at >= 1_000) {
      rate = ((c.requests - last.requests) * 1_000) / (now - last.at);
      last = { at: now, requests: c.requests };
    }
    // Never wider than the terminal: a wrapped line leaves a copy of itself at every redraw.
    stream.write(`\r${fitToColumns(line(c, rate), stream.columns)}\u001b[K`);
    drawn = true;
  };
  const clear = () => {
    if (drawn) stream.write('\r\u001b[K');
    drawn = false;
  };
  return {
    start() {
      draw();
      timer = setInterval(draw, 250);
    },
    above(text: string) {
      clear();
      stream.write(`${text}\n`);
      if (timer) draw();
    },
    clear,
    stop() {
      clearInterval(timer);
      timer = undefined;
      clear();
    },
  };
}

/** A window between a second and a day: 99999999999999999999d was taken, and replay protection with it. */
function checkTolerance(text: string | undefined): void {
  if (text === undefined) return;
  const problem = toleranceProblem(parseDuration(text, '--tolerance'));
  if (problem) throw new UsageError(`--tolerance ${text}: ${problem}`);
}
