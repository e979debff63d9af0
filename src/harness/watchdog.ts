import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';

/*
 * hookdrill's exit hooks cannot run when hookdrill itself is SIGKILLed (a CI job's hard timeout,
 * an OOM kill), and a receiver left running holds its port, so the next run would test it instead
 * of a fresh one. The watchdog is a tiny shell in a process group of its own, reading from a pipe
 * "+PGID" when a receiver group starts and "-PGID" when it is gone. When the pipe closes — which
 * the kernel does for us however hookdrill dies — it SIGKILLs every group still on its list.
 * (A list, not "the last group": a late "-" for an old group must never cancel a newer one.)
 */
const SCRIPT = [
  'live=" "',
  'while read -r op; do',
  '  case "$op" in',
  '    +*) live="$live$(printf %s "$op" | cut -c2-) " ;;',
  '    -*) live=$(printf %s "$live" | sed "s/ $(printf %s "$op" | cut -c2-) / /") ;;',
  '  esac',
  'done',
  'for p in $live; do kill -s KILL -- "-$p" 2>/dev/null; done',
].join('\n');

export class Watchdog {
  private readonly child: ChildProcess;

  constructor() {
    this.child = spawn('sh', ['-c', SCRIPT], { stdio: ['pipe', 'ignore', 'ignore'], detached: true });
    this.child.on('error', () => undefined);
    this.child.stdin?.on('error', () => undefined);
    // Neither the watchdog nor its pipe may keep hookdrill's event loop alive.
    this.child.unref();
    (this.child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
  }

  /**
   * The watchdog's pipe, to hand a receiver's shell as its fd 3: the shell writes its own "+PGID"
   * before it starts the receiver (see registering()). Written by hookdrill after spawn() instead,
   * a SIGKILL landing between the two — or before Node flushed the write — left a receiver no one
   * would kill.
   */
  get pipe(): NodeJS.WritableStream | null {
    return this.child.stdin;
  }

  /** A shell command that registers its own process group with the watchdog (fd 3), then runs `command`. */
  static registering(command: string): string[] {
    return ['-c', 'printf "+%s\\n" "$$" >&3; exec 3>&-; eval "$1"', 'sh', command];
  }

  /** That group is gone: nothing to kill any more. */
  forget(pgid: number): void {
    this.child.stdin?.write(`-${pgid}\n`);
  }

  /** hookdrill is done with its receivers (all gone): the watchdog exits. */
  dispose(): void {
    this.child.stdin?.end();
  }
}
