import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { BIN } from './cli.js';

/** A long-running hookdrill (listen) whose stdout is read line by line as JSON. */
export interface Spawned {
  child: ChildProcessWithoutNullStreams;
  lines: Record<string, unknown>[];
  stderr: () => string;
  /** Resolves with the first line matching, or rejects after timeoutMs or when the process exits. */
  waitFor(match: (line: Record<string, unknown>) => boolean, timeoutMs?: number): Promise<Record<string, unknown>>;
  exit: Promise<number | null>;
}

/** `wrap`: a command to run hookdrill under (strace with its options), hookdrill's command line after it. */
export function spawnHookdrill(args: string[], env: Record<string, string> = {}, wrap: string[] = [], cwd?: string): Spawned {
  const [command, ...rest] = [...wrap, process.execPath, BIN, ...args];
  const child = spawn(command as string, rest, {
    env: { ...process.env, CI: 'true', ...env },
    ...(cwd ? { cwd } : {}),
  });
  const lines: Record<string, unknown>[] = [];
  const waiters: { match: (l: Record<string, unknown>) => boolean; resolve: (l: Record<string, unknown>) => void }[] = [];
  let buffer = '';
  let stderr = '';
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  child.stdout.on('data', (c: Buffer) => {
    buffer += c.toString();
    for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
      const text = buffer.slice(0, nl);
      buffer = buffer.slice(nl + 1);
      let line: Record<string, unknown>;
      try {
        line = JSON.parse(text) as Record<string, unknown>;
      } catch {
        line = { text };
      }
      lines.push(line);
      for (const w of [...waiters]) {
        if (w.match(line)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(line);
        }
      }
    }
  });
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    lines,
    stderr: () => stderr,
    exit,
    waitFor(match, timeoutMs = 10_000) {
      const found = lines.find(match);
      if (found) return Promise.resolve(found);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`timed out; lines: ${JSON.stringify(lines)} stderr: ${stderr}`)), timeoutMs);
        const entry = {
          match,
          resolve: (l: Record<string, unknown>) => {
            clearTimeout(timer);
            resolve(l);
          },
        };
        waiters.push(entry);
        void exit.then(() => {
          clearTimeout(timer);
          reject(new Error(`exited; lines: ${JSON.stringify(lines)} stderr: ${stderr}`));
        });
      });
    },
  };
}
