import { exec } from 'node:child_process';
import { UsageError } from '../util/errors.js';
import { openInbox } from '../inbox/open.js';

/**
 * How chaos and check learn what a receiver holds: a hookdrill inbox, or a command printing ids.
 * `aliases` gives the other ids a receiver may rightly key the same delivery on (Shopify's
 * X-Shopify-Event-Id beside its X-Shopify-Webhook-Id): a delivery held under either is held.
 */
export type StoreProbe = ({ kind: 'inbox'; target: string; source: string } | { kind: 'command'; command: string }) & {
  aliases?: ((id: string) => readonly string[]) | undefined;
};

/** How many times the receiver holds each of these ids (a command may print one twice), under any of its names. */
export async function storedCounts(probe: StoreProbe, ids: readonly string[], env: Record<string, string>): Promise<number[]> {
  const names = (id: string) => [id, ...(probe.aliases?.(id) ?? [])];
  if (probe.kind === 'inbox') {
    const inbox = await openInbox(probe.target, { readonly: true, create: false });
    try {
      return await Promise.all(
        ids.map(async (id) => {
          let n = 0;
          for (const name of names(id)) if (await inbox.get({ source: probe.source, deliveryId: name })) n++;
          return n;
        }),
      );
    } finally {
      await inbox.close();
    }
  }
  const counts = new Map<string, number>();
  for (const id of await runIdsCommand(probe.command, '--stored', env)) counts.set(id, (counts.get(id) ?? 0) + 1);
  return ids.map((id) => names(id).reduce((n, name) => n + (counts.get(name) ?? 0), 0));
}

/** Which of these ids the receiver holds. */
export async function storedIds(probe: StoreProbe, ids: readonly string[], env: Record<string, string>): Promise<Set<string>> {
  const counts = await storedCounts(probe, ids, env);
  return new Set(ids.filter((_, i) => (counts[i] ?? 0) > 0));
}

/**
 * A store busy with the receiver's own write (sqlite3 without a busy timeout says "database is
 * locked" at once): worth asking again. Anything else is the command's own fault, said at once.
 */
const BUSY = /database is locked|database table is locked|SQLITE_BUSY|SQLITE_LOCKED/i;

/** The waits before asking a busy store again: 4 more tries within about 1.5 s. */
const BUSY_RETRIES_MS = [100, 200, 400, 800];

/** Ids as printed, one per line, repeats kept (a processed id printed twice was processed twice). */
export async function runIdsCommand(command: string, flag: string, env: Record<string, string>): Promise<string[]> {
  for (let attempt = 0; ; attempt++) {
    const ran = await runOnce(command, flag, env);
    if (ran.ok)
      return ran.stdout
        .split('\n')
        .map((l) => l.trim())
        .filter(Boolean);
    const busy = BUSY.test(ran.stderr);
    const wait = BUSY_RETRIES_MS[attempt];
    if (busy && wait !== undefined) {
      await new Promise((resolve) => setTimeout(resolve, wait));
      continue;
    }
    const tail = ran.stderr.trim().split('\n').slice(-2).join(' | ');
    const hint = busy
      ? `; still locked after ${attempt + 1} tries: let the query wait for the receiver's writes (sqlite3 -cmd '.timeout 2000' FILE '…', or PRAGMA busy_timeout)`
      : '';
    throw new UsageError(`${flag} command failed (${ran.why})${tail ? `: ${tail}` : ''}${hint}`);
  }
}

/**
 * The probe was stopped by a signal from outside (Ctrl-C reaches the whole process group, the
 * probe's sqlite3 with it; a CI timeout's SIGTERM): an interrupt, not a fault of the command — no
 * one is blamed and nothing it was to judge is judged.
 */
export class ProbeInterrupted extends UsageError {
  override readonly name: string = 'ProbeInterrupted';
  constructor(
    readonly flag: string,
    readonly signal: NodeJS.Signals,
  ) {
    // A UsageError still, for the commands that do not yet tell an interrupt apart (one line).
    super(`${flag} command interrupted (${signal})`);
  }
}

const INTERRUPTS: readonly string[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

function runOnce(
  command: string,
  flag: string,
  env: Record<string, string>,
): Promise<{ ok: true; stdout: string } | { ok: false; why: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    exec(command, { env: { ...process.env, ...env }, timeout: 30_000, maxBuffer: 64 * 1024 * 1024 }, (err, out, errOut) => {
      // `killed`: exec's own timeout sent the signal, which is the command's fault (it hung).
      if (err?.signal && INTERRUPTS.includes(err.signal) && !err.killed) reject(new ProbeInterrupted(flag, err.signal));
      else if (err) resolve({ ok: false, why: String(err.code ?? err.signal ?? err.message), stderr: String(errOut) });
      else resolve({ ok: true, stdout: String(out) });
    });
  });
}
