import { checkWritable, interruptOnSigint, printResult, writeAtomically } from '../../cli/io.js';
import type { Progress } from '../../delivery/run.js';
import type { OutputFlags } from '../../flags/output.js';
import { renderJunit } from '../../render/junit.js';
import { createProgressBar } from '../../render/progress.js';
import { renderSend } from '../../render/send.js';
import type { SendResult } from './run.js';

/**
 * How the CLI runs a command that delivers (send, replay): a progress bar at a terminal, Ctrl-C
 * stops sending and still reports, a JUnit report written whole, the result printed, exit 0 or 1.
 */
export async function executeDeliveries<R extends Omit<SendResult, 'command'>>(
  run: (hooks: { signal: AbortSignal; onProgress?: (p: Progress) => void }) => Promise<R>,
  flags: OutputFlags,
  suite: string,
): Promise<void> {
  if (flags.junit) checkWritable(flags.junit);
  const bar = createProgressBar();
  const stop = interruptOnSigint();
  const result = await run({ signal: stop.signal, ...(bar ? { onProgress: (p: Progress) => bar.update(p) } : {}) }).finally(() => {
    bar?.stop();
    stop.dispose();
  });
  if (flags.junit) writeAtomically(flags.junit, renderJunit(result, suite));
  printResult(result, flags.json, (r) => renderSend(r, { quiet: flags.quiet === true }));
}
