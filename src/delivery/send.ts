import { UsageError } from '../util/errors.js';
import { deliveryHooks } from './hooks.js';
import type { DeliveryHookOptions } from './hooks.js';
import { existsSync } from 'node:fs';
import { applyOverrides, compileFixture, looksLikeAPath, parseOverride, resolveFixtures } from '../fixtures/index.js';
import type { EventFactory, Fixture } from '../fixtures/index.js';
import { isProviderName } from '../providers/index.js';
import { resolveSigner, resolveTimingFlags } from './signer.js';
import type { ProviderName } from '../providers/index.js';
import { parseExpectation } from './expect.js';
import type { Timing } from './timing.js';
import { runDeliveries } from './run.js';
import type { DeliveryRecord } from './deliver.js';
import { displayUrl, parseHeader, parseIntFlag, parseRate, parseUrl } from '../util/options.js';
import { summarizeDeliveries } from './summary.js';
import type { SendSummary } from './summary.js';
import { SEND_DEFAULTS } from './send-defaults.js';

/** `hookdrill send` options, as the CLI hands them over: the command validates them all. */
export interface SendOptions extends DeliveryHookOptions {
  fixtures?: string[];
  url?: string;
  provider?: string;
  /** From --secret (repeatable); the CLI falls back to HOOKDRILL_SECRET. */
  secrets?: string[];
  profile?: string;
  timeout?: string | number;
  retryDelays?: string;
  timeScale?: string | number;
  /** Scales only the waits between attempts, never the timeout. */
  delayScale?: string | number;
  noRetry?: boolean;
  count?: string | number;
  concurrency?: string | number;
  rate?: string;
  duplicates?: string | number;
  shuffle?: boolean;
  seed?: string | number;
  headers?: string[];
  expect?: string;
  sets?: string[];
  event?: string;
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
  const url = parseUrl(o.url, '--url');
  const { provider, secrets } = resolveSigner({ provider: o.provider ?? inferProvider(o.fixtures ?? []), secrets: o.secrets });
  const timing = resolveTimingFlags(provider, o);

  const fixtures = resolveFixtures(o.fixtures ?? [], provider.name);
  const overrides = (o.sets ?? []).map(parseOverride);
  checkOverrides(fixtures, overrides);

  const count = parseIntFlag(o.count, '--count', 1, MAX_COUNT, fixtures.length);
  const concurrency = parseIntFlag(o.concurrency, '--concurrency', 1, 10_000, SEND_DEFAULTS.concurrency);
  const duplicates = parseIntFlag(o.duplicates, '--duplicates', 1, 1_000, SEND_DEFAULTS.duplicates);
  const ratePerSec = parseRate(o.rate);
  const expectation = parseExpectation(o.expect ?? SEND_DEFAULTS.expect);
  const extraHeaders = (o.headers ?? []).map(parseHeader);
  const seed = o.shuffle ? parseIntFlag(o.seed, '--seed', 0, 2 ** 32 - 1, Math.floor(Math.random() * 2 ** 32)) : undefined;
  if (!o.shuffle && o.seed !== undefined) throw new UsageError('--seed goes with --shuffle');

  const factories = fixtures.map((f) => compileFixture(provider, f, overrides, o.event));
  const out = await runDeliveries({
    provider,
    secrets,
    url,
    timing,
    expectation,
    events: {
      make: (seq) => (factories[seq % factories.length] as EventFactory).make(Date.now()),
      label: (seq) => (fixtures[seq % fixtures.length] as Fixture).name,
    },
    count,
    concurrency,
    duplicates,
    extraHeaders,
    ...(ratePerSec !== undefined ? { ratePerSec } : {}),
    ...(seed !== undefined ? { shuffleSeed: seed } : {}),
    ...(o.signal ? { signal: o.signal } : {}),
    ...deliveryHooks(o),
  });

  const { interrupted } = out;
  const summary = summarizeDeliveries(count, out.deliveries, out.elapsedMs);
  return {
    command: 'send',
    ok: summary.failed === 0 && !interrupted,
    provider: provider.name,
    url: displayUrl(url),
    expect: expectation.text,
    timing,
    duplicates,
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
  return heads.size === 1 && only !== undefined && isProviderName(only) ? only : undefined;
}

/** Try every --set on every fixture before anything is sent: a typo fails the run up front. */
function checkOverrides(fixtures: readonly Fixture[], overrides: ReturnType<typeof parseOverride>[]): void {
  if (overrides.length === 0) return;
  for (const f of fixtures) applyOverrides(structuredClone(f.body), overrides, f.path);
}
