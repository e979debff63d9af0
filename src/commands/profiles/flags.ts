import { show } from '../../cli/io.js';
import { defineCommand } from '../../cli/spec.js';

export interface ProfilesFlags {
  json?: boolean;
}

export const profiles = defineCommand<ProfilesFlags, { provider?: string }>({
  name: 'profiles',
  declare: (cmd) =>
    cmd
      .description(
        "list the timing profiles: each provider's timeout and retry schedule; with a provider, how it delivers (its batches, re-sends, endpoint checks and the answer it needs), each fact with its source",
      )
      .argument('[provider]', 'one provider: its profiles and its delivery contract')
      .option('--json', 'print the list as JSON'),
  options: ({ args }) => (args[0] !== undefined ? { provider: args[0] as string } : {}),
  async execute(options, flags) {
    const [{ run }, { renderProfiles }] = await Promise.all([import('../../providers/profiles.js'), import('../../render/profiles.js')]);
    const result = await run(options);
    show(flags.json, result, () => renderProfiles(result));
  },
});
