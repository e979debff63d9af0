import { defineCommand } from '../../cli/spec.js';

export interface DemoFlags {
  json?: boolean;
}

export const demo = defineCommand<DemoFlags, Record<string, never>>({
  name: 'demo',
  declare: (cmd) =>
    cmd
      .description('show, side by side, why a receiver must verify, store, answer, then work (~10 s, real processes)')
      .option('--json', 'print the measured figures as JSON'),
  options: () => ({}),
  async execute(_options, flags) {
    const [{ run, abortDemos }, { renderDemo }, io] = await Promise.all([
      import('../../demo/run.js'),
      import('../../render/demo.js'),
      import('../../cli/io.js'),
    ]);
    // Interrupted: its receiver processes and temporary directory go with it.
    for (const [s, code] of Object.entries(io.SIGNAL_EXIT)) {
      process.once(s, () => {
        abortDemos();
        process.exit(code);
      });
    }
    io.printResult(await run(), flags.json, renderDemo);
  },
});
