import type { ChildProcess } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';

export type KillSignal = 'SIGKILL' | 'SIGTERM';

/** Signal a whole process group (a child spawned with detached: true), if any of it still runs. */
export function killGroup(child: ChildProcess, signal: KillSignal): void {
  if (child.pid === undefined || !groupAlive(child.pid)) return;
  try {
    process.kill(-child.pid, signal); // the whole group: the shell and whatever it started
  } catch {
    /* already gone */
  }
}

/**
 * Whether any process of the group is still running. The shell exiting is not enough: `sh -c`
 * may leave the real receiver (its child) behind, holding the port. Zombies do not count: a
 * killed grandchild is reaped by init, which here can take seconds, but it is already dead.
 * Reads /proc (Linux); elsewhere falls back to kill(-pgid, 0), which counts zombies too.
 */
export function groupAlive(pgid: number): boolean {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
    } catch {
      continue; // it exited while we looked
    }
    // "pid (comm) state ppid pgrp …" — comm may hold spaces and parentheses: split after the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (Number(fields[2]) !== pgid) continue;
    if (fields[0] !== 'Z' && fields[0] !== 'X') return true;
    // A zombie leader may still have threads tearing down, and they hold its sockets (the port)
    // until the last one has exited: gone means every thread is gone.
    if (threadsAlive(entry)) return true;
  }
  return false;
}

function threadsAlive(pid: string): boolean {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return false;
  }
  return tasks.some((tid) => {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0];
      return state !== 'Z' && state !== 'X';
    } catch {
      return false;
    }
  });
}
