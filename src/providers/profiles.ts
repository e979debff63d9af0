import { allProviders } from './index.js';
import type { ProviderName, TimingProfile } from './index.js';

export interface ProfilesResult {
  command: 'profiles';
  profiles: (TimingProfile & { provider: ProviderName; default: boolean })[];
}

/** Every timing profile hookdrill knows (a declared provider's too), with where its numbers come from. */
export async function run(): Promise<ProfilesResult> {
  const profiles = allProviders().flatMap((p) =>
    Object.values(p.profiles).map((profile) => ({ ...profile, provider: p.name, default: profile.name === p.defaultProfile })),
  );
  return { command: 'profiles', profiles };
}
