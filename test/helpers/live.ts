import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { BIN } from './cli.js';

/** A hookdrill process whose output is read as it comes; waitFor throws, with what it saw, when the text never comes. */
export function live(args: string[], secret: string) {
  const child: ChildProcess = spawn(process.execPath, [BIN, ...args], {
    env: { ...process.env, CI: 'true', HOOKDRILL_SECRET: secret },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr?.on('data', (c: Buffer) => (stderr += c.toString()));
  const exit = new Promise<number | null>((r) => child.on('exit', (code) => r(code)));
  return {
    child,
    exit,
    out: () => stdout,
    err: () => stderr,
    async waitFor(where: 'out' | 'err', pattern: RegExp, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(where === 'out' ? stdout : stderr)) {
        if (Date.now() > deadline) throw new Error(`never saw ${pattern}; stdout: ${stdout} stderr: ${stderr}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}
