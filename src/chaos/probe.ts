import { exec } from 'node:child_process';
import { UsageError } from '../errors.js';
import { openSqliteInbox } from '../inbox/index.js';

/** How chaos learns what the receiver holds: a hookdrill inbox, or a command printing ids. */
export type StoreProbe = { kind: 'inbox'; path: string; source: string } | { kind: 'command'; command: string };

/** Which of these ids the receiver holds. */
export async function storedIds(probe: StoreProbe, ids: readonly string[], env: Record<string, string>): Promise<Set<string>> {
  if (probe.kind === 'inbox') {
    const inbox = openSqliteInbox(probe.path, { readonly: true, create: false });
    try {
      const held = new Set<string>();
      for (const id of ids) if (await inbox.get({ source: probe.source, deliveryId: id })) held.add(id);
      return held;
    } finally {
      await inbox.close();
    }
  }
  const printed = await runIdsCommand(probe.command, '--stored', env);
  return new Set(printed);
}

/** Ids as printed, one per line, repeats kept (a processed id printed twice was processed twice). */
export async function runIdsCommand(command: string, flag: string, env: Record<string, string>): Promise<string[]> {
  const stdout = await new Promise<string>((resolve, reject) => {
    exec(command, { env: { ...process.env, ...env }, timeout: 30_000, maxBuffer: 64 * 1024 * 1024 }, (err, out, errOut) => {
      if (err) {
        const tail = String(errOut).trim().split('\n').slice(-2).join(' | ');
        reject(new UsageError(`${flag} command failed (${err.code ?? err.signal ?? err.message})${tail ? `: ${tail}` : ''}`));
      } else resolve(String(out));
    });
  });
  return stdout
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean);
}
