import { UsageError } from '../util/errors.js';

/**
 * No row to send: none matched (nothing to do, as `requeue` says of an empty match), or every one
 * matched has had its payload pruned (nothing can be sent: a failure). Not a usage error: the
 * command was right; the inbox holds nothing for it.
 */
export class NothingToReplay extends Error {
  override readonly name = 'NothingToReplay';
  constructor(
    readonly selector: Selector,
    readonly matched: number,
  ) {
    super(
      matched === 0
        ? 'nothing to replay: no row matches'
        : `nothing to replay: ${matched} row${matched === 1 ? '' : 's'} match, and their payloads were pruned`,
    );
  }
}
import { stringsOption } from '../util/shapes.js';
import type { Delays, Strings } from '../util/shapes.js';
import { deliveryHooks } from '../delivery/hooks.js';
import type { DeliveryHookOptions } from '../delivery/hooks.js';
import { endToEnd } from '../util/http-headers.js';
import { openInboxForCommand } from '../inbox/open.js';
import type { Selector, StoredDelivery } from '../inbox/index.js';
import { getProvider } from '../providers/index.js';
import type { Provider } from '../providers/index.js';
import type { TimingFlags } from '../delivery/signer.js';
import type { Timing } from '../delivery/timing.js';
import { resolveSigner, resolveTimingFlags } from '../delivery/signer.js';
import { parseExpectation } from '../delivery/expect.js';
import { runDeliveries } from '../delivery/run.js';
import { displayUrl, parseIntFlag, parseRate, parseUrl } from '../util/options.js';
import { isEmpty, parseSelector } from '../inbox/selector.js';
import type { SelectorFlags } from '../inbox/selector.js';
import { summarizeDeliveries } from '../delivery/summary.js';
import type { SendResult } from '../delivery/send.js';
import { REPLAY_DEFAULTS } from './replay-defaults.js';

export interface ReplayOptions extends SelectorFlags, DeliveryHookOptions {
  inbox?: string;
  to?: string;
  provider?: string;
  secrets?: Strings;
  /** Send the stored headers untouched instead of re-signing. */
  originalHeaders?: boolean;
  profile?: string;
  timeout?: string | number;
  /** `[0, 100, '1s']` (a number is milliseconds) or `'0,100ms,1s'`. */
  retryDelays?: Delays;
  /** Scales the waits between attempts; the provider's timeout stays its own unless scaleTimeout. */
  timeScale?: string | number;
  /** The old name of timeScale: the same now. */
  delayScale?: string | number;
  /** Scale the provider's timeout by timeScale too (never below 1 s): stricter than the provider. */
  scaleTimeout?: boolean;
  noRetry?: boolean;
  concurrency?: string | number;
  rate?: string;
  limit?: string | number;
  signal?: AbortSignal;
}

export type ReplayResult = Omit<SendResult, 'command'> & {
  command: 'replay';
  inbox: string;
  selector: Selector;
  mode: 'resigned' | 'original-headers';
  /** Rows the selector matched (some may be beyond --limit). */
  matched: number;
  /** Rows whose payload had been pruned: nothing to send. */
  skippedPruned: number;
};

export async function run(o: ReplayOptions): Promise<ReplayResult> {
  const selector = parseSelector(o);
  if (isEmpty(selector)) {
    throw new UsageError(
      'replay needs a selector: --id ID, --status, --type, --since, --until or --error (it never replays a whole inbox by accident)',
    );
  }
  const url = parseUrl(o.to, '--to');
  const original = o.originalHeaders === true;
  const secrets = stringsOption(o.secrets, 'secrets') ?? [];
  if (!original && secrets.length === 0) {
    throw new UsageError('a secret is required to re-sign: --secret S, or HOOKDRILL_SECRET (or use --original-headers)');
  }
  const limit = parseIntFlag(o.limit, '--limit', 1, 1_000_000, REPLAY_DEFAULTS.limit);

  const inbox = await openInboxForCommand(o.inbox, { readonly: true });
  let rows: StoredDelivery[];
  let matched: number;
  try {
    [rows, matched] = await Promise.all([inbox.select(selector, { limit }), inbox.count(selector)]);
  } finally {
    await inbox.close();
  }
  const sendable = rows.filter((r) => r.body !== null);
  if (sendable.length === 0) throw new NothingToReplay(selector, matched);

  // Without --provider, the rows' own source says how to sign (as --help promises); rows from
  // several providers cannot share one signature scheme.
  const sources = [...new Set(sendable.map((r) => r.source))];
  if (!o.provider && sources.length > 1) {
    throw new UsageError(`the rows come from several providers (${sources.join(', ')}): give --provider, or narrow with --source`);
  }
  const providerName = o.provider ?? (sources[0] as string);
  const provider = original ? getProvider(providerName) : resolveSigner({ provider: providerName, secrets }).provider;
  const timing = replayTiming(provider, o);
  const ratePerSec = parseRate(o.rate);
  const expectation = parseExpectation('2xx');

  const out = await runDeliveries({
    provider,
    secrets,
    url,
    timing,
    expectation,
    events: {
      make: (seq) => {
        const row = sendable[seq] as StoredDelivery;
        return {
          rawBody: row.body as Buffer, // the stored bytes, exactly as received
          deliveryId: row.deliveryId, // the original id: the receiver must see a redelivery, not a new event
          eventType: row.eventType ?? '',
          ...(original ? { fixedHeaders: endToEnd(row.headers) } : {}),
        };
      },
      label: (seq) => (sendable[seq] as StoredDelivery).source,
    },
    count: sendable.length,
    concurrency: parseIntFlag(o.concurrency, '--concurrency', 1, 10_000, REPLAY_DEFAULTS.concurrency),
    duplicates: 1,
    extraHeaders: [],
    ...(ratePerSec !== undefined ? { ratePerSec } : {}),
    ...(o.signal ? { signal: o.signal } : {}),
    ...deliveryHooks(o),
  });
  const { interrupted } = out;
  const summary = summarizeDeliveries(sendable.length, out.deliveries, out.elapsedMs);
  return {
    command: 'replay',
    ok: summary.failed === 0 && !interrupted,
    provider: provider.name,
    url: displayUrl(url),
    expect: expectation.text,
    timing,
    duplicates: 1,
    interrupted,
    summary,
    deliveries: out.deliveries,
    inbox: inbox.location,
    selector,
    mode: original ? 'original-headers' : 'resigned',
    matched,
    skippedPruned: rows.length - sendable.length,
  };
}

/**
 * During an incident a replay is one attempt per row, unless a schedule is asked for (--profile,
 * --retry-delays, --time-scale): the provider's own days-long schedule would keep retrying a row
 * the target refuses. And an answer that says the request itself is wrong — the signature, the
 * route, the endpoint gone (REPLAY_DEFAULTS.finalStatuses) — is final on any schedule: reported,
 * never retried.
 */
export function replayTiming(provider: Provider, o: TimingFlags): Timing {
  const asked = o.profile !== undefined || o.retryDelays !== undefined || o.timeScale !== undefined || o.delayScale !== undefined;
  const timing = resolveTimingFlags(provider, { ...o, noRetry: o.noRetry === true || !asked });
  return { ...timing, stopStatuses: [...new Set([...timing.stopStatuses, ...REPLAY_DEFAULTS.finalStatuses])] };
}
