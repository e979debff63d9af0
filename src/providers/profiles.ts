import { describeContract } from './contract.js';
import { getProvider, allProviders } from './index.js';
import type { ProviderName, TimingProfile } from './index.js';

export interface ProfilesResult {
  command: 'profiles';
  profiles: (TimingProfile & { provider: ProviderName; default: boolean })[];
  /** With a provider named: how it delivers, each fact with its source. */
  contract?: { provider: ProviderName; title: string; facts: { fact: string; source: string }[] };
}

/**
 * Every timing profile hookdrill knows (a declared provider's too), with where its numbers come
 * from; with a provider named, its profiles and its delivery contract.
 */
export async function run(o: { provider?: string } = {}): Promise<ProfilesResult> {
  const chosen = o.provider === undefined ? allProviders() : [getProvider(o.provider)];
  const profiles = chosen.flatMap((p) =>
    Object.values(p.profiles).map((profile) => ({ ...profile, provider: p.name, default: profile.name === p.defaultProfile })),
  );
  const [one] = chosen;
  return {
    command: 'profiles',
    profiles,
    ...(o.provider !== undefined && one
      ? { contract: { provider: one.name, title: one.title, facts: describeContract(one.contract) } }
      : {}),
  };
}
