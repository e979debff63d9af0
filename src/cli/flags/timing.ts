import type { Command } from 'commander';

export interface TimingFlags {
  profile?: string;
  timeout?: string;
  retryDelays?: string;
  timeScale?: string;
  delayScale?: string;
  /** commander's name for --no-retry: false when given. */
  retry?: boolean;
}

const HELP = {
  profile: "timing profile (default: the provider's own; see `hookdrill profiles`)",
  timeout: "per-attempt timeout, replacing the profile's (3s, 500ms); never scaled",
  retryDelays: "delays before each retry, replacing the profile's (0,1m,5m; none)",
  timeScale:
    "multiply every delay and the profile's timeout (0.01 turns Slack's 5m retry into 3s; a scaled timeout stops at 1s; a --timeout given is never scaled)",
  delayScale: "multiply only the waits between attempts: retry fast, but give a slow receiver the provider's real timeout (0.01)",
  retry: 'one attempt per delivery',
};

type Which = keyof typeof HELP;

/** The timing flags a command takes (send and replay all of them; chaos some), declared once. */
export function declareTiming(
  cmd: Command,
  which: readonly Which[] = ['profile', 'timeout', 'retryDelays', 'timeScale', 'delayScale', 'retry'],
  help: Partial<Record<Which, string>> = {},
): Command {
  const text = (w: Which) => help[w] ?? HELP[w];
  if (which.includes('profile')) cmd.option('--profile <name>', text('profile'));
  if (which.includes('timeout')) cmd.option('--timeout <duration>', text('timeout'));
  if (which.includes('retryDelays')) cmd.option('--retry-delays <list>', text('retryDelays'));
  if (which.includes('timeScale')) cmd.option('--time-scale <factor>', text('timeScale'));
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
  noRetry: boolean;
} {
  return {
    ...(flags.profile !== undefined ? { profile: flags.profile } : {}),
    ...(flags.timeout !== undefined ? { timeout: flags.timeout } : {}),
    ...(flags.retryDelays !== undefined ? { retryDelays: flags.retryDelays } : {}),
    ...(flags.timeScale !== undefined ? { timeScale: flags.timeScale } : {}),
    ...(flags.delayScale !== undefined ? { delayScale: flags.delayScale } : {}),
    noRetry: flags.retry === false,
  };
}
