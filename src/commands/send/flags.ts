import { PUBLIC_URL_HELP } from '../../cli/flags/public-url.js';
import { defineCommand } from '../../cli/spec.js';
import { declareTls, tlsOptions } from '../../cli/flags/tls.js';
import type { TlsFlags } from '../../cli/flags/tls.js';
import { collect, declareSigner, signerOptions } from '../../cli/flags/signer.js';
import type { SignerFlags } from '../../cli/flags/signer.js';
import { declareTiming, timingOptions } from '../../cli/flags/timing.js';
import type { TimingFlags } from '../../cli/flags/timing.js';
import { declareOutput } from '../../cli/flags/output.js';
import type { OutputFlags } from '../../cli/flags/output.js';
import { pick } from '../../cli/io.js';
import type { SendOptions } from '../../delivery/send.js';
import { SEND_DEFAULTS } from '../../delivery/send-defaults.js';

export interface SendFlags extends TlsFlags, SignerFlags, TimingFlags, OutputFlags {
  verbose?: boolean;
  url?: string;
  publicUrl?: string;
  count?: string;
  batch?: string;
  concurrency?: string;
  rate?: string;
  duplicates?: string;
  shuffle?: boolean;
  seed?: string;
  header?: string[];
  set?: string[];
  event?: string;
  contentType?: string;
  hookOwner?: string;
  expect?: string;
  retryRefused?: boolean;
}

export const send = defineCommand<SendFlags, SendOptions>({
  name: 'send',
  declare: (cmd) => {
    cmd
      .description('sign fixture events as the provider does and deliver them with its timeout and retry profile')
      .argument('[fixtures...]', 'fixture files, directories, or shipped fixtures (stripe/invoice.paid; see `hookdrill fixtures`)')
      .option('--url <url>', 'where to deliver, e.g. http://127.0.0.1:3000/webhooks [project file: url]')
      .option('--public-url <url>', PUBLIC_URL_HELP);
    declareSigner(cmd, {
      provider: 'whose signing and timing to use',
      secret: 'signing secret; repeat for rotation (stripe, standard, svix)',
    });
    declareTls(cmd);
    declareTiming(cmd);
    cmd.option(
      '--retry-refused',
      `follow the provider's schedule for a ${SEND_DEFAULTS.refusedStatuses.join(', ')} too (default: such a refusal — nearly always the secret — ends the delivery at once, with what to check)`,
    );
    cmd
      .option('--count <n>', 'events to send, taking the fixtures in turn (default: one per fixture)')
      .option(
        '--batch <n>',
        'LINE, SendGrid, HubSpot: events in one body, as the provider batches them (default: 3; 1 sends one a body; a captured batch goes as captured)',
      )
      .option('--concurrency <n>', `requests in flight at most (default: ${SEND_DEFAULTS.concurrency})`)
      .option('--rate <r>', 'new events per second at most (50, 50/s, 600/m)')
      .option('--duplicates <k>', `send each event K times at once: same id, same body (default: ${SEND_DEFAULTS.duplicates})`)
      .option('--shuffle', 'deliver in a random order (events are made in order first)')
      .option('--seed <n>', 'with --shuffle: the order to replay')
      .option('--header <name:value>', 'add or replace a request header (repeatable)', collect)
      .option('--set <path=value>', 'override a fixture field, e.g. data.object.amount_paid=5000 (repeatable)', collect)
      .option('--event <name>', 'event name for a fixture file not named after it (GitHub X-GitHub-Event, Shopify topic)')
      .option('--content-type <type>', "json, or form: a GitHub hook's content type (payload=<the JSON>, form-encoded) (default: json)")
      .option(
        '--hook-owner <owner>',
        'GitHub: who owns the hook that sends: repository, organization, app, business, marketplace, sponsors_listing (default: the first the event can come from)',
      )
      .option('--expect <status>', `what every delivery must end with: 2xx, 401, 4xx, 401,403 (default: ${SEND_DEFAULTS.expect})`);
    cmd.option('--verbose', "print each attempt's request (headers, body) and the answer on stderr");
    return declareOutput(cmd, { junit: 'write a JUnit XML report, one test case per delivery', quiet: true });
  },
  options: ({ args, flags, env }) => ({
    fixtures: (args[0] as string[] | undefined) ?? [],
    url: flags.url,
    ...signerOptions(flags, env),
    ...tlsOptions(flags),
    ...timingOptions(flags),
    ...pick(flags, [
      'publicUrl',
      'count',
      'batch',
      'concurrency',
      'rate',
      'duplicates',
      'seed',
      'expect',
      'event',
      'contentType',
      'hookOwner',
    ]),
    shuffle: flags.shuffle === true,
    ...(flags.retryRefused ? { retryRefused: true } : {}),
    headers: flags.header ?? [],
    sets: flags.set ?? [],
  }),
  async execute(options, flags) {
    const [{ run }, { executeDeliveries }] = await Promise.all([import('../../delivery/send.js'), import('./execute.js')]);
    await executeDeliveries((hooks) => run({ ...options, ...hooks }), flags, {
      suite: 'hookdrill send',
      showCopy: Number(options.duplicates ?? SEND_DEFAULTS.duplicates) > 1,
      expect: options.expect ?? SEND_DEFAULTS.expect,
      ...(options.url ? { url: options.url } : {}),
    });
  },
});
