import { safeJson, safeOutput } from '../util/terminal.js';
import { accessSync, constants, existsSync, mkdirSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { EXIT, UsageError } from '../util/errors.js';

/** Only the keys that are set: options objects never carry `undefined` for an absent flag. */
export function pick<T extends object, K extends keyof T>(obj: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const k of keys) if (obj[k] !== undefined) out[k] = obj[k];
  return out;
}

/** Fail before sending anything, not after a long run, when a report cannot be written; its folder is made if missing. */
export function checkWritable(file: string): void {
  try {
    mkdirSync(dirname(file), { recursive: true });
    accessSync(dirname(file), constants.W_OK);
    if (existsSync(file) && statSync(file).isDirectory()) throw Object.assign(new Error(), { code: 'EISDIR' });
  } catch (err) {
    throw new UsageError(`cannot write ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
}

/** Write to a temporary name, then rename: a report is whole or absent, never half-written. */
export function writeAtomically(file: string, text: string): void {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  writeFileSync(tmp, text);
  renameSync(tmp, file);
}

/** --json prints the result object itself; otherwise the renderer's text. Exit 0 or 1 by `ok`. */
export function printResult<R extends { ok: boolean }>(result: R, json: boolean | undefined, render: (r: R) => string): void {
  process.stdout.write(json ? `${safeJson(JSON.stringify(result, null, 2))}\n` : safeOutput(render(result)));
  process.exitCode = result.ok ? EXIT.ok : EXIT.expectationFailed;
}

/** JSON, or text for a person: the one way a command prints a result. */
export function show(json: boolean | undefined, value: unknown, text: () => string): void {
  process.stdout.write(json ? `${safeJson(JSON.stringify(value, null, 2))}\n` : safeOutput(text()));
}

/**
 * The first Ctrl-C (or SIGTERM, as a CI job's timeout sends, or SIGHUP) stops the work and reports
 * what happened; a second one leaves at once. `onSecond` runs first (chaos kills its receiver).
 */
export function interruptOnSignals(onSecond?: () => void): {
  signal: AbortSignal;
  dispose(): void;
  /** The first signal received, if any (check exits with its code: 130, 143). */
  received(): keyof typeof SIGNAL_EXIT | undefined;
} {
  const controller = new AbortController();
  let first: keyof typeof SIGNAL_EXIT | undefined;
  const onSignal = (name: keyof typeof SIGNAL_EXIT) => {
    if (controller.signal.aborted) {
      onSecond?.();
      process.exit(SIGNAL_EXIT[name]);
    }
    process.stderr.write(
      `\nhookdrill: ${name === 'SIGINT' ? 'interrupted' : name}; stopping and reporting what was done (Ctrl-C again to quit now)\n`,
    );
    first = name;
    controller.abort();
  };
  const names = Object.keys(SIGNAL_EXIT) as (keyof typeof SIGNAL_EXIT)[];
  for (const n of names) process.on(n, onSignal);
  const dispose = () => {
    for (const n of names) process.off(n, onSignal);
  };
  return { signal: controller.signal, dispose, received: () => first };
}

/**
 * Resolves at the first SIGINT, SIGTERM or SIGHUP (a closed terminal): a long-running command
 * (listen, ui) stops cleanly; a second one means "now" — `beforeExit` runs, then the process
 * exits with the signal's code.
 */
export function untilSignal(beforeExit?: () => void): Promise<void> {
  return new Promise<void>((resolve) => {
    const names = Object.keys(SIGNAL_EXIT) as (keyof typeof SIGNAL_EXIT)[];
    const onSignal = () => {
      for (const n of names) {
        process.off(n, onSignal);
        process.once(n, () => {
          beforeExit?.();
          process.exit(SIGNAL_EXIT[n]);
        });
      }
      resolve();
    };
    for (const n of names) process.on(n, onSignal);
  });
}

/** The shell's exit code for a signal: 128 + its number. */
export const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;

/**
 * Lines for a stream, written in batches: a receiver logging each of 10,000 requests a second
 * makes one write per turn of the event loop instead of one per line (a pipe or a file is written
 * synchronously, so each write is a system call on the hot path). flush() writes what is held.
 */
export function createLineBuffer(stream: NodeJS.WritableStream = process.stdout): { write(line: string): void; flush(): void } {
  let held: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (held.length === 0) return;
    const text = `${held.join('\n')}\n`;
    held = [];
    stream.write(text);
  };
  return {
    write(line) {
      held.push(line);
      if (held.length >= 1_000) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
}
