import { InvalidArgumentError, Option } from 'commander';
import type { Command } from 'commander';
import { declarationFault, knownProviderNames } from '../../providers/names.js';
import { UsageError } from '../../util/errors.js';
import { readRegularFile } from '../../util/regular-file.js';

/** For repeatable flags: each use appends. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** Where a command's secrets may come from: the flag itself, a variable named, a file. */
export interface SecretFlags {
  secret?: string[];
  secretEnv?: string[];
  secretFile?: string[];
}

export interface SignerFlags extends SecretFlags {
  provider?: string;
}

/** Why --secret-env and --secret-file exist, said once wherever --secret is offered. */
const IN_ARGV = 'a --secret is visible to every local user in the process list: prefer --secret-env or --secret-file';

/**
 * --secret, --secret-env NAME and --secret-file PATH (each repeatable). A value in argv can be read
 * by every local user from /proc/PID/cmdline; a variable's value or a file's text cannot.
 */
export function declareSecretSources(cmd: Command, help: string, envNote = '[env: HOOKDRILL_SECRET]'): Command {
  return cmd
    .option('--secret <secret>', `${help} ${envNote}; ${IN_ARGV}`, collect)
    .option('--secret-env <name>', 'the name of an environment variable holding the secret (repeatable)', collect)
    .option('--secret-file <path>', 'a file holding the secret; a final line break is not part of it (repeatable)', collect);
}

/** --provider (one of the providers) and the secret's sources, with the help each command gives them. */
export function declareSigner(cmd: Command, help: { provider: string; secret: string }): Command {
  // The built-in providers and those the project file declares (registered before the flags are).
  const names = knownProviderNames();
  cmd.addOption(
    new Option('--provider <name>', help.provider).choices(names).argParser((value) => {
      if (names.includes(value)) return value;
      // A project file that could not be read may have declared it: its own error says why.
      throw new InvalidArgumentError(declarationFault()?.message ?? `Allowed choices are ${names.join(', ')}.`);
    }),
  );
  return declareSecretSources(cmd, help.secret);
}

/**
 * Every secret given, in order: --secret, then each --secret-env's variable, then each
 * --secret-file's text; with none of them, HOOKDRILL_SECRET (where `fallback` allows). An unset or
 * empty variable, a missing or special file, is one line naming the flag — never the value.
 */
export function secretsFrom(flags: SecretFlags, env: NodeJS.ProcessEnv, fallback = true): string[] {
  const out = [...(flags.secret ?? [])];
  for (const name of flags.secretEnv ?? []) {
    if (!/^[A-Za-z_][A-Za-z0-9_]{0,127}$/.test(name))
      throw new UsageError(`--secret-env takes the NAME of an environment variable (like STRIPE_WEBHOOK_SECRET), never the secret`);
    const value = env[name];
    if (value === undefined || value === '')
      throw new UsageError(`--secret-env ${name}: the variable is ${value === undefined ? 'not set' : 'empty'}`);
    out.push(value);
  }
  for (const path of flags.secretFile ?? []) {
    const text = readRegularFile(path, { what: '--secret-file', hint: 'give a file holding the secret', maxBytes: 64 * 1024 });
    if (text === undefined) throw new UsageError(`--secret-file ${path}: no such file`);
    // As `echo secret > file` writes it: the line break ends the line, it is not the key's.
    out.push(text.replace(/\r?\n$/, ''));
  }
  if (out.length === 0 && fallback && env.HOOKDRILL_SECRET) out.push(env.HOOKDRILL_SECRET);
  return out;
}

/** The provider and secrets a signing command takes: --secret and its sources win, else the environment. */
export function signerOptions(flags: SignerFlags, env: NodeJS.ProcessEnv): { provider?: string; secrets: string[] } {
  return {
    ...(flags.provider ? { provider: flags.provider } : {}),
    secrets: secretsFrom(flags, env),
  };
}
