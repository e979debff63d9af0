import { safe, safeOutput } from './util/terminal.js';
import { readFileSync } from 'node:fs';
import chalk from 'chalk';
import { Command, CommanderError } from 'commander';
import { editDistance } from './util/edit-distance.js';
import { COMMANDS } from './cli/registry.js';
import type { CommandSpec } from './cli/spec.js';
import { EXIT, ExpectationError, UsageError } from './util/errors.js';
import { InboxUnavailableError } from './inbox/types.js';
import { registerProjectProviders, withProjectFile } from './project/file.js';

/*
 * The CLI registers each command's own flags module (src/commands/<name>/flags.ts), which turns
 * flags into typed options and runs the command, loaded on demand: `hookdrill --help` must not
 * pay for undici, SQLite or the providers. Every error ends here and becomes one exit code:
 * usage/input 2, a failed expectation 1, a bug 70.
 */

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export interface ProgramHooks {
  /** Called instead of running a command, with its name (`fixtures capture` for a subcommand) and options (the flags → options tests use it). */
  runF?: (name: string, options: unknown) => void;
  env?: NodeJS.ProcessEnv;
  /** Where the project file is looked for (default: the working directory). */
  cwd?: string;
}

export function buildProgram(hooks: ProgramHooks = {}): Command {
  // Providers the project file declares are known before any flag is read (--provider acme).
  registerProjectProviders(hooks.cwd ?? process.cwd());
  const program = new Command('hookdrill')
    .description("Test and replay webhooks: signed deliveries with each provider's real timeout and retry profile.")
    .version(version(), '-V, --version')
    .showSuggestionAfterError()
    .exitOverride()
    .configureOutput({
      // A mistyped flag may carry a secret (--secert=whsec_…): name the flag, never its value.
      outputError: (text, write) => write(text.replace(/^error: /, 'hookdrill: ').replace(/(unknown option '[^'=]*)=[^']*'/, "$1=…'")),
    });
  for (const spec of COMMANDS) register(program, spec, '', hooks);
  return program;
}

/** A command, and its subcommands under it; `path` is how it is named (`fixtures capture`). */
function register(parent: Command, spec: CommandSpec, parentPath: string, hooks: ProgramHooks): void {
  const path = parentPath ? `${parentPath} ${spec.name}` : spec.name;
  const cmd = spec.declare(parent.command(spec.name));
  if (spec.subcommands?.length) {
    // The command's own flags stop at the subcommand's word, so a subcommand may declare a flag of
    // the same name (`fixtures --json` and `fixtures capture --json`). Commander needs this on every
    // command above too: the program's own flags (-V, -h) then go before the command's name.
    for (let c: Command | null = cmd; c; c = c.parent) c.enablePositionalOptions();
    for (const sub of spec.subcommands) register(cmd, sub, path, hooks);
  }
  cmd.action(async () => {
    const env = hooks.env ?? process.env;
    // hookdrill.config.json (or package.json "hookdrill") under the flags: a flag given wins.
    const flags = withProjectFile(path, cmd.opts(), hooks.cwd ?? process.cwd(), env);
    const options = spec.options({ args: cmd.processedArgs, flags, env });
    if (hooks.runF) return hooks.runF(path, options);
    await spec.execute(options, flags);
  });
}

export async function main(argv: readonly string[]): Promise<void> {
  // no-color.org: NO_COLOR present and not empty turns colour off, at a terminal too (chalk's
  // detection reads FORCE_COLOR and the terminal, not NO_COLOR).
  if (process.env.NO_COLOR) chalk.level = 0;
  const program = buildProgram();
  if (argv.length <= 2) {
    // No command at all is a usage error (a script that forgot its arguments must not pass).
    process.stderr.write(program.helpInformation());
    process.exitCode = EXIT.usage;
    return;
  }
  // Output that cannot be written (a full disk, a closed pipe) is one line, never a stack trace.
  process.stdout.on('error', (err: NodeJS.ErrnoException) => {
    // The reader stopped reading (| head) before the run ended: its verdict is unknown, so never 0
    // (141 is what a shell reports for a process ended by SIGPIPE).
    if (err.code === 'EPIPE') process.exit(141);
    process.stderr.write(`hookdrill: cannot write the output: ${err.code ?? err.message}\n`);
    process.exit(EXIT.usage);
  });
  // `hookdrill __complete WORD…`: what the completion scripts ask for (candidates, one a line).
  if (argv[2] === '__complete') {
    const [{ candidates }, { run: listFixtures }] = await Promise.all([import('./cli/completion.js'), import('./fixtures/list.js')]);
    const names = async () => (await listFixtures()).fixtures.map((f) => f.name);
    const found = await candidates(argv.slice(3), names).catch(() => []);
    // One candidate a line: a fixture name (a file's) holding a line break must not become two.
    process.stdout.write(found.length ? `${found.map(safe).join('\n')}\n` : '');
    return;
  }
  // `hookdrill help sned` is a mistyped command, as `hookdrill sned` is: not the general help.
  const [word, topic] = argv.slice(2);
  if (word === 'help' && topic !== undefined && !COMMANDS.some((c) => c.name === topic)) {
    const near = COMMANDS.map((c) => c.name).find((name) => editDistance(name, topic) <= 2);
    process.stderr.write(`hookdrill: unknown command '${topic}'${near ? ` (did you mean ${near}?)` : ''}\n`);
    process.exitCode = EXIT.usage;
    return;
  }
  try {
    await program.parseAsync([...argv]);
  } catch (err) {
    process.exitCode = exitCodeFor(err);
  }
}

function exitCodeFor(err: unknown): number {
  if (err instanceof CommanderError) {
    // Commander has printed its own message already; help and version are not errors.
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') {
      return EXIT.ok;
    }
    return EXIT.usage;
  }
  // A store that cannot be reached or written (Postgres down, a disk error) is the user's to fix.
  // An error's message is one line that often quotes outside text (an API's answer, a file's
  // contents, a flag's value): escaped whole with safe(), so it cannot print a line of its own.
  if (err instanceof UsageError || err instanceof InboxUnavailableError) {
    process.stderr.write(`hookdrill: ${safe(err.message)}\n`);
    return EXIT.usage;
  }
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'EMFILE' || code === 'ENFILE') {
    process.stderr.write('hookdrill: too many open files for this process: raise the limit (ulimit -n) or lower --concurrency\n');
    return EXIT.usage;
  }
  if (err instanceof ExpectationError) {
    process.stderr.write(`hookdrill: ${safe(err.message)}\n`);
    return EXIT.expectationFailed;
  }
  const message = err instanceof Error ? err.message : String(err);
  process.stderr.write(
    safeOutput(
      `hookdrill: internal error: ${safe(message)}\n(this is a bug in hookdrill; set HOOKDRILL_DEBUG=1 for the stack and please report it)\n`,
    ),
  );
  if (process.env.HOOKDRILL_DEBUG && err instanceof Error && err.stack) process.stderr.write(`${err.stack}\n`);
  return EXIT.bug;
}
