import type { Command } from 'commander';

export interface TimingFlags {
  profile?: string;
  timeout?: string;
  retryDelays?: string;
  timeScale?: string;
  delayScale?: string;
  scaleTimeout?: boolean;
  /** commander's name for --no-retry: false when given. */
  retry?: boolean;
}

const HELP = {
  profile: "timing profile (default: the provider's own; see `hookdrill profiles`)",
  timeout: "per-attempt timeout, replacing the profile's (3s, 500ms); never scaled",
  retryDelays: "delays before each retry, replacing the profile's (0,1m,5m; none)",
  timeScale:
    "multiply the waits between attempts, by at most 1000 (0.01 turns Slack's 5m retry into 3s); the timeout stays the provider's own",
  scaleTimeout:
    "scale the provider's timeout by --time-scale too, never below 1s (stricter than the provider: a fail may be one it accepts)",
  delayScale: 'the old name of --time-scale (it scales the waits only)',
  retry: 'one attempt per delivery',
};

type Which = keyof typeof HELP;

/** The timing flags a command takes (send and replay all of them; chaos some), declared once. */
export function declareTiming(
  cmd: Command,
  which: readonly Which[] = ['profile', 'timeout', 'retryDelays', 'timeScale', 'scaleTimeout', 'delayScale', 'retry'],
  help: Partial<Record<Which, string>> = {},
): Command {
  const text = (w: Which) => help[w] ?? HELP[w];
  if (which.includes('profile')) cmd.option('--profile <name>', text('profile'));
  if (which.includes('timeout')) cmd.option('--timeout <duration>', text('timeout'));
  if (which.includes('retryDelays')) cmd.option('--retry-delays <list>', text('retryDelays'));
  if (which.includes('timeScale')) cmd.option('--time-scale <factor>', text('timeScale'));
  if (which.includes('scaleTimeout')) cmd.option('--scale-timeout', text('scaleTimeout'));
  if (which.includes('delayScale')) cmd.option('--delay-scale <factor>', text('delayScale'));
  if (which.includes('retry')) cmd.option('--no-retry', text('retry'));
  return cmd;
}

export function timingOptions(flags: TimingFlags): {
  profile?: string;
  timeout?: string;
  retryDelays?: string;
  timeScale?: string;
  delayScale?: string;
  scaleTimeout?: true;
  noRetry: boolean;
} {
  return {
    ...(flags.profile !== undefined ? { profile: flags.profile } : {}),
    ...(flags.timeout !== undefined ? { timeout: flags.timeout } : {}),
    ...(flags.retryDelays !== undefined ? { retryDelays: flags.retryDelays } : {}),
    ...(flags.timeScale !== undefined ? { timeScale: flags.timeScale } : {}),
    ...(flags.delayScale !== undefined ? { delayScale: flags.delayScale } : {}),
    ...(flags.scaleTimeout ? { scaleTimeout: true as const } : {}),
    noRetry: flags.retry === false,
  };
}
