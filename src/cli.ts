import { accessSync, constants, existsSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';
import { Command, CommanderError, Option } from 'commander';
import { EXIT, ExpectationError, UsageError } from './errors.js';
import { PROVIDER_NAMES } from './providers/names.js';
import type { SelectorFlags } from './selector.js';

/*
 * The CLI only turns flags into typed options and hands them to a command module, loaded on
 * demand: `hookdrill --help` must not pay for undici, SQLite or the providers. Every error ends
 * here and becomes one exit code: usage/input 2, a failed expectation 1, a bug 70.
 */

const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export function buildProgram(): Command {
  const program = new Command('hookdrill')
    .description('Test and replay webhooks: signed deliveries with each provider\'s real timeout and retry profile.')
    .version(version(), '-V, --version')
    .showSuggestionAfterError()
    .exitOverride()
    .configureOutput({
      // A mistyped flag may carry a secret (--secert=whsec_…): name the flag, never its value.
      outputError: (text, write) => write(text.replace(/^error: /, 'hookdrill: ').replace(/(unknown option '[^'=]*)=[^']*'/, "$1=…'")),
    });

  program
    .command('send')
    .description('sign fixture events as the provider does and deliver them with its timeout and retry profile')
    .argument('[fixtures...]', 'fixture files, directories, or shipped fixtures (stripe/invoice.paid; see `hookdrill fixtures`)')
    .requiredOption('--url <url>', 'where to deliver, e.g. http://127.0.0.1:3000/webhooks')
    .addOption(new Option('--provider <name>', 'whose signing and timing to use').choices(PROVIDER_NAMES))
    .option('--secret <secret>', 'signing secret; repeat for rotation (stripe, standard) [env: HOOKDRILL_SECRET]', collect)
    .option('--profile <name>', 'timing profile (default: the provider\'s own; see `hookdrill profiles`)')
    .option('--timeout <duration>', 'per-attempt timeout, replacing the profile\'s (3s, 500ms)')
    .option('--retry-delays <list>', 'delays before each retry, replacing the profile\'s (0,1m,5m; none)')
    .option('--time-scale <factor>', 'multiply every timeout and delay (0.01 turns Slack\'s 3s into 30ms)')
    .option('--no-retry', 'one attempt per delivery')
    .option('--count <n>', 'events to send, taking the fixtures in turn (default: one per fixture)')
    .option('--concurrency <n>', 'requests in flight at most', '16')
    .option('--rate <r>', 'new events per second at most (50, 50/s, 600/m)')
    .option('--duplicates <k>', 'send each event K times at once: same id, same body', '1')
    .option('--shuffle', 'deliver in a random order (events are made in order first)')
    .option('--seed <n>', 'with --shuffle: the order to replay')
    .option('--header <name:value>', 'add or replace a request header (repeatable)', collect)
    .option('--set <path=value>', 'override a fixture field, e.g. data.object.amount_paid=5000 (repeatable)', collect)
    .option('--event <name>', 'event name for a fixture file not named after it (GitHub X-GitHub-Event, Shopify topic)')
    .option('--expect <status>', 'what every delivery must end with: 2xx, 401, 4xx, 401,403', '2xx')
    .option('--json', 'print the result as one JSON object')
    .option('--junit <file>', 'write a JUnit XML report, one test case per delivery')
    .option('--quiet', 'print only failed deliveries and the summary')
    .action(async (fixtures: string[], flags: SendFlags) => {
      const [{ run }, { renderSend }, { createProgressBar }] = await Promise.all([
        import('./commands/send.js'),
        import('./render/send.js'),
        import('./render/progress.js'),
      ]);
      if (flags.junit) checkWritable(flags.junit);
      const bar = createProgressBar();
      const stop = interruptOnSigint();
      const envSecret = process.env.HOOKDRILL_SECRET;
      const result = await run({
        fixtures,
        url: flags.url,
        ...(flags.provider ? { provider: flags.provider } : {}),
        secrets: flags.secret ?? (envSecret ? [envSecret] : []),
        ...pick(flags, ['profile', 'timeout', 'retryDelays', 'timeScale', 'count', 'concurrency', 'rate', 'duplicates', 'seed', 'expect', 'event']),
        noRetry: flags.retry === false,
        shuffle: flags.shuffle === true,
        headers: flags.header ?? [],
        sets: flags.set ?? [],
        signal: stop.signal,
        ...(bar ? { onProgress: (p) => bar.update(p) } : {}),
      }).finally(() => {
        bar?.stop();
        stop.dispose();
      });
      if (flags.junit) {
        const { renderJunit } = await import('./render/junit.js');
        writeAtomically(flags.junit, renderJunit(result));
      }
      process.stdout.write(flags.json ? `${JSON.stringify(result, null, 2)}\n` : renderSend(result, { quiet: flags.quiet === true }));
      process.exitCode = result.ok ? EXIT.ok : EXIT.expectationFailed;
    });

  program
    .command('fixtures')
    .description('list the fixtures hookdrill ships')
    .addOption(new Option('--provider <name>', 'only this provider\'s').choices(PROVIDER_NAMES))
    .option('--json', 'print the list as JSON')
    .action(async (flags: { provider?: string; json?: boolean }) => {
      const [{ run }, { renderFixtures }] = await Promise.all([import('./commands/fixtures.js'), import('./render/fixtures.js')]);
      const result = await run(flags.provider ? { provider: flags.provider } : {});
      process.stdout.write(flags.json ? `${JSON.stringify(result, null, 2)}\n` : renderFixtures(result));
    });

  program
    .command('listen')
    .description('receive webhooks durably: verify, store in an inbox, answer 200, then process (forward) with retries')
    .addOption(new Option('--provider <name>', 'whose signatures to verify').choices(PROVIDER_NAMES))
    .option('--secret <secret>', 'signing secret; repeat to accept several (rotation) [env: HOOKDRILL_SECRET]', collect)
    .option('--port <port>', 'port to listen on (0: any free port)', '3000')
    .option('--host <address>', 'address to listen on', '127.0.0.1')
    .option('--inbox <file>', 'the SQLite inbox file (created if missing)', 'hookdrill-inbox.db')
    .option('--forward-to <url>', 'POST each stored delivery to your app; 2xx is done, anything else is retried')
    .option('--forward-timeout <duration>', 'how long the app may take per forward', '10s')
    .option('--forward-secret <secret>', 'sign forwards with this secret (default: --secret) [env: HOOKDRILL_FORWARD_SECRET]')
    .option('--forward-original-headers', 'forward the signature as received instead of signing anew (goes stale after 5 minutes)')
    .option('--max-bytes <n>', 'bodies larger than this get 413 (default 5 MiB)')
    .option('--tolerance <duration>', 'how old (or new) a signed timestamp may be', '300s')
    .option('--concurrency <n>', 'deliveries processed at once', '4')
    .option('--max-attempts <n>', 'processing attempts before a delivery is dead', '8')
    .option('--lease <duration>', 'how long a claim holds a row (a crashed worker releases it then)', '30s')
    .option('--backoff-base <duration>', 'retry delay after the first failure (doubles, with jitter)', '1s')
    .option('--backoff-max <duration>', 'longest retry delay', '10m')
    .option('--no-worker', 'only receive and store; leave rows pending')
    .option('--json', 'one JSON object per line: ready, each request, each outcome, stopped')
    .action(async (flags: ListenFlags) => {
      const [{ start }, render] = await Promise.all([import('./commands/listen.js'), import('./render/listen.js')]);
      const json = flags.json === true;
      const write = (line: string | undefined) => {
        if (line !== undefined) process.stdout.write(`${line}\n`);
      };
      const envSecret = process.env.HOOKDRILL_SECRET;
      const forwardSecret = flags.forwardSecret ?? process.env.HOOKDRILL_FORWARD_SECRET;
      const handle = await start({
        ...pick(flags, ['provider', 'port', 'host', 'inbox', 'forwardTo', 'forwardTimeout', 'maxBytes', 'tolerance', 'concurrency', 'maxAttempts', 'lease', 'backoffBase', 'backoffMax']),
        secrets: flags.secret ?? (envSecret ? [envSecret] : []),
        ...(forwardSecret ? { forwardSecret } : {}),
        forwardOriginalHeaders: flags.forwardOriginalHeaders === true,
        noWorker: flags.worker === false,
        onRequest: (e) => write(render.requestLine(e, json)),
        onOutcome: (o) => write(render.outcomeLine(o, json)),
        onError: (err) => process.stderr.write(`hookdrill: inbox error: ${err instanceof Error ? err.message : String(err)}\n`),
      });
      write(render.readyLine(handle.ready, json));
      await new Promise<void>((resolve) => {
        const onSignal = () => {
          process.off('SIGINT', onSignal);
          process.off('SIGTERM', onSignal);
          // A second signal while stopping means "now".
          process.once('SIGINT', () => process.exit(130));
          process.once('SIGTERM', () => process.exit(143));
          resolve();
        };
        process.on('SIGINT', onSignal);
        process.on('SIGTERM', onSignal);
      });
      write(render.summaryLine(await handle.stop(), json));
    });

  program
    .command('chaos')
    .description('start your receiver, SIGKILL it right after it answers 200, restart it, and prove nothing acknowledged was lost')
    .argument('[fixtures...]', 'what to send (default: the provider\'s default fixture)')
    .requiredOption('--receiver <command>', 'shell command that starts the receiver (PORT is set from --url)')
    .requiredOption('--url <url>', 'where the receiver listens, e.g. http://127.0.0.1:3000/webhooks')
    .addOption(new Option('--provider <name>', 'whose signing and timing to use').choices(PROVIDER_NAMES))
    .option('--secret <secret>', 'signing secret [env: HOOKDRILL_SECRET]', collect)
    .option('--inbox <file>', 'the receiver is hookdrill listen (or uses a hookdrill inbox): read it directly')
    .option('--stored <command>', 'a command that prints the delivery ids the receiver holds, one per line')
    .option('--processed <command>', 'a command that prints the ids whose work was done (twice = processed twice)')
    .option('--profile <name>', 'timing profile for the retries after a restart')
    .option('--events <n>', 'events per round', '20')
    .option('--concurrency <n>', 'requests in flight at most', '8')
    .option('--rounds <n>', 'kill-and-restart rounds', '1')
    .option('--kill-after <k>', 'kill the moment the K-th 2xx of a round arrives', '1')
    .addOption(new Option('--kill-point <when>', 'after-ack, or a random moment (mid-request included)').choices(['after-ack', 'random']).default('after-ack'))
    .addOption(new Option('--signal <signal>', 'KILL, or TERM (then KILL after 2 s if ignored)').choices(['KILL', 'TERM']).default('KILL'))
    .option('--ready-timeout <duration>', 'how long the receiver may take to accept connections', '10s')
    .option('--settle <duration>', 'wait after the last retry before reading what is stored', '1s')
    .option('--settle-max <duration>', 'with --inbox and --processed: then wait at most this long for rows a killed worker still leases', '2m')
    .option('--time-scale <factor>', 'scale the profile\'s timeout and retry delays', '0.01')
    .option('--json', 'print the result as one JSON object')
    .option('--junit <file>', 'write a JUnit report, one test case per round')
    .action(async (fixtures: string[], flags: ChaosFlags) => {
      const [{ run }, { renderChaos, renderChaosJunit, renderSettleWait }, { killAllReceivers }] = await Promise.all([
        import('./commands/chaos.js'),
        import('./render/chaos.js'),
        import('./chaos/supervisor.js'),
      ]);
      if (flags.junit) checkWritable(flags.junit);
      // Ctrl-C, or a CI job's timeout (SIGTERM): no receiver may outlive hookdrill.
      const signals = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
      const onSignal = (signal: keyof typeof signals) => {
        killAllReceivers();
        process.stderr.write(`\nhookdrill: ${signal}; the receiver was killed\n`);
        process.exit(signals[signal]);
      };
      for (const s of Object.keys(signals) as (keyof typeof signals)[]) process.once(s, onSignal);
      const envSecret = process.env.HOOKDRILL_SECRET;
      const result = await run({
        fixtures,
        ...pick(flags, ['receiver', 'url', 'provider', 'inbox', 'stored', 'processed', 'profile', 'events', 'concurrency', 'rounds', 'killAfter', 'killPoint', 'signal', 'readyTimeout', 'settle', 'settleMax', 'timeScale']),
        secrets: flags.secret ?? (envSecret ? [envSecret] : []),
        onSettleWait: (w) => process.stderr.write(renderSettleWait(w)),
      }).finally(() => {
        for (const s of Object.keys(signals) as (keyof typeof signals)[]) process.off(s, onSignal);
      });
      if (flags.junit) writeAtomically(flags.junit, renderChaosJunit(result));
      process.stdout.write(flags.json ? `${JSON.stringify(result, null, 2)}\n` : renderChaos(result));
      process.exitCode = result.ok ? EXIT.ok : EXIT.expectationFailed;
    });

  const selectorOptions = (cmd: Command, statusHelp: string) =>
    cmd
      .option('--status <status>', statusHelp, collect)
      .option('--type <type>', 'only this event type')
      .option('--since <time>', 'received at or after: ISO time or a time ago (2h)')
      .option('--until <time>', 'received before: ISO time or a time ago')
      .option('--error <text>', 'only rows whose last error contains this text')
      .option('--source <provider>', 'only deliveries from this provider');

  selectorOptions(
    program
      .command('inspect')
      .description('see what an inbox holds: counts, the oldest pending, dead rows by error; or rows, or one delivery')
      .requiredOption('--inbox <file>', 'the inbox file (opened read-only: safe while listen runs)')
      .option('--id <id>', 'one delivery in full')
      .option('--body', 'with --id: print the raw body exactly as received, nothing else')
      .option('--limit <n>', 'rows to list (default 50)'),
    'only rows in this status: pending, working, done, dead (repeatable)',
  )
    .option('--watch <seconds>', 'refresh the overview every N seconds (Ctrl-C to stop)')
    .option('--json', 'print the result as JSON')
    .action(async (flags: InspectFlags) => {
      const [{ run }, render] = await Promise.all([import('./commands/inspect.js'), import('./render/inspect.js')]);
      const options = { ...pick(flags, ['inbox', 'id', 'limit', 'type', 'since', 'until', 'error', 'source']), ...(flags.status ? { status: flags.status } : {}) };
      if (flags.body) {
        if (!flags.id) throw new UsageError('--body goes with --id');
        const result = await run(options);
        if (result.view !== 'delivery') return;
        const first = result.deliveries[0];
        if (first?.body === null) throw new UsageError(`the body of ${flags.id} was pruned`);
        process.stdout.write(first?.body ?? Buffer.alloc(0));
        return;
      }
      const show = async () => {
        const result = await run(options);
        return flags.json ? `${render.inspectJson(result)}\n` : render.renderInspect(result);
      };
      if (flags.watch === undefined) {
        process.stdout.write(await show());
        return;
      }
      const seconds = Number(flags.watch);
      if (!(seconds > 0)) throw new UsageError(`--watch ${flags.watch}: expected seconds above 0`);
      const tty = process.stdout.isTTY === true;
      for (;;) {
        const text = await show();
        // On a terminal, redraw in place; piped, print one view after another.
        process.stdout.write(tty ? `\u001b[H\u001b[2J${text}` : `${text}\n`);
        await new Promise((r) => setTimeout(r, seconds * 1000));
      }
    });

  selectorOptions(
    program
      .command('requeue')
      .description('move dead (or done) rows back to pending, safely: filtered, previewable, rate-limited, logged')
      .requiredOption('--inbox <file>', 'the inbox file')
      .option('--id <id>', 'a delivery id (repeatable)', collect)
      .option('--dry-run', 'say how many rows would move, and show some; change nothing')
      .option('--rate <r>', 'rows per second at most (100, 100/s)')
      .option('--reset-attempts', 'start the attempt count anew'),
    'dead or done (required unless --id is given)',
  )
    .option('--json', 'print the result as JSON')
    .action(async (flags: RequeueFlags) => {
      const [{ run }, render, { createProgressBar }] = await Promise.all([
        import('./commands/requeue.js'),
        import('./render/inspect.js'),
        import('./render/progress.js'),
      ]);
      const bar = flags.dryRun ? undefined : createProgressBar();
      const result = await run({
        ...pick(flags, ['inbox', 'rate', 'type', 'since', 'until', 'error', 'source']),
        ...(flags.id ? { ids: flags.id } : {}),
        ...(flags.status ? { status: flags.status } : {}),
        dryRun: flags.dryRun === true,
        resetAttempts: flags.resetAttempts === true,
        ...(bar ? { onProgress: (p) => bar.update({ done: p.moved, total: p.total, failed: 0 }) } : {}),
      }).finally(() => bar?.stop());
      process.stdout.write(flags.json ? `${JSON.stringify(result, null, 2)}\n` : render.renderRequeue(result));
    });

  selectorOptions(
    program
      .command('replay')
      .description('re-send stored deliveries to a URL: re-signed (fresh timestamp, original id) or with their original headers')
      .requiredOption('--inbox <file>', 'the inbox file (read-only)')
      .requiredOption('--to <url>', 'where to send them')
      .option('--id <id>', 'a delivery id (repeatable)', collect)
      .addOption(new Option('--provider <name>', 'sign as this provider (default: the rows\' source)').choices(PROVIDER_NAMES))
      .option('--secret <secret>', 'signing secret [env: HOOKDRILL_SECRET]', collect)
      .option('--original-headers', 'send the stored headers untouched instead of re-signing')
      .option('--profile <name>', 'timing profile (default: the provider\'s own)')
      .option('--timeout <duration>', 'per-attempt timeout')
      .option('--retry-delays <list>', 'delays before each retry (none: no retries)')
      .option('--time-scale <factor>', 'multiply every timeout and delay')
      .option('--no-retry', 'one attempt per delivery')
      .option('--concurrency <n>', 'requests in flight at most', '8')
      .option('--rate <r>', 'deliveries started per second at most')
      .option('--limit <n>', 'replay at most this many rows (default 10000)'),
    'only rows in this status (repeatable)',
  )
    .option('--json', 'print the result as one JSON object')
    .option('--junit <file>', 'write a JUnit report, one test case per delivery')
    .option('--quiet', 'print only failed deliveries and the summary')
    .action(async (flags: ReplayFlags) => {
      const [{ run }, { renderSend }, { renderJunit }, { createProgressBar }] = await Promise.all([
        import('./commands/replay.js'),
        import('./render/send.js'),
        import('./render/junit.js'),
        import('./render/progress.js'),
      ]);
      if (flags.junit) checkWritable(flags.junit);
      const bar = createProgressBar();
      const stop = interruptOnSigint();
      const envSecret = process.env.HOOKDRILL_SECRET;
      const result = await run({
        ...pick(flags, ['inbox', 'to', 'provider', 'profile', 'timeout', 'retryDelays', 'timeScale', 'concurrency', 'rate', 'limit', 'type', 'since', 'until', 'error', 'source']),
        ...(flags.id ? { ids: flags.id } : {}),
        ...(flags.status ? { status: flags.status } : {}),
        secrets: flags.secret ?? (envSecret ? [envSecret] : []),
        originalHeaders: flags.originalHeaders === true,
        noRetry: flags.retry === false,
        signal: stop.signal,
        ...(bar ? { onProgress: (p) => bar.update(p) } : {}),
      }).finally(() => {
        bar?.stop();
        stop.dispose();
      });
      if (flags.junit) writeAtomically(flags.junit, renderJunit(result, 'hookdrill replay'));
      process.stdout.write(flags.json ? `${JSON.stringify(result, null, 2)}\n` : renderSend(result, { quiet: flags.quiet === true }));
      process.exitCode = result.ok ? EXIT.ok : EXIT.expectationFailed;
    });

  program
    .command('check')
    .description('run a conformance battery against a receiver and name every way it mishandles webhooks')
    .requiredOption('--url <url>', 'the receiver, e.g. http://127.0.0.1:3000/webhooks')
    .addOption(new Option('--provider <name>', 'whose signing to use').choices(PROVIDER_NAMES))
    .option('--secret <secret>', 'signing secret [env: HOOKDRILL_SECRET]', collect)
    .option('--inbox <file>', 'check what was stored in this hookdrill inbox')
    .option('--stored <command>', 'or: a command printing the stored delivery ids, one per line')
    .option('--only <cases>', 'run only these cases (comma list)')
    .option('--skip <cases>', 'skip these cases (comma list)')
    .option('--max-bytes <n>', 'the receiver\'s body limit (default 5 MiB)')
    .option('--json', 'print the result as one JSON object')
    .option('--junit <file>', 'write a JUnit report, one test case per case')
    .action(async (flags: CheckFlags) => {
      const [{ run }, { renderCheck, renderCheckJunit }] = await Promise.all([import('./commands/check.js'), import('./render/check.js')]);
      if (flags.junit) checkWritable(flags.junit);
      const envSecret = process.env.HOOKDRILL_SECRET;
      const result = await run({
        ...pick(flags, ['url', 'provider', 'inbox', 'stored', 'only', 'skip', 'maxBytes']),
        secrets: flags.secret ?? (envSecret ? [envSecret] : []),
      });
      if (flags.junit) writeAtomically(flags.junit, renderCheckJunit(result));
      process.stdout.write(flags.json ? `${JSON.stringify(result, null, 2)}\n` : renderCheck(result));
      process.exitCode = result.ok ? EXIT.ok : EXIT.expectationFailed;
    });

  program
    .command('profiles')
    .description('list the timing profiles: each provider\'s timeout and retry schedule')
    .option('--json', 'print the list as JSON')
    .action(async (flags: { json?: boolean }) => {
      const [{ run }, { renderProfiles }] = await Promise.all([import('./commands/profiles.js'), import('./render/profiles.js')]);
      const result = await run();
      process.stdout.write(flags.json ? `${JSON.stringify(result, null, 2)}\n` : renderProfiles(result));
    });

  program
    .command('demo')
    .description('show, side by side, why a receiver must verify, store, answer, then work (~10 s, real processes)')
    .option('--json', 'print the measured figures as JSON')
    .action(async (flags: { json?: boolean }) => {
      const [{ run, abortDemos }, { renderDemo }] = await Promise.all([import('./commands/demo.js'), import('./render/demo.js')]);
      // Interrupted: its receiver processes and temporary directory go with it.
      const signals = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
      for (const [s, code] of Object.entries(signals)) {
        process.once(s, () => {
          abortDemos();
          process.exit(code);
        });
      }
      const result = await run();
      process.stdout.write(flags.json ? `${JSON.stringify(result, null, 2)}\n` : renderDemo(result));
      process.exitCode = result.ok ? EXIT.ok : EXIT.expectationFailed;
    });

  return program;
}

interface SendFlags {
  url: string;
  provider?: string;
  secret?: string[];
  profile?: string;
  timeout?: string;
  retryDelays?: string;
  timeScale?: string;
  retry?: boolean;
  count?: string;
  concurrency?: string;
  rate?: string;
  duplicates?: string;
  shuffle?: boolean;
  seed?: string;
  header?: string[];
  set?: string[];
  event?: string;
  expect?: string;
  json?: boolean;
  junit?: string;
  quiet?: boolean;
}

/** The selector flags as commander gives them (ids arrive as --id). */
type SelectorFlagsRaw = Omit<SelectorFlags, 'ids'>;

interface InspectFlags extends SelectorFlagsRaw {
  inbox: string;
  id?: string;
  body?: boolean;
  limit?: string;
  watch?: string;
  json?: boolean;
}

interface RequeueFlags extends SelectorFlagsRaw {
  inbox: string;
  id?: string[];
  dryRun?: boolean;
  rate?: string;
  resetAttempts?: boolean;
  json?: boolean;
}

interface ReplayFlags extends SelectorFlagsRaw {
  inbox: string;
  to: string;
  id?: string[];
  provider?: string;
  secret?: string[];
  originalHeaders?: boolean;
  profile?: string;
  timeout?: string;
  retryDelays?: string;
  timeScale?: string;
  retry?: boolean;
  concurrency?: string;
  rate?: string;
  limit?: string;
  json?: boolean;
  junit?: string;
  quiet?: boolean;
}

interface CheckFlags {
  url: string;
  provider?: string;
  secret?: string[];
  inbox?: string;
  stored?: string;
  only?: string;
  skip?: string;
  maxBytes?: string;
  json?: boolean;
  junit?: string;
}

interface ChaosFlags {
  receiver: string;
  url: string;
  provider?: string;
  secret?: string[];
  inbox?: string;
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
  json?: boolean;
  junit?: string;
}

interface ListenFlags {
  provider?: string;
  secret?: string[];
  port?: string;
  host?: string;
  inbox?: string;
  forwardTo?: string;
  forwardTimeout?: string;
  forwardSecret?: string;
  forwardOriginalHeaders?: boolean;
  maxBytes?: string;
  tolerance?: string;
  concurrency?: string;
  maxAttempts?: string;
  lease?: string;
  backoffBase?: string;
  backoffMax?: string;
  worker?: boolean;
  json?: boolean;
}

function pick<T extends object, K extends keyof T>(obj: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const k of keys) if (obj[k] !== undefined) out[k] = obj[k];
  return out;
}

/** The first Ctrl-C stops sending and reports what happened; a second one leaves at once. */
function interruptOnSigint(): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onSigint = () => {
    if (controller.signal.aborted) process.exit(130);
    process.stderr.write('\nhookdrill: interrupted; finishing requests in flight (Ctrl-C again to quit now)\n');
    controller.abort();
  };
  process.on('SIGINT', onSigint);
  return { signal: controller.signal, dispose: () => process.off('SIGINT', onSigint) };
}

/** Fail before sending anything, not after a long run, when a report cannot be written. */
function checkWritable(file: string): void {
  try {
    accessSync(dirname(file), constants.W_OK);
    if (existsSync(file) && statSync(file).isDirectory()) throw Object.assign(new Error(), { code: 'EISDIR' });
  } catch (err) {
    throw new UsageError(`cannot write ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}

/** Write to a temporary name, then rename: a report is whole or absent, never half-written. */
function writeAtomically(file: string, text: string): void {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

export async function main(argv: readonly string[]): Promise<void> {
  const program = buildProgram();
  if (argv.length <= 2) {
    // No command at all is a usage error (a script that forgot its arguments must not pass).
    process.stderr.write(program.helpInformation());
    process.exitCode = EXIT.usage;
    return;
  }
  try {
    await program.parseAsync([...argv]);
  } catch (err) {
    process.exitCode = exitCodeFor(err);
  }
}

function exitCodeFor(err: unknown): number {
  if (err instanceof CommanderError) {
    // Commander has printed its own message already; help and version are not errors.
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') {
      return EXIT.ok;
    }
    return EXIT.usage;
  }
  if (err instanceof UsageError) {
    process.stderr.write(`hookdrill: ${err.message}\n`);
    return EXIT.usage;
  }
  if (err instanceof ExpectationError) {
    process.stderr.write(`hookdrill: ${err.message}\n`);
    return EXIT.expectationFailed;
  }
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(`hookdrill: internal error: ${message}\n(this is a bug in hookdrill; set HOOKDRILL_DEBUG=1 for the stack and please report it)\n`);
  if (process.env.HOOKDRILL_DEBUG && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
  return EXIT.bug;
}
