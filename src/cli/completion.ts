/**
 * Shell completion of commands, flags and fixture names, from the same command definitions as
 * `--help`. `hookdrill completion bash|zsh|fish` prints a script that asks
 * `hookdrill __complete WORD…` (the words typed so far, the last one partial) for candidates.
 */
import { fileURLToPath } from 'node:url';
import { Command } from 'commander';
import { knownProviderNames } from '../providers/names.js';
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
    if (option.long === '--provider' || option.long === '--source') return starts(knownProviderNames());
    return [];
  }
  if (current.startsWith('-'))
    return starts(
      cmd.options
        .filter((o) => !o.hidden)
        .map((o) => o.long)
        .filter((l): l is string => l !== undefined),
    );
  const subs = starts((spec.subcommands ?? []).map((s) => s.name));
  if (TAKES_FIXTURES.has(path)) return [...subs, ...starts(await fixtureNames())];
  if (path === 'fixtures') return [...subs, ...starts(knownProviderNames())];
  return subs;
}

/**
 * The command a script runs for candidates: this very install (node and its bin file, by absolute
 * path), not `hookdrill` on PATH — a project install (npx hookdrill, node_modules/.bin) is not on
 * PATH, and a script calling a command that is not there completes nothing, silently.
 */
function self(): string {
  const quote = (p: string) => `'${p.replace(/'/g, "'\\''")}'`;
  return `${quote(process.execPath)} ${quote(fileURLToPath(new URL('../../../bin/hookdrill', import.meta.url)))}`;
}

export function completionScript(shell: Shell): string {
  const me = self();
  switch (shell) {
    case 'bash':
      // For `hookdrill …` and for `npx hookdrill …` (after npx's own word); any other npx line keeps bash's default.
      return `# hookdrill completion for bash: eval "$(hookdrill completion bash)" (or npx hookdrill completion bash)
_hookdrill() {
  local IFS=$'\\n' first=1
  if [[ \${COMP_WORDS[0]} == npx ]]; then
    [[ \${COMP_WORDS[1]} == hookdrill && COMP_CWORD -ge 2 ]] || return 0
    first=2
  fi
  COMPREPLY=($(${me} __complete "\${COMP_WORDS[@]:first:COMP_CWORD-first+1}" 2>/dev/null))
}
complete -o default -F _hookdrill hookdrill
complete -o default -F _hookdrill npx
`;
    case 'zsh':
      return `# hookdrill completion for zsh: eval "$(hookdrill completion zsh)" (or npx hookdrill completion zsh)
_hookdrill() {
  local -a items
  local first=2
  if [[ \${words[1]} == npx ]]; then
    [[ \${words[2]} == hookdrill && CURRENT -ge 3 ]] || return 0
    first=3
  fi
  items=("\${(@f)$(${me} __complete "\${(@)words[first,CURRENT]}" 2>/dev/null)}")
  compadd -a items
}
compdef _hookdrill hookdrill
compdef _hookdrill npx
`;
    case 'fish':
      return `# hookdrill completion for fish: hookdrill completion fish | source
complete -c hookdrill -f -a '(${me.replace(/'/g, "\\'")} __complete (commandline -opc)[2..-1] (commandline -ct) 2>/dev/null)'
`;
  }
}
