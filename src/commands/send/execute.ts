import { safeOutput } from '../../util/terminal.js';
import { checkWritable, interruptOnSignals, printResult, writeAtomically } from '../../cli/io.js';
import type { Progress } from '../../delivery/run.js';
import type { OutputFlags } from '../../cli/flags/output.js';
import { renderJunit } from '../../render/junit.js';
import { createProgressBar } from '../../render/progress.js';
import { deliveryLine, renderSendEnd, retryLine, wireText } from '../../render/send.js';
import type { DeliveryRecord, RetryScheduled, WireExchange } from '../../delivery/deliver.js';
import type { SendResult } from '../../delivery/send.js';

/**
 * How the CLI runs a command that delivers (send, replay): a progress bar at a terminal, Ctrl-C
 * stops sending and still reports, a JUnit report written whole, the result printed, exit 0 or 1.
 */
export async function executeDeliveries<R extends Omit<SendResult, 'command'>>(
  run: (hooks: DeliveryHooks) => Promise<R>,
  flags: OutputFlags & { verbose?: boolean },
  lines: { suite: string; showCopy: boolean; expect: string; url?: string },
): Promise<void> {
  if (flags.junit) checkWritable(flags.junit);
  const bar = createProgressBar();
  const stop = interruptOnSignals();
  // Each delivery's line as soon as it is final, and each retry as it is scheduled, at a terminal
  // or not: a first retry a minute away must not look like a hang.
  const hooks: DeliveryHooks = {
    signal: stop.signal,
    ...(bar ? { onProgress: (p: Progress) => bar.update(p) } : {}),
    ...(flags.json
      ? {}
      : {
          onDelivery: (d: DeliveryRecord) => {
            if (flags.quiet && d.met) return;
            bar?.clear();
            process.stdout.write(safeOutput(`${deliveryLine(d, lines.showCopy, lines.expect, lines.url)}\n`));
          },
        }),
    ...(flags.verbose
      ? {
          onWire: (w: WireExchange) => {
            bar?.clear();
            process.stderr.write(safeOutput(wireText(w)));
          },
        }
      : {}),
    ...(flags.quiet
      ? {}
      : {
          onRetryScheduled: (r: RetryScheduled) => {
            bar?.clear();
            process.stderr.write(safeOutput(retryLine(r, lines.url)));
          },
        }),
  };
  const result = await run(hooks).finally(() => {
    bar?.stop();
    stop.dispose();
  });
  if (flags.junit) writeAtomically(flags.junit, renderJunit(result, lines.suite));
  printResult(result, flags.json, (r) => `${r.deliveries.some((d) => !(flags.quiet && d.met)) ? '\n' : ''}${renderSendEnd(r)}`);
}

interface DeliveryHooks {
  signal: AbortSignal;
  onProgress?: (p: Progress) => void;
  onDelivery?: (d: DeliveryRecord) => void;
  onRetryScheduled?: (r: RetryScheduled) => void;
  onWire?: (w: WireExchange) => void;
}
