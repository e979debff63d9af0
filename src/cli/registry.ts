import { chaos } from '../commands/chaos/flags.js';
import { check } from '../commands/check/flags.js';
import { demo } from '../commands/demo/flags.js';
import { fixtures } from '../commands/fixtures/flags.js';
import { inspect } from '../commands/inspect/flags.js';
import { listen } from '../commands/listen/flags.js';
import { init } from '../commands/init/flags.js';
import { scenario } from '../commands/scenario/flags.js';
import { reconcile } from '../commands/reconcile/flags.js';
import { pull } from '../commands/pull/flags.js';
import { importCommand } from '../commands/import/flags.js';
import { profiles } from '../commands/profiles/flags.js';
import { keys } from '../commands/keys/flags.js';
import { replay } from '../commands/replay/flags.js';
import { requeue } from '../commands/requeue/flags.js';
import { send } from '../commands/send/flags.js';
import { completion } from '../commands/completion/flags.js';
import { ui } from '../commands/ui/flags.js';
import { verify } from '../commands/verify/flags.js';
import type { CommandSpec } from './spec.js';

/** Every command, in the order `--help` lists them. Adding one: its flags module, and a line here. */
// Each spec keeps its own Flags/Options types (CommandSpec's members are methods, so a spec of
// any flags fits the list).
export const COMMANDS: readonly CommandSpec[] = [
  send,
  fixtures,
  listen,
  chaos,
  inspect,
  requeue,
  replay,
  ui,
  check,
  verify,
  profiles,
  keys,
  demo,
  init,
  scenario,
  pull,
  reconcile,
  importCommand,
  completion,
];

/** Every command's full name, subcommands included (`fixtures`, `fixtures capture`), in `--help` order. */
export function commandPaths(commands: readonly CommandSpec[] = COMMANDS, parent = ''): string[] {
  return commands.flatMap((c) => {
    const path = parent ? `${parent} ${c.name}` : c.name;
    return [path, ...commandPaths(c.subcommands ?? [], path)];
  });
}
