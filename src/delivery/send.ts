import { UsageError } from '../util/errors.js';
import { deliveryHooks } from './hooks.js';
import type { DeliveryHookOptions } from './hooks.js';
import { existsSync } from 'node:fs';
import {
  applyOverrides,
  compileFixture,
  contentTypeOption,
  hookOwnerOption,
  looksLikeAPath,
  overridesOption,
  resolveFixtures,
} from '../fixtures/index.js';
import type { ContentType } from '../fixtures/index.js';
import type { EventFactory, FieldOverride, FieldSets, Fixture } from '../fixtures/index.js';
import { headersOption, stringOption, stringsOption } from '../util/shapes.js';
import type { Delays, HeaderSet, Strings } from '../util/shapes.js';
import { isProviderName } from '../providers/index.js';
import { knownProviderNames } from '../providers/names.js';
import { editDistance } from '../util/edit-distance.js';
import { resolvePublicUrl, resolveSigner, resolveTimingFlags } from './signer.js';
import type { ProviderName } from '../providers/index.js';
import { parseExpectation } from './expect.js';
import type { Timing } from './timing.js';
import { runDeliveries } from './run.js';
import type { DeliveryRecord } from './deliver.js';
import { displayUrl, parseIntFlag, parseRate, parseUrl } from '../util/options.js';
import { summarizeDeliveries } from './summary.js';
import type { SendSummary } from './summary.js';
import { SEND_DEFAULTS } from './send-defaults.js';
import { serveKeys } from './key-server.js';
import { batchSizeOption, planBatches } from './batches.js';

/** `hookdrill send` options, as the CLI hands them over: the command validates them all. */
export interface SendOptions extends DeliveryHookOptions {
  /** Fixture names (`stripe/invoice.paid`) or files. */
  fixtures?: Strings;
  url?: string;
  /** The URL the provider would post to, where a proxy in front of the receiver forwards to `url` (URL-bound schemes sign it). */
  publicUrl?: string;
  provider?: ProviderName | (string & {});
  /** From --secret (repeatable); the CLI falls back to HOOKDRILL_SECRET. */
  secrets?: Strings;
  profile?: string;
  timeout?: string | number;
  /** `[0, 100, '1s']` (a number is milliseconds) or `'0,100ms,1s'`; `[]` or `'none'`: no retries. */
  retryDelays?: Delays;
  /** Scales the waits between attempts; the provider's timeout stays its own unless scaleTimeout. */
  timeScale?: string | number;
  /** The old name of timeScale: the same now. */
  delayScale?: string | number;
  /** Scale the provider's timeout by timeScale too (never below 1 s): stricter than the provider. */
  scaleTimeout?: boolean;
  noRetry?: boolean;
  /** Keep the provider's schedule for a 400, 401 or 403 (by default such a refusal ends the delivery). */
  retryRefused?: boolean;
  /** Fixture uses (events), taken in turn; a provider that batches puts several in one body. */
  count?: string | number;
  /** Events per body where the provider batches them (LINE, SendGrid, HubSpot): default its typical batch; 1 sends one a body. */
  batch?: string | number;
  concurrency?: string | number;
  rate?: string;
  duplicates?: string | number;
  shuffle?: boolean;
  seed?: string | number;
  /** `{ 'X-Env': 'ci' }`, `[['X-Env', 'ci']]` or `['X-Env: ci']`. */
  headers?: HeaderSet;
  expect?: string;
  /** Fixture fields to set: `{ 'data.object.amount_paid': 5000 }` or `['data.object.amount_paid=5000']`. */
  sets?: FieldSets;
  event?: string;
  /** `json` (the default) or `form`: a GitHub hook's content type (`payload=<the JSON>`, form-encoded). */
  contentType?: ContentType | (string & {});
  /** GitHub: who owns the hook that sends — repository, organization, app, business, marketplace, sponsors_listing (default: the first the event can come from). */
  hookOwner?: string;
  signal?: AbortSignal;
}

export type { SendSummary } from './summary.js';

/** The result of `send`, printed as-is by --json. It never holds a secret. */
export interface SendResult {
  command: 'send';
  ok: boolean;
  provider: ProviderName;
  url: string;
  expect: string;
  timing: Timing;
  duplicates: number;
  /** Where the provider batches events (LINE, SendGrid, HubSpot): the events sent in all, and the most in one body. */
  batched?: { events: number; size: number };
  /** Present with --shuffle: pass it back as --seed to send in the same order again. */
  seed?: number;
  /** Event seqs in the order they were sent. */
  order?: number[];
  interrupted: boolean;
  summary: SendSummary;
  deliveries: DeliveryRecord[];
}

const MAX_COUNT = 10_000_000;

export async function run(o: SendOptions): Promise<SendResult> {
  const url = parseUrl(stringOption(o.url, 'url'), '--url');
  const fixtureNames = stringsOption(o.fixtures, 'fixtures') ?? [];
  const { provider, secrets } = resolveSigner({ provider: o.provider ?? inferProvider(fixtureNames), secrets: o.secrets });
  const publicUrl = resolvePublicUrl(provider, o.publicUrl);
  // A JWT provider's public keys, where the receiver fetches them (test mode: delivery/key-server.ts).
  await serveKeys(provider, secrets);
  const scheduled = resolveTimingFlags(provider, o);
  const timing = o.retryRefused
    ? scheduled
    : { ...scheduled, stopStatuses: [...new Set([...scheduled.stopStatuses, ...SEND_DEFAULTS.refusedStatuses])] };

  const fixtures = resolveFixtures(fixtureNames, provider.name);
  const overrides = overridesOption(o.sets);
  checkOverrides(fixtures, overrides);

  const count = parseIntFlag(o.count, '--count', 1, MAX_COUNT, fixtures.length);
  const concurrency = parseIntFlag(o.concurrency, '--concurrency', 1, 10_000, SEND_DEFAULTS.concurrency);
  const duplicates = parseIntFlag(o.duplicates, '--duplicates', 1, 1_000, SEND_DEFAULTS.duplicates);
  const ratePerSec = parseRate(o.rate);
  const expectation = parseExpectation(o.expect ?? SEND_DEFAULTS.expect);
  const extraHeaders = headersOption(o.headers, 'headers');
  const seed = o.shuffle ? parseIntFlag(o.seed, '--seed', 0, 2 ** 32 - 1, Math.floor(Math.random() * 2 ** 32)) : undefined;
  if (!o.shuffle && o.seed !== undefined) throw new UsageError('--seed goes with --shuffle');

  const contentType = contentTypeOption(o.contentType, provider);
  const hookOwner = hookOwnerOption(o.hookOwner, provider, fixtures);
  const factories = fixtures.map((f) => compileFixture(provider, f, overrides, o.event, contentType, hookOwner));
  // Several events a body where the provider batches them, as it does: count is events, not requests.
  const size = batchSizeOption(provider, o.batch);
  const plan = provider.contract.batching.events === 'list' ? planBatches(provider, factories, fixtures, count, size) : undefined;
  // What the scheme has the receiver fetch (SNS's signing certificate), served while the deliveries go out.
  const served = await provider.serve?.({ share: true });
  const out = await runDeliveries({
    provider,
    secrets,
    url,
    ...(publicUrl ? { publicUrl } : {}),
    timing,
    expectation,
    events: plan?.source ?? {
      make: (seq) => (factories[seq % factories.length] as EventFactory).make(Date.now()),
      label: (seq) => (fixtures[seq % fixtures.length] as Fixture).name,
    },
    count: plan?.bodies ?? count,
    concurrency,
    duplicates,
    extraHeaders,
    ...(ratePerSec !== undefined ? { ratePerSec } : {}),
    ...(seed !== undefined ? { shuffleSeed: seed } : {}),
    ...(o.signal ? { signal: o.signal } : {}),
    ...deliveryHooks(o),
  }).finally(() => served?.close());

  const { interrupted } = out;
  const summary = summarizeDeliveries(plan?.bodies ?? count, out.deliveries, out.elapsedMs);
  return {
    command: 'send',
    ok: summary.failed === 0 && !interrupted,
    provider: provider.name,
    url: displayUrl(url),
    expect: expectation.text,
    timing,
    duplicates,
    ...(plan ? { batched: { events: plan.events, size } } : {}),
    ...(seed !== undefined ? { seed, order: out.order } : {}),
    interrupted,
    summary,
    deliveries: out.deliveries,
  };
}

function inferProvider(fixtures: readonly string[]): ProviderName | undefined {
  // A file that is not there is the first thing to say, before any missing --provider.
  for (const f of fixtures) if (looksLikeAPath(f) && !existsSync(f)) throw new UsageError(`no such fixture file: ${f}`);
  const heads = new Set(fixtures.map((f) => f.split('/')[0] as string));
  const [only] = heads;
  if (heads.size === 1 && only !== undefined && isProviderName(only)) return only;
  // provider/event with a provider that is not one (strpe/invoice.paid): said as that, not as a missing --provider.
  for (const f of fixtures) {
    const head = f.split('/')[0] as string;
    if (!f.includes('/') || looksLikeAPath(f) || existsSync(f) || isProviderName(head)) continue;
    const near = knownProviderNames().filter((p) => editDistance(p, head) <= 2);
    throw new UsageError(
      `${f}: no provider ${head}${near.length ? ` — did you mean ${near.map((p) => `${p}/${f.slice(head.length + 1)}`).join(' or ')}?` : ''} (providers: ${knownProviderNames().join(', ')})`,
    );
  }
  return undefined;
}

/** Try every --set on every fixture before anything is sent: a typo fails the run up front. */
function checkOverrides(fixtures: readonly Fixture[], overrides: readonly FieldOverride[]): void {
  if (overrides.length === 0) return;
  for (const f of fixtures) applyOverrides(structuredClone(f.body), overrides, f.path);
}
