import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { connect } from 'node:net';
import { UsageError } from '../errors.js';
import { groupAlive, killGroup } from '../process-group.js';
import type { KillSignal } from '../process-group.js';

/** The receiver could not be started (it exited, or never accepted connections): exit 2. */
export class ReceiverStartError extends UsageError {}

export interface SupervisorOptions {
  /** A shell command, run with `sh -c` in a process group of its own. */
  command: string;
  host: string;
  port: number;
  env: Record<string, string>;
  readyTimeoutMs: number;
}

export type { KillSignal } from '../process-group.js';

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

/** Whatever happens to hookdrill, it leaves no receiver behind: every live group is killed on exit. */
export function killAllReceivers(): void {
  for (const child of live) killGroup(child, 'SIGKILL');
}

/**
 * Starts, kills and restarts one receiver process group, and knows when it is ready: when its
 * port accepts a TCP connection. Its stderr is kept (the last lines) for error messages.
 */
export class Supervisor {
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private stderr = '';
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
    this.stderr = '';
    const child = spawn('sh', ['-c', this.o.command], {
      env: { ...process.env, ...this.o.env },
      stdio: ['ignore', 'ignore', 'pipe'],
      detached: true,
    });
    this.child = child;
    this.starts++;
    live.add(child);
    child.stderr?.on('data', (c: Buffer) => {
      this.stderr = (this.stderr + c.toString()).slice(-4_000);
    });
    const shellExited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    // Gone means the shell has exited and nothing of its group is left running.
    this.exited = shellExited.then(async () => {
      while (child.pid !== undefined && groupAlive(child.pid)) await new Promise((r) => setTimeout(r, 5));
      live.delete(child);
    });
    const deadline = Date.now() + this.o.readyTimeoutMs;
    for (;;) {
      if (!this.running) {
        await this.exited;
        throw new ReceiverStartError(`the receiver exited (${describeExit(child)}) before accepting connections${this.tail()}`);
      }
      if (await this.accepts()) return;
      if (Date.now() > deadline) {
        this.kill('SIGKILL');
        await this.exited;
        throw new ReceiverStartError(`the receiver did not accept connections on ${this.o.host}:${this.o.port} within ${this.o.readyTimeoutMs} ms${this.tail()}`);
      }
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  /** Send the signal to the whole group, now (synchronous: chaos calls it the moment an ack lands). */
  kill(signal: KillSignal): void {
    if (this.child) killGroup(this.child, signal);
  }

  /** Resolves when the current process has exited. */
  waitExit(): Promise<void> {
    return this.exited;
  }

  /** TERM, then KILL if it is still there after graceMs; says whether it had to escalate. */
  async stop(graceMs: number): Promise<{ escalated: boolean }> {
    if (!this.running) return { escalated: false };
    this.kill('SIGTERM');
    const gone = await Promise.race([this.exited.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), graceMs))]);
    if (gone) return { escalated: false };
    this.kill('SIGKILL');
    await this.exited;
    return { escalated: true };
  }

  private accepts(): Promise<boolean> {
    return new Promise((resolve) => {
      const socket = connect({ host: this.o.host, port: this.o.port });
      const done = (ok: boolean) => {
        socket.destroy();
        resolve(ok);
      };
      socket.once('connect', () => done(true));
      socket.once('error', () => done(false));
      socket.setTimeout(1_000, () => done(false));
    });
  }

  private tail(): string {
    const lines = this.stderr.trim().split('\n').filter(Boolean).slice(-3);
    return lines.length ? `; its stderr ended with: ${lines.join(' | ')}` : '; it printed nothing on stderr';
  }
}

function describeExit(child: ChildProcess): string {
  return child.signalCode ? `signal ${child.signalCode}` : `code ${child.exitCode}`;
}
