import { UsageError } from './errors.js';
import { getProfile, getProvider } from './providers/index.js';
import type { Provider } from './providers/index.js';
import { parseDuration } from './duration.js';
import { resolveTiming } from './delivery/timing.js';
import type { Timing } from './delivery/timing.js';
import { parseDelays, parsePositiveNumber } from './options.js';

/**
 * The provider and secrets a command signs with, checked once, the same way everywhere: a known
 * provider, at least one secret (flag, or HOOKDRILL_SECRET via the CLI), several only where the
 * provider signs with several at once (rotation), each of the provider's shape.
 */
export function resolveSigner(o: { provider?: string | undefined; secrets?: string[] | undefined }): { provider: Provider; secrets: string[] } {
  if (!o.provider) throw new UsageError('--provider is required (stripe, github, slack, standard, shopify)');
  const provider = getProvider(o.provider);
  const secrets = o.secrets ?? [];
  if (secrets.length === 0) throw new UsageError('a secret is required: --secret S, or HOOKDRILL_SECRET in the environment');
  if (secrets.length > 1 && !provider.rotation) {
    throw new UsageError(`${provider.name} signs with one secret; --secret was given ${secrets.length} times`);
  }
  for (const s of secrets) provider.checkSecret(s);
  return { provider, secrets };
}

/** The timing flags shared by send and replay: --profile, --timeout, --retry-delays, --time-scale, --no-retry. */
export interface TimingFlags {
  profile?: string | undefined;
  timeout?: string | undefined;
  retryDelays?: string | undefined;
  timeScale?: string | number | undefined;
  noRetry?: boolean | undefined;
}

export function resolveTimingFlags(provider: Provider, o: TimingFlags, defaultScale = 1): Timing {
  const profile = o.profile ? getProfile(o.profile) : provider.profiles[provider.defaultProfile]!;
  const retryDelaysMs = parseDelays(o.retryDelays, '--retry-delays');
  return resolveTiming(profile, {
    timeScale: parsePositiveNumber(o.timeScale, '--time-scale', defaultScale),
    ...(o.timeout !== undefined ? { timeoutMs: parseDuration(o.timeout, '--timeout') } : {}),
    ...(retryDelaysMs ? { retryDelaysMs } : {}),
    noRetry: o.noRetry === true,
  });
}
