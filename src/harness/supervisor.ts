import type { Writable } from 'node:stream';
import { safe } from '../util/terminal.js';
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { UsageError } from '../util/errors.js';
import { groupAlive, killGroup } from './process-group.js';
import type { KillSignal } from './process-group.js';
import { portAnswers, portHolders } from './port.js';
import type { PortHolder } from './port.js';
import { Watchdog } from './watchdog.js';
import { sleep } from '../util/wait.js';

/** The receiver could not be started (it exited, or never accepted connections): exit 2. */
export class ReceiverStartError extends UsageError {
  override readonly name = 'ReceiverStartError';
}

export interface SupervisorOptions {
  /** A shell command, run with `sh -c` in a process group of its own. */
  command: string;
  host: string;
  port: number;
  env: Record<string, string>;
  readyTimeoutMs: number;
  /**
   * The receiver's process and pipe do not keep the event loop alive (the library: a test that
   * forgets stop() must not hang its runner). It still dies with this process: the exit hook and
   * the watchdog kill its group.
   */
  unref?: boolean;
}

export type { KillSignal } from './process-group.js';

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Whatever happens to hookdrill, it leaves no receiver behind: every live group is killed on exit. */
export function killAllReceivers(): void {
  for (const child of live) killGroup(child, 'SIGKILL');
}

/**
 * Starts, kills and restarts one receiver process group, and knows when it is ready: when its
 * port accepts a TCP connection — from a process of its own group, never from a stranger that
 * already held the port. Its stderr is kept (the last lines) for error messages.
 */
export class Supervisor {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private gone = true;
  private stderr = '';
  /** The first of it too: the line that names the error is often near the start (Node's `Error: …`). */
  private stderrHead = '';
  private watchdog: Watchdog | undefined;
  starts = 0;

  constructor(private readonly o: SupervisorOptions) {
    if (!exitHookInstalled) {
      process.on('exit', killAllReceivers);
      exitHookInstalled = true;
    }
  }

  get running(): boolean {
    return this.child?.pid !== undefined && groupAlive(this.child.pid);
  }

  async start(): Promise<void> {
    const { host, port } = this.o;
    // Whatever answers before the receiver starts is not the receiver: testing it would be a lie.
    if (await portAnswers(host, port)) {
      const who = describeHolders(portHolders(port));
      throw new ReceiverStartError(
        this.starts === 0
          ? `something already answers on ${host}:${port}${who}, before the receiver was started: stop it, or give --url a free port`
          : `something still answers on ${host}:${port}${who} though the receiver's process group is gone: a process of the receiver left its group (daemonized?), so chaos cannot kill it and its verdict would be about that process`,
      );
    }
    this.stderr = '';
    this.stderrHead = '';
    this.watchdog ??= new Watchdog();
    const watchdog = this.watchdog;
    // The shell tells the watchdog its group (fd 3) before the receiver runs: however hookdrill
    // dies from here on, the receiver dies with it.
    const child = spawn('sh', Watchdog.registering(this.o.command), {
      env: { ...process.env, ...this.o.env },
      stdio: ['ignore', 'ignore', 'pipe', (watchdog.pipe as Writable | null) ?? 'ignore'],
      detached: true,
    });
    this.child = child;
    this.gone = false;
    this.starts++;
    live.add(child);
    if (this.o.unref) {
      child.unref();
      (child.stderr as unknown as { unref?: () => void } | null)?.unref?.();
    }
    child.stderr?.on('data', (c: Buffer) => {
      if (this.stderrHead.length < 4_000) this.stderrHead = (this.stderrHead + c.toString()).slice(0, 4_000);
      this.stderr = (this.stderr + c.toString()).slice(-4_000);
    });
    const shellExited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // Gone means the shell has exited and nothing of its group is left running.
    this.exited = shellExited.then(async () => {
      while (child.pid !== undefined && groupAlive(child.pid)) await sleep(5);
      live.delete(child);
      if (child.pid !== undefined) watchdog.forget(child.pid);
      if (this.child === child) this.gone = true;
    });
    const deadline = Date.now() + this.o.readyTimeoutMs;
    for (;;) {
      if (!this.running) {
        await this.held(this.exited);
        throw new ReceiverStartError(`the receiver exited (${describeExit(child)}) before accepting connections${this.tail()}`);
      }
      if (await portAnswers(host, port)) break;
      if (Date.now() > deadline) {
        this.kill('SIGKILL');
        await this.held(this.exited);
        throw new ReceiverStartError(
          `the receiver did not accept connections on ${host}:${port} within ${this.o.readyTimeoutMs} ms${this.tail()}`,
        );
      }
      await sleep(25);
    }
    // The port answers; make sure it is the receiver that does (Linux: /proc says who listens).
    const holders = portHolders(port);
    if (holders && child.pid !== undefined && !holders.some((h) => h.pgid === child.pid)) {
      this.kill('SIGKILL');
      await this.held(this.exited);
      throw new ReceiverStartError(
        `${host}:${port} is answered by${describeHolders(holders)}, outside the receiver's process group: the receiver put its listener in another process group (daemonized?), so chaos cannot kill it${this.tail()}`,
      );
    }
  }

  /**
   * Send the signal to the whole group, now: chaos calls it the moment an ack lands, so nothing
   * (not even a look at /proc) comes before the signal.
   */
  kill(signal: KillSignal | 'SIGSTOP'): void {
    if (this.gone || this.child?.pid === undefined) return;
    try {
      process.kill(-this.child.pid, signal);
    } catch {
      /* already gone */
    }
  }

  /** Resolves when the current process group is gone. */
  waitExit(): Promise<void> {
    return this.held(this.exited);
  }

  /**
   * With `unref`, the receiver's process does not keep the event loop alive, so a wait for its
   * exit must: a timer is held while someone waits (and only then).
   */
  private held<T>(p: Promise<T>): Promise<T> {
    if (!this.o.unref) return p;
    const keep = setInterval(() => undefined, 1 << 30);
    return p.finally(() => clearInterval(keep));
  }

  /** After a signal: wait up to graceMs for the group to go, then SIGKILL it; says whether that was needed. */
  async awaitGone(graceMs: number): Promise<{ escalated: boolean }> {
    let timer: NodeJS.Timeout | undefined;
    const gone = await Promise.race([
      this.held(this.exited).then(() => true),
      new Promise<boolean>((r) => (timer = setTimeout(() => r(false), graceMs))),
    ]);
    clearTimeout(timer); // a pending timer would hold hookdrill open for graceMs after its report
    if (gone) return { escalated: false };
    this.kill('SIGKILL');
    await this.held(this.exited);
    return { escalated: true };
  }

  /** TERM, then KILL if it is still there after graceMs. */
  async stop(graceMs: number): Promise<{ escalated: boolean }> {
    if (!this.running) return { escalated: false };
    this.kill('SIGTERM');
    return this.awaitGone(graceMs);
  }

  /** Stop, and let the watchdog go: nothing of this supervisor outlives the call. */
  async close(graceMs: number): Promise<void> {
    await this.stop(graceMs);
    this.watchdog?.dispose();
    this.watchdog = undefined;
  }

  /** The last lines the receiver wrote on stderr. */
  output(): string {
    return this.stderr;
  }

  private tail(): string {
    return describeStderr(this.stderrHead, this.stderr);
  }
}

/**
 * What a receiver that failed to start said, for a person: the line that names the error (Node's
 * `Error: Cannot find module …`, Python's `ModuleNotFoundError: …`, a `fatal:`) and the last lines,
 * not only the last three — which for Node are a stack frame and its version.
 */
export function describeStderr(head: string, tail: string): string {
  const text = head.length < 4_000 ? head : `${head}\n${tail}`;
  const lines = text
    .split('\n')
    .map((l) => l.trimEnd())
    .filter(Boolean);
  if (lines.length === 0) return '; it printed nothing on stderr';
  const named = lines.find(
    (l) => !/^\s+at\s|^\s*File "|^Traceback|^Node\.js v/.test(l) && /\b(\w*Error|\w*Exception|error|fatal|panic)\b/i.test(l),
  );
  const last = tail
    .split('\n')
    .map((l) => l.trimEnd())
    .filter(Boolean)
    .slice(-3);
  const shown = last.map((l) => safe(l.slice(0, 300))).join(' | ');
  if (!named || last.includes(named)) return `; its stderr ended with: ${shown}`;
  return `; its stderr says: ${safe(named.trim().slice(0, 300))} (and ended with: ${shown})`;
}

function describeHolders(holders: PortHolder[] | undefined): string {
  if (!holders) return '';
  return ` (${holders.map((h) => `pid ${h.pid}: ${h.command}`).join('; ')})`;
}

function describeExit(child: ChildProcess): string {
  return child.signalCode ? `signal ${child.signalCode}` : `code ${child.exitCode}`;
}
