import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { connect } from 'node:net';

/** Whether something accepts a TCP connection on host:port right now. */
export function portAnswers(host: string, port: number, timeoutMs = 1_000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
    socket.setTimeout(timeoutMs, () => done(false));
  });
}

/** A process holding a listening socket on the port, as /proc shows it. */
export interface PortHolder {
  pid: number;
  pgid: number;
  command: string;
}

/**
 * Who listens on this TCP port (any address, IPv4 or IPv6), read from /proc/net/tcp{,6} and each
 * process's open files. Undefined where /proc cannot say (not Linux, or the socket belongs to
 * another network namespace): the caller then has no evidence either way.
 */
export function portHolders(port: number): PortHolder[] | undefined {
  const inodes = new Set<string>();
  let readable = false;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    readable = true;
    for (const line of text.split('\n').slice(1)) {
      // "sl local_address rem_address st … inode": local is HEXADDR:HEXPORT, st 0A is LISTEN.
      const f = line.trim().split(/\s+/);
      if (f.length < 10 || f[3] !== '0A') continue;
      const localPort = parseInt((f[1] ?? '').split(':')[1] ?? '', 16);
      if (localPort === port && f[9] !== '0') inodes.add(f[9] as string);
    }
  }
  if (!readable || inodes.size === 0) return undefined;
  const holders: PortHolder[] = [];
  for (const entry of safeReaddir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const fds = safeReaddir(`/proc/${entry}/fd`);
    const holds = fds.some((fd) => {
      try {
        const target = readlinkSync(`/proc/${entry}/fd/${fd}`);
        return target.startsWith('socket:[') && inodes.has(target.slice(8, -1));
      } catch {
        return false;
      }
    });
    if (!holds) continue;
    const pid = Number(entry);
    holders.push({ pid, pgid: processGroupOf(pid) ?? -1, command: commandLine(pid) });
  }
  return holders.length ? holders : undefined;
}

function safeReaddir(path: string): string[] {
  try {
    return readdirSync(path);
  } catch {
    return [];
  }
}

function processGroupOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid pgrp …": comm may hold spaces and parentheses, so split after the last ')'.
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return undefined;
  }
}

function commandLine(pid: number): string {
  try {
    // The program and its first argument only: the rest of a stranger's command line may hold a
    // secret of its own, which hookdrill cannot know to mask.
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).slice(0, 2).join(' ').slice(0, 120);
  } catch {
    return '?';
  }
}
