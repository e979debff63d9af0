import { Argument } from 'commander';
import { defineCommand } from '../../cli/spec.js';

export interface CompletionOptions {
  shell: 'bash' | 'zsh' | 'fish';
}

/** `hookdrill completion bash|zsh|fish`: the script that completes commands, flags and fixture names. */
export const completion = defineCommand<object, CompletionOptions>({
  name: 'completion',
  declare: (cmd) =>
    cmd
      .description('print a shell completion script for commands, flags and fixture names (bash: eval "$(hookdrill completion bash)")')
      .addArgument(new Argument('<shell>', 'bash, zsh or fish').choices(['bash', 'zsh', 'fish'])),
  options: ({ args }) => ({ shell: args[0] as CompletionOptions['shell'] }),
  async execute(options) {
    const { completionScript } = await import('../../cli/completion.js');
    process.stdout.write(completionScript(options.shell));
  },
});
