import { EXIT } from '../../util/errors.js';
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
    const [{ run, abortDemos }, render, io, { forTerminal, safeOutput }] = await Promise.all([
      import('../../demo/run.js'),
      import('../../render/demo.js'),
      import('../../cli/io.js'),
      import('../../util/terminal.js'),
    ]);
    // Interrupted: its receiver processes and temporary directory go with it.
    for (const [s, code] of Object.entries(io.SIGNAL_EXIT)) {
      process.once(s, () => {
        abortDemos();
        process.exit(code);
      });
    }
    if (flags.json) {
      io.printResult(await run(), true, render.renderDemo);
      return;
    }
    // Each contrast as it is measured: ten seconds of silence reads as a hang.
    // Wrapped at a space to the terminal's width: the terminal would break words at its edge.
    const out = (text: string) => process.stdout.write(forTerminal(safeOutput(text)));
    out(render.demoHeader());
    const result = await run({
      onSection: (s) => out(render.demoSection(s)),
    });
    out(render.demoFooter(result));
    process.exitCode = result.ok ? EXIT.ok : EXIT.expectationFailed;
  },
});
