import { UsageError } from '../util/errors.js';
import { github } from './github.js';
import { shopify } from './shopify.js';
import { slack } from './slack.js';
import { standard, svix } from './standard.js';
import { stripe } from './stripe.js';
import type { Provider, ProviderName, TimingProfile } from './types.js';

export * from './types.js';

export const providers: Readonly<Record<ProviderName, Provider>> = { stripe, github, slack, standard, svix, shopify };

export const providerNames = Object.keys(providers) as ProviderName[];

export function isProviderName(name: string): name is ProviderName {
  return Object.hasOwn(providers, name);
}

export function getProvider(name: string): Provider {
  if (!isProviderName(name)) {
    throw new UsageError(`unknown provider "${name}" (one of: ${providerNames.join(', ')})`);
  }
  return providers[name];
}

/** Every profile of every provider, by name: `--profile slack` works whichever provider signs. */
export function getProfile(name: string): TimingProfile {
  for (const provider of Object.values(providers)) {
    // Own properties only: `--profile constructor` must not find Object.prototype's.
    if (Object.hasOwn(provider.profiles, name)) return provider.profiles[name] as TimingProfile;
  }
  const all = Object.values(providers).flatMap((p) => Object.keys(p.profiles));
  throw new UsageError(`unknown profile "${name}" (one of: ${all.join(', ')})`);
}
