import { parseDuration } from '../util/duration.js';
import { Supervisor } from './supervisor.js';
import type { KillSignal } from './supervisor.js';
import { hostAndPort, parseUrl } from '../util/options.js';
import { RECEIVER_PROCESS_DEFAULTS } from './defaults.js';
import { envOption, stringOption } from '../util/shapes.js';
import { UsageError } from '../util/errors.js';

export { RECEIVER_PROCESS_DEFAULTS } from './defaults.js';

export interface StartReceiverOptions {
  /** A shell command that starts the receiver (run with `sh -c`, in a process group of its own). */
  command: string;
  /** Where it listens; PORT is set from it. */
  url: string;
  /** More environment for the receiver. */
  env?: Readonly<Record<string, string>>;
  /** How long it may take to accept connections: milliseconds, or a duration such as '10s' (default 10 s). */
  readyTimeout?: number | string;
  /** How long stop() waits after SIGTERM before SIGKILL: milliseconds, or a duration (default 5 s). */
  stopGrace?: number | string;
}

export interface ReceiverHandle {
  url: string;
  /** SIGTERM the group, SIGKILL it if it is still there after the grace time; then it is gone. */
  stop(): Promise<void>;
  /** Signal the whole group now and wait until nothing of it runs. */
  kill(signal?: KillSignal): Promise<void>;
  /** Kill it (if running) and start it again; resolves when it accepts connections. */
  restart(): Promise<void>;
  /** The last lines it wrote on stderr. */
  output(): string;
  /** How many times it has been started. */
  readonly starts: number;
}

/**
 * Start a receiver as `chaos` and `check --receiver` do: in its own process group, ready when its
 * port accepts connections from a process of that group (never a stranger already holding the
 * port), and never outliving this process — however it ends, a watchdog kills the group.
 * Throws a UsageError (a ReceiverStartError) if it exits or never accepts connections.
 */
export async function startReceiver(o: StartReceiverOptions): Promise<ReceiverHandle> {
  const command = stringOption(o.command, 'command');
  if (!command) throw new UsageError('option command is required: the shell command that starts the receiver');
  const url = parseUrl(stringOption(o.url, 'url'), 'url');
  const { host, port } = hostAndPort(url);
  const grace = durationMs(o.stopGrace, 'stopGrace', RECEIVER_PROCESS_DEFAULTS.stopGraceMs);
  const readyTimeoutMs = durationMs(o.readyTimeout, 'readyTimeout', RECEIVER_PROCESS_DEFAULTS.readyTimeoutMs);
  const supervisor = new Supervisor({
    command,
    host,
    port,
    env: { ...envOption(o.env), PORT: String(port) },
    readyTimeoutMs,
    unref: true,
  });
  try {
    await supervisor.start();
  } catch (err) {
    // A start that failed leaves nothing behind, not even the watchdog.
    await supervisor.close(grace);
    throw err;
  }
  return {
    url: url.toString(),
    stop: async () => {
      await supervisor.close(grace);
    },
    kill: async (signal = 'SIGKILL') => {
      supervisor.kill(signal);
      await supervisor.awaitGone(grace);
    },
    restart: async () => {
      await supervisor.stop(grace);
      try {
        await supervisor.start();
      } catch (err) {
        // A start that failed leaves nothing behind, not even the watchdog.
        await supervisor.close(grace);
        throw err;
      }
    },
    output: () => supervisor.output(),
    get starts() {
      return supervisor.starts;
    },
  };
}

/** A duration flag or option given as text or milliseconds. */
export function durationMs(value: string | number | undefined, flag: string, fallback: number): number {
  if (value === undefined) return fallback;
  return parseDuration(value, flag); // a number is milliseconds, a string a duration
}
