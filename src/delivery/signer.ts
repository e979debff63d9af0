import { UsageError } from '../util/errors.js';
import { readmePlaceholder } from '../util/secrets.js';
import { getProfile, getProvider } from '../providers/index.js';
import { knownProviderNames } from '../providers/names.js';
import type { Provider } from '../providers/index.js';
import { checkKeyMaterial } from '../providers/key-material.js';
import { parseDuration } from '../util/duration.js';
import { resolveTiming } from './timing.js';
import type { Timing } from './timing.js';
import { parsePositiveNumber, parseUrl } from '../util/options.js';
import { delaysOption, stringOption, stringsOption } from '../util/shapes.js';
import type { Delays, Strings } from '../util/shapes.js';

/**
 * The provider and secrets a command signs with, checked once, the same way everywhere: a known
 * provider, at least one secret (flag, or HOOKDRILL_SECRET via the CLI), several only where the
 * provider signs with several at once (rotation), each of the provider's shape.
 */
export function resolveSigner(o: { provider?: string | undefined; secrets?: Strings | undefined; verifying?: boolean }): {
  provider: Provider;
  secrets: string[];
} {
  const name = stringOption(o.provider, 'provider');
  if (!name) throw new UsageError(`--provider is required (${knownProviderNames().join(', ')})`);
  const provider = getProvider(name);
  const secrets = stringsOption(o.secrets, 'secrets') ?? [];
  // A key-pair provider (Discord) signs with hookdrill's own private key where none is given.
  if (secrets.length === 0 && provider.ownKey) secrets.push(provider.ownKey());
  if (secrets.length === 0) throw new UsageError('a secret is required: --secret S, or HOOKDRILL_SECRET in the environment');
  // A verifier may hold several secrets of any provider (it tries each); a sender signs with several
  // only where the provider itself does (rotation).
  if (secrets.length > 1 && !provider.rotation && !o.verifying) {
    throw new UsageError(`${provider.name} signs with one secret; --secret was given ${secrets.length} times`);
  }
  for (const s of secrets) {
    // The README's examples write secrets as whsec_…: copied as they are, nothing would verify.
    const placeholder = readmePlaceholder(s);
    if (placeholder) throw new UsageError(`--secret ${placeholder}: that is the README's placeholder; give your endpoint's signing secret`);
    // Blank never, for any provider; a verifier of a key-pair provider holds the public key.
    checkKeyMaterial(provider, s, o.verifying ? 'verify' : 'sign');
  }
  return { provider, secrets };
}

/** The timing flags shared by send and replay: --profile, --timeout, --retry-delays, --time-scale, --delay-scale, --no-retry. */
export interface TimingFlags {
  profile?: string | undefined;
  timeout?: string | number | undefined;
  /** `[0, 100, '1s']` (a number is milliseconds) or `'0,100ms,1s'`; `[]` or `'none'`: no retries. */
  retryDelays?: Delays | undefined;
  /** Scales the waits between attempts; the provider's timeout stays its own unless scaleTimeout. */
  timeScale?: string | number | undefined;
  /** The old name of timeScale (from when timeScale scaled the timeout too): the same now. */
  delayScale?: string | number | undefined;
  /** Scale the provider's timeout by timeScale too (never below 1 s): stricter than the provider. */
  scaleTimeout?: boolean | undefined;
  noRetry?: boolean | undefined;
}

/** Slower than this, a schedule of days (Stripe's, WorkOS's) would last years: no test waits that long. */
const MAX_TIME_SCALE = { value: 1000, why: 'the days a provider retries over would take years' };

export function resolveTimingFlags(provider: Provider, o: TimingFlags, defaultScale = 1): Timing {
  const profile = o.profile ? getProfile(o.profile) : provider.profiles[provider.defaultProfile]!;
  const retryDelaysMs = delaysOption(o.retryDelays, 'retryDelays', '--retry-delays');
  const timeoutMs = o.timeout !== undefined ? parseDuration(o.timeout, '--timeout') : undefined;
  if (timeoutMs !== undefined && timeoutMs <= 0) throw new UsageError(`--timeout ${o.timeout}: a timeout must be above 0`);
  if (o.timeScale !== undefined && o.delayScale !== undefined)
    throw new UsageError('--delay-scale is the old name of --time-scale (both scale the waits only): give one');
  const timeScale =
    o.delayScale !== undefined
      ? parsePositiveNumber(o.delayScale, '--delay-scale', 1, MAX_TIME_SCALE)
      : parsePositiveNumber(o.timeScale, '--time-scale', defaultScale, MAX_TIME_SCALE);
  if (o.scaleTimeout && timeoutMs !== undefined)
    throw new UsageError("--scale-timeout scales the provider's timeout; --timeout gives one that is never scaled: choose one");
  const timing = resolveTiming(profile, {
    timeScale,
    ...(o.scaleTimeout ? { scaleTimeout: true } : {}),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
    ...(retryDelaysMs ? { retryDelaysMs } : {}),
    noRetry: o.noRetry === true,
  });
  if (timing.timeoutMs < 1) {
    // Only a --timeout the user gave can get here: a scaled one has a floor.
    throw new UsageError(`--timeout ${o.timeout}: no receiver can answer in under 1 ms`);
  }
  return timing;
}

/**
 * A stored delivery's headers signed anew, now: a fresh timestamp and signature over the same
 * bytes, the same delivery id, every other header as the sender sent it — what a real retry
 * looks like. A forward or requeue long after receipt would otherwise carry a signature older
 * than every verifier's tolerance (5 minutes), and an app that verifies would refuse it.
 * `meta.url` is where it is posted now, which a URL-bound scheme signs.
 */
export function resignStored(
  provider: Provider,
  stored: Record<string, string>,
  body: Buffer,
  secrets: readonly string[],
  meta: { deliveryId: string; eventType: string | undefined; url?: string | undefined },
  nowMs = Date.now(),
): Record<string, string> {
  // A signature written into the body (Mailgun's, SNS's) is the delivery's, kept on every retry as
  // the provider keeps it: the stored body still carries it, and no header holds one to renew.
  if (provider.bodySignature || provider.placeSignature) return { ...stored };
  const replaced = new Set(provider.signedHeaders.map((h) => h.toLowerCase()));
  // What the signing adds to the URL (Twilio's bodySHA256 for a JSON body) is carried out as a
  // header, for the caller to place in the URL it posts to (placeQuery): the target verifies it.
  if (provider.queryPlaced) replaced.add(provider.queryPlaced.carrier.toLowerCase());
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(stored)) if (!replaced.has(name.toLowerCase())) out[name] = value;
  // A URL-bound scheme (Twilio, Square, HubSpot, Pub/Sub's aud) signs where the request goes now:
  // the app behind listen verifies against its own URL, not the one the provider posted to.
  const fresh = provider.sign(body, secrets, { nowMs, deliveryId: meta.deliveryId, eventType: meta.eventType ?? '', url: meta.url });
  for (const [name, value] of Object.entries(fresh)) if (replaced.has(name.toLowerCase())) out[name.toLowerCase()] = value;
  return out;
}

/**
 * --public-url for a provider: parsed, and refused for one that signs no URL — given there, it
 * would be a setting that silently does nothing.
 */
export function resolvePublicUrl(provider: Provider, value: unknown): URL | undefined {
  if (value === undefined) return undefined;
  const url = parseUrl(stringOption(value, 'publicUrl'), '--public-url');
  if (!provider.urlBound) throw new UsageError(`--public-url: ${provider.name} signs no URL; leave it out`);
  return url;
}
