/**
 * Shell completion of commands, flags and fixture names, from the same command definitions as
 * `--help`. `hookdrill completion bash|zsh|fish` prints a script that asks
 * `hookdrill __complete WORD…` (the words typed so far, the last one partial) for candidates.
 */
import { Command } from 'commander';
import { PROVIDER_NAMES } from '../providers/names.js';
import { COMMANDS } from './registry.js';
import type { CommandSpec } from './spec.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** Commands that take fixture names as arguments (and `fixtures show`). */
const TAKES_FIXTURES = new Set(['send', 'chaos', 'fixtures show']);

/** What may come next, given the words after `hookdrill` (the last one is being typed). */
export async function candidates(words: readonly string[], fixtureNames: () => Promise<string[]>): Promise<string[]> {
  const typed = [...words];
  const current = typed.pop() ?? '';
  let specs: readonly CommandSpec[] = COMMANDS;
  let spec: CommandSpec | undefined;
  let path = '';
  for (const w of typed) {
    const next = specs.find((s) => s.name === w);
    if (!next) break;
    spec = next;
    path = path ? `${path} ${w}` : w;
    specs = next.subcommands ?? [];
  }
  const starts = (list: readonly string[]) => list.filter((c) => c.startsWith(current));
  if (!spec) return starts(COMMANDS.map((c) => c.name));
  const cmd = spec.declare(new Command(spec.name));
  const previous = typed.at(-1);
  const option = previous?.startsWith('--') ? cmd.options.find((o) => o.long === previous) : undefined;
  if (option?.required || option?.optional) {
    if (option.argChoices) return starts(option.argChoices);
    if (option.long === '--provider' || option.long === '--source') return starts(PROVIDER_NAMES);
    return [];
  }
  if (current.startsWith('-')) return starts(cmd.options.map((o) => o.long).filter((l): l is string => l !== undefined));
  const subs = starts((spec.subcommands ?? []).map((s) => s.name));
  if (TAKES_FIXTURES.has(path)) return [...subs, ...starts(await fixtureNames())];
  if (path === 'fixtures') return [...subs, ...starts(PROVIDER_NAMES)];
  return subs;
}

export function completionScript(shell: Shell): string {
  switch (shell) {
    case 'bash':
      return `# hookdrill completion for bash: eval "$(hookdrill completion bash)"
_hookdrill() {
  local IFS=$'\\n'
  COMPREPLY=($(hookdrill __complete "\${COMP_WORDS[@]:1:COMP_CWORD}" 2>/dev/null))
}
complete -o default -F _hookdrill hookdrill
`;
    case 'zsh':
      return `# hookdrill completion for zsh: eval "$(hookdrill completion zsh)"
_hookdrill() {
  local -a items
  items=("\${(@f)$(hookdrill __complete "\${(@)words[2,CURRENT]}" 2>/dev/null)}")
  compadd -a items
}
compdef _hookdrill hookdrill
`;
    case 'fish':
      return `# hookdrill completion for fish: hookdrill completion fish | source
complete -c hookdrill -f -a '(hookdrill __complete (commandline -opc)[2..-1] (commandline -ct) 2>/dev/null)'
`;
  }
}
