import { InvalidArgumentError, Option } from 'commander';
import type { Command } from 'commander';
import { declarationFault, knownProviderNames } from '../../providers/names.js';

/** For repeatable flags: each use appends. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

export interface SignerFlags {
  provider?: string;
  secret?: string[];
}

/** --provider (one of the providers) and --secret (repeatable), with the help each command gives them. */
export function declareSigner(cmd: Command, help: { provider: string; secret: string }): Command {
  // The built-in providers and those the project file declares (registered before the flags are).
  const names = knownProviderNames();
  return cmd
    .addOption(
      new Option('--provider <name>', help.provider).choices(names).argParser((value) => {
        if (names.includes(value)) return value;
        // A project file that could not be read may have declared it: its own error says why.
        throw new InvalidArgumentError(declarationFault()?.message ?? `Allowed choices are ${names.join(', ')}.`);
      }),
    )
    .option('--secret <secret>', `${help.secret} [env: HOOKDRILL_SECRET]`, collect);
}

/** The one place the HOOKDRILL_SECRET fallback lives: --secret wins, else the environment. */
export function signerOptions(flags: SignerFlags, env: NodeJS.ProcessEnv): { provider?: string; secrets: string[] } {
  const fromEnv = env.HOOKDRILL_SECRET;
  return {
    ...(flags.provider ? { provider: flags.provider } : {}),
    secrets: flags.secret ?? (fromEnv ? [fromEnv] : []),
  };
}
