import { defineCommand } from '../../cli/spec.js';
import { INBOX_DEFAULT_HELP, SCHEMA_HELP, inboxOrDefault } from '../../cli/flags/inbox.js';
import { declareSelectors, selectorOptions } from '../../cli/flags/selectors.js';
import type { SelectorFlagsRaw } from '../../cli/flags/selectors.js';
import type { RequeueOptions } from '../../incident/requeue.js';

export interface RequeueFlags extends SelectorFlagsRaw {
  inbox?: string;
  schema?: string;
  dryRun?: boolean;
  rate?: string;
  resetAttempts?: boolean;
  keepAttempts?: boolean;
  dead?: boolean;
  reroute?: boolean;
  json?: boolean;
}

export const requeue = defineCommand<RequeueFlags, RequeueOptions>({
  name: 'requeue',
  declare: (cmd) => {
    cmd
      .description(
        'move dead (or done) rows back to pending, or make pending ones due now (--status pending), safely: filtered, previewable, rate-limited, logged',
      )
      .option('--inbox <file|url>', `the inbox file; or postgres://user@host/db, redis://host:6379/QUEUE ${INBOX_DEFAULT_HELP}`)
      .option('--schema <name>', SCHEMA_HELP)
      .option('--dry-run', 'say how many rows would move, and show some; change nothing')
      .option('--rate <r>', 'rows per second at most (100, 100/s)')
      .option(
        '--keep-attempts',
        "keep the attempts already made: the row gets only what is left of the worker's budget (default: a fresh start, attempts counted anew, on record)",
      )
      .option('--reset-attempts', 'count the attempts anew (the default; kept for scripts that say it)')
      .option('--dead', 'the dead rows: --status dead, said short (requeue --route billing --dead)')
      .option(
        '--reroute',
        'route the rows anew by the routes listen has when it takes them, forgetting the one each was given (default: each keeps its route)',
      );
    declareSelectors(cmd, 'dead or done; pending: retry now, not at the next attempt (required unless --id is given)', { ids: true });
    return cmd.option('--json', 'print the result as JSON');
  },
  options: ({ flags }) => ({
    ...inboxOrDefault(flags),
    ...selectorOptions(flags),
    ...(flags.dead ? { status: [...[flags.status ?? []].flat(), 'dead'] } : {}),
    ...(flags.reroute ? { reroute: true } : {}),
    ...(flags.rate !== undefined ? { rate: flags.rate } : {}),
    dryRun: flags.dryRun === true,
    ...(flags.resetAttempts ? { resetAttempts: true } : {}),
    ...(flags.keepAttempts ? { keepAttempts: true } : {}),
  }),
  async execute(options, flags) {
    const [{ run }, render, { createProgressBar }] = await Promise.all([
      import('../../incident/requeue.js'),
      import('../../render/inspect.js'),
      import('../../render/progress.js'),
    ]);
    const { SIGNAL_EXIT, interruptOnSignals, printResult } = await import('../../cli/io.js');
    const bar = options.dryRun ? undefined : createProgressBar();
    // Ctrl-C / SIGTERM stop between batches and say how far the requeue got; a second one quits now.
    const stop = interruptOnSignals();
    const result = await run({
      ...options,
      signal: stop.signal,
      ...(bar ? { onProgress: (p) => bar.update({ done: p.moved, total: p.total, failed: 0 }) } : {}),
    }).finally(async () => {
      bar?.stop();
      // SQLite works with the event loop held (a lock waited for, a batch): a signal that came
      // meanwhile is heard only once the loop polls for I/O again (a timer, then an immediate, have
      // a poll between them even on its first turn), which must come before the handlers go.
      await new Promise((resolve) => setTimeout(resolve, 0));
      await new Promise((resolve) => setImmediate(resolve));
      stop.dispose();
    });
    printResult(result, flags.json, render.renderRequeue);
    // Interrupted is 130 (143), as for every command, even when the step under way then finished
    // the work (the last batch, a dry run): a script must not read a Ctrl-C as success.
    const signal = stop.received();
    if (signal) process.exitCode = SIGNAL_EXIT[signal];
  },
});
