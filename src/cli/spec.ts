import type { Command } from 'commander';

/** What commander hands an action: the declared arguments (processed) and the flags. */
export interface Parsed<Flags> {
  args: readonly unknown[];
  flags: Flags;
  env: NodeJS.ProcessEnv;
}

/**
 * One CLI command, declared beside its run function (src/commands/<name>/flags.ts): its flags
 * and help, the pure mapping from flags to the command's typed options, and how the CLI runs it.
 * A flags module imports nothing heavy, so `--help` stays cheap; `execute` loads the rest lazily.
 */
export interface CommandSpec<Flags = object, Options = unknown> {
  name: string;
  /** Arguments, flags and help text on the commander command. */
  declare(cmd: Command): Command;
  /** Flags (with the arguments and the environment) → the command's options. Pure: no I/O, no printing. */
  options(parsed: Parsed<Flags>): Options;
  /** Run it as the CLI does: load the command and its renderer, print, set process.exitCode. */
  execute(options: Options, flags: Flags): Promise<void>;
  /**
   * Commands under this one, each a spec of its own (`fixtures capture`): the word after this
   * command's name picks one; with none, this command runs as before. The CLI names a subcommand by
   * its path (`fixtures capture`), and this command's own flags go before the subcommand's word.
   */
  subcommands?: readonly CommandSpec[];
}

/** Keeps each spec's own Flags/Options types while the registry holds them as one list. */
export function defineCommand<Flags, Options>(spec: CommandSpec<Flags, Options>): CommandSpec<Flags, Options> {
  return spec;
}
