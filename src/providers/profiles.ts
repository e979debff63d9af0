import { providers } from './index.js';
import type { ProviderName, TimingProfile } from './index.js';

export interface ProfilesResult {
  command: 'profiles';
  profiles: (TimingProfile & { provider: ProviderName; default: boolean })[];
}

/** Every timing profile hookdrill knows, with where its numbers come from. */
export async function run(): Promise<ProfilesResult> {
  const profiles = Object.values(providers).flatMap((p) =>
    Object.values(p.profiles).map((profile) => ({ ...profile, provider: p.name, default: profile.name === p.defaultProfile })),
  );
  return { command: 'profiles', profiles };
}
