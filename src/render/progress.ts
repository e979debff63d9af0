import type { Progress } from '../delivery/run.js';
import { fitToColumns, safeOutput } from '../util/terminal.js';

export interface ProgressBar {
  update(p: Progress): void;
  /** Take the bar off the line, so another line can be printed; the next update draws it again. */
  clear(): void;
  stop(): void;
}

/**
 * A one-line progress bar on stderr, only for a person watching: not when stderr is piped or
 * captured, and not under CI (where a redrawn line turns into thousands of log lines).
 */
export function createProgressBar(stream: NodeJS.WriteStream = process.stderr): ProgressBar | undefined {
  if (!stream.isTTY || process.env.CI) return undefined;
  let last = 0;
  let drawn = false;
  const draw = (p: Progress) => {
    const width = 30;
    const filled = Math.round((p.done / Math.max(1, p.total)) * width);
    const bar = '█'.repeat(filled) + '░'.repeat(width - filled);
    const failed = p.failed > 0 ? `  ${p.failed} failed` : '';
    stream.write(`\r${fitToColumns(`${bar} ${p.done}/${p.total}${failed}`, stream.columns)}\u001b[K`);
    drawn = true;
  };
  return {
    update(p) {
      const now = Date.now();
      if (now - last < 100 && p.done < p.total) return; // ten redraws a second are plenty
      last = now;
      draw(p);
    },
    clear() {
      if (drawn) stream.write('\r\u001b[K');
      drawn = false;
      last = 0;
    },
    stop() {
      if (drawn) stream.write('\r\u001b[K');
    },
  };
}

/**
 * One line of text redrawn in place on stderr (a phase and a count where no total is known yet),
 * under the same rule as the bar: only at a terminal, never under CI.
 */
export function createStatusLine(stream: NodeJS.WriteStream = process.stderr): { update(text: string): void; stop(): void } | undefined {
  if (!stream.isTTY || process.env.CI) return undefined;
  let last = 0;
  let drawn = false;
  return {
    update(text) {
      const now = Date.now();
      if (now - last < 100) return;
      last = now;
      // Redrawn in place, so it must stay one line: the last guard as on every printed line (the
      // callers' text holds counts and phases; a value from outside is escaped by them first).
      stream.write(`\r${fitToColumns(safeOutput(text).replace(/\n/g, ' '), stream.columns)}\u001b[K`);
      drawn = true;
    },
    stop() {
      if (drawn) stream.write('\r\u001b[K');
      drawn = false;
    },
  };
}
