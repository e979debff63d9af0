import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../../bin/hookdrill', import.meta.url));

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Run bin/hookdrill as a user would, with a clean environment apart from what is given. With
 * `guardMs`, a run still going then is killed (code null): a hang fails the test's exit-code
 * assertion instead of a wall-clock one, which a loaded machine fails for no fault of the code.
 */
export function hookdrill(
  args: string[],
  env: Record<string, string> = {},
  nodeArgs: string[] = [],
  cwd?: string,
  guardMs?: number,
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    const { HOOKDRILL_SECRET: _drop, ...inherited } = process.env;
    const child = spawn(process.execPath, [...nodeArgs, BIN, ...args], {
      env: { ...inherited, CI: 'true', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(cwd ? { cwd } : {}),
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
    const guard = guardMs === undefined ? undefined : setTimeout(() => child.kill('SIGKILL'), guardMs);
    child.on('error', reject);
    child.on('close', (code) => {
      if (guard) clearTimeout(guard);
      resolve({ code, stdout, stderr });
    });
  });
}
