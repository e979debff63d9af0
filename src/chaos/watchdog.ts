import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';

/*
 * hookdrill's exit hooks cannot run when hookdrill itself is SIGKILLed (a CI job's hard timeout,
 * an OOM kill), and a receiver left running holds its port, so the next run would test it instead
 * of a fresh one. The watchdog is a tiny shell in a process group of its own, reading the pgid of
 * the current receiver group from a pipe. When the pipe closes without "-" as its last line —
 * which the kernel does for us however hookdrill dies — it SIGKILLs that group.
 */
const SCRIPT = 'p=; while read -r l; do p=$l; done; if [ -n "$p" ] && [ "$p" != "-" ]; then kill -s KILL -- "-$p" 2>/dev/null; fi';

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

  /** The group to kill should hookdrill die; undefined when none runs. */
  guard(pgid: number | undefined): void {
    this.child.stdin?.write(`${pgid ?? '-'}\n`);
  }

  /** hookdrill is done with its receivers: the watchdog exits without killing anything. */
  dispose(): void {
    this.guard(undefined);
    this.child.stdin?.end();
  }
}
