import { accessSync, constants, existsSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { EXIT, UsageError } from '../errors.js';

/** Only the keys that are set: options objects never carry `undefined` for an absent flag. */
export function pick<T extends object, K extends keyof T>(obj: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const k of keys) if (obj[k] !== undefined) out[k] = obj[k];
  return out;
}

/** Fail before sending anything, not after a long run, when a report cannot be written. */
export function checkWritable(file: string): void {
  try {
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
  process.stdout.write(json ? `${JSON.stringify(result, null, 2)}\n` : render(result));
  process.exitCode = result.ok ? EXIT.ok : EXIT.expectationFailed;
}

/** The first Ctrl-C stops sending and reports what happened; a second one leaves at once. */
export function interruptOnSigint(): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const onSigint = () => {
    if (controller.signal.aborted) process.exit(130);
    process.stderr.write('\nhookdrill: interrupted; finishing requests in flight (Ctrl-C again to quit now)\n');
    controller.abort();
  };
  process.on('SIGINT', onSigint);
  return { signal: controller.signal, dispose: () => process.off('SIGINT', onSigint) };
}

/** The shell's exit code for a signal: 128 + its number. */
export const SIGNAL_EXIT = { SIGINT: 130, SIGTERM: 143, SIGHUP: 129 } as const;
