import { defineCommand } from '../../cli/spec.js';
import { pick } from '../../cli/io.js';
import { declareSecretSources, secretsFrom } from '../../cli/flags/signer.js';
import type { ScenarioOptions } from '../../scenario/run.js';

export interface ScenarioFlags {
  url?: string;
  secret?: string[];
  orders?: string;
  state?: string;
  settle?: string;
  late?: string;
  seed?: string;
  json?: boolean;
}

export const scenario = defineCommand<ScenarioFlags, ScenarioOptions & { list: boolean }>({
  name: 'scenario',
  declare: (cmd) => {
    cmd
      .description(
        "play events that belong together in several orders and compare your receiver's state after each (no argument: list them)",
      )
      .argument('[scenario]', 'a shipped scenario (stripe/subscription-signup) or a scenario file')
      .option('--url <url>', 'the receiver [project file: url]');
    declareSecretSources(cmd, 'signing secret', '[env: HOOKDRILL_SECRET; project file: secretEnv]');
    cmd
      .option('--state <command>', "prints the receiver's state as JSON; HOOKDRILL_VAR_<NAME> holds each of the run's ids")
      .option('--orders <list>', 'in-order, reversed, shuffled, late (default: all four)')
      .option('--settle <duration>', 'how long after the last delivery the state is read (default: 2s)')
      .option('--late <duration>', 'with late: how long the first event arrives after the rest (default: 1s)')
      .option('--seed <n>', 'the shuffle seed (a run prints its own)')
      .option('--json', 'print the result as JSON');
    return cmd;
  },
  options: ({ args, flags, env }) => {
    const secrets = secretsFrom(flags, env);
    return {
      scenario: (args[0] as string | undefined) ?? '',
      list: args[0] === undefined,
      ...pick(flags, ['url', 'state', 'settle', 'late']),
      secrets,
      ...(flags.orders !== undefined
        ? {
            orders: flags.orders
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean),
          }
        : {}),
      ...(flags.seed !== undefined ? { seed: Number(flags.seed) } : {}),
    };
  },
  async execute(options, flags) {
    if (options.list) {
      const [{ listScenarios, loadScenario }, { safe }] = await Promise.all([
        import('../../scenario/load.js'),
        import('../../util/terminal.js'),
      ]);
      // Shipped files, but files all the same: escaped as every printed value is.
      for (const name of listScenarios()) process.stdout.write(`${safe(name).padEnd(34)} ${safe(loadScenario(name).description)}\n`);
      return;
    }
    const [{ run }, { renderScenario }, io] = await Promise.all([
      import('../../scenario/run.js'),
      import('../../render/scenario.js'),
      import('../../cli/io.js'),
    ]);
    io.printResult(await run(options), flags.json, renderScenario);
  },
});
