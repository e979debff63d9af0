import { defineCommand } from '../../cli/spec.js';
import { INBOX_DEFAULT_HELP, SCHEMA_HELP, inboxOrDefault } from '../../cli/flags/inbox.js';
import { parseIntFlag } from '../../util/options.js';
import { UsageError } from '../../util/errors.js';
import { exposedInspectorWarning, isLoopback } from '../../util/loopback.js';
import { safe } from '../../util/terminal.js';
import type { UiOptions } from '../../ui/server.js';
import { declareSigner, signerOptions } from '../../cli/flags/signer.js';
import type { SignerFlags } from '../../cli/flags/signer.js';

export interface UiFlags extends SignerFlags {
  inbox?: string;
  schema?: string;
  port?: string;
  host?: string;
  fixturesDir?: string;
}

export const ui = defineCommand<UiFlags, UiOptions>({
  name: 'ui',
  declare: (cmd) =>
    declareSigner(cmd, {
      provider: 'with --secret: whose signing replays from the page use',
      secret: 'sign replays and curl commands from the page with this (it never reaches the page)',
    })
      .description(
        'see the inbox in a browser: counts, the oldest pending, dead rows by error, a live list, one delivery; requeue from the page',
      )
      .option('--inbox <file|url>', `the inbox; or postgres://user@host/db, redis://host:6379/QUEUE ${INBOX_DEFAULT_HELP}`)
      .option('--schema <name>', SCHEMA_HELP)
      .option('--port <n>', 'the port to serve the page on (default: 4040; 0: any free port)')
      .option('--fixtures-dir <dir>', 'where the page\'s "save as fixture" writes (default: ./fixtures)')
      .option('--host <address>', 'the address to bind (default: 127.0.0.1; the page needs its token wherever it is served)'),
  options: ({ flags, env }) => ({
    ...inboxOrDefault(flags),
    ...signerOptions(flags, env),
    port: parseIntFlag(flags.port, '--port', 0, 65_535, 4040),
    ...(flags.host !== undefined ? { host: flags.host } : {}),
    ...(flags.fixturesDir !== undefined ? { fixturesDir: flags.fixturesDir } : {}),
  }),
  async execute(options) {
    const [{ startUi }, { run: inspect }, { untilSignal }] = await Promise.all([
      import('../../ui/server.js'),
      import('../../incident/inspect.js'),
      import('../../cli/io.js'),
    ]);
    const host = options.host ?? '127.0.0.1';
    if (host.trim() === '') throw new UsageError('--host is empty: give an address (127.0.0.1 keeps the inspector on this machine)');
    // The inbox is opened once first, so a wrong target is one line and exit 2, not a page of errors.
    await inspect({ inbox: options.inbox });
    const handle = await startUi(options);
    process.stdout.write(`hookdrill ui: open ${handle.pageUrl}\n(the token in it is required on every request; Ctrl-C to stop)\n`);
    if (!isLoopback(host)) process.stderr.write(`hookdrill: ${safe(exposedInspectorWarning(host, (options.secrets?.length ?? 0) > 0))}\n`);
    await untilSignal();
    await handle.close();
  },
});
