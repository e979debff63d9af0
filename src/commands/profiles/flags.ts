import { show } from '../../cli/io.js';
import { defineCommand } from '../../cli/spec.js';

export interface ProfilesFlags {
  json?: boolean;
}

export const profiles = defineCommand<ProfilesFlags, Record<string, never>>({
  name: 'profiles',
  declare: (cmd) =>
    cmd.description("list the timing profiles: each provider's timeout and retry schedule").option('--json', 'print the list as JSON'),
  options: () => ({}),
  async execute(_options, flags) {
    const [{ run }, { renderProfiles }] = await Promise.all([import('../../providers/profiles.js'), import('../../render/profiles.js')]);
    const result = await run();
    show(flags.json, result, () => renderProfiles(result));
  },
});
