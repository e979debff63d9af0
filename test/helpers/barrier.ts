/**
 * Loaded into a hookdrill process with `--import` when HOOKDRILL_TEST_BARRIER names a directory:
 * it loads the modules `hookdrill keys` needs, says it is ready (a file named by its pid), then
 * blocks opening the directory's FIFO `go` until the test opens it for writing, which releases every
 * waiting process at once. Without it, processes started together reach the key file one after
 * another on a loaded machine, and a race between them is left to chance.
 */
import { closeSync, openSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const dir = process.env.HOOKDRILL_TEST_BARRIER;
if (dir) {
  await Promise.all([
    import('../../src/cli.js'),
    import('../../src/providers/keys-run.js'),
    import('../../src/render/keys.js'),
    import('../../src/cli/io.js'),
  ]);
  writeFileSync(join(dir, `ready-${process.pid}`), '');
  // A blocking open of a FIFO returns only once a writer opens it: the test's release.
  closeSync(openSync(join(dir, 'go'), 'r'));
}
