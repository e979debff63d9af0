import { createHash } from 'node:crypto';
import { UsageError } from '../util/errors.js';
import { readmePlaceholder } from '../util/secrets.js';
import { displayUrl, parseIntFlag, parseUrl } from '../util/options.js';
import { parseDuration } from '../util/duration.js';
import { stringsOption } from '../util/shapes.js';
import type { Strings } from '../util/shapes.js';
import { checkCredential } from './client.js';
import { appJwt } from './github.js';
import type { GithubApiOptions, GithubHook } from './github.js';
import type { StripeApiOptions } from './stripe.js';
import { REMOTE_DEFAULTS } from './defaults.js';

/** What names a provider's API and the credential for it, as reconcile and pull take them. */
export interface AccessOptions {
  provider?: string;
  /** The environment variable holding the credential (default STRIPE_API_KEY / GITHUB_TOKEN / GITHUB_APP_PRIVATE_KEY). */
  apiKeyEnv?: string;
  apiBase?: string;
  /** Each request to the provider's API, headers and body (default 30 s): '10s', or milliseconds. */
  apiTimeout?: string | number;
  /** Stripe: the Stripe-Version the events are rendered at (default: the account's). */
  apiVersion?: string;
  /** GitHub: whose hook — `owner/name` with hookId, an organization with hookId, or the app's. */
  repo?: string;
  org?: string;
  hookId?: string | number;
  app?: boolean;
  /** GitHub App id: the key variable then holds the app's private key, and a JWT is made from both. */
  appId?: string;
  env?: NodeJS.ProcessEnv;
}

export const ACCESS_DEFAULTS = {
  stripe: { apiBase: 'https://api.stripe.com', apiKeyEnv: 'STRIPE_API_KEY' },
  github: { apiBase: 'https://api.github.com', apiKeyEnv: 'GITHUB_TOKEN' },
} as const;

export type Access =
  | { provider: 'stripe'; api: StripeApiOptions; apiBase: string; label: string }
  | { provider: 'github'; api: GithubApiOptions; apiBase: string; hook: string; label: string };

/**
 * The provider's API and credential from the options, checked before any request: a known
 * provider with an API, the credential's variable set and header-safe, GitHub's hook named once,
 * an app key that can sign. `command` names the command in messages.
 */
export function resolveAccess(o: AccessOptions, command: string): Access {
  const provider = apiProvider(o.provider, command);
  const env = o.env ?? process.env;
  const defaults = ACCESS_DEFAULTS[provider];
  const apiBase = parseUrl(o.apiBase ?? defaults.apiBase, '--api-base');
  const timeoutMs = apiTimeoutMs(o.apiTimeout);
  if (provider === 'stripe') {
    if (o.repo || o.org || o.hookId !== undefined || o.app || o.appId)
      throw new UsageError('--repo, --org, --hook-id, --app and --app-id name a GitHub hook: not for --provider stripe');
    const keyEnv = o.apiKeyEnv ?? defaults.apiKeyEnv;
    const apiKey = secretFrom(env, keyEnv, 'a Stripe API key with read access to events', '');
    return {
      provider: 'stripe',
      api: { apiBase: apiBase.toString(), apiKey, timeoutMs, ...(o.apiVersion ? { apiVersion: o.apiVersion } : {}) },
      apiBase: displayUrl(apiBase),
      // Which account, without the key: its mode and a fingerprint (a restricted key cannot always read the account's id).
      label: `account ${apiKey.includes('_live_') ? 'live' : 'test'} key ${createHash('sha256').update(apiKey).digest('hex').slice(0, 12)}`,
    };
  }
  if (o.apiVersion) throw new UsageError('--api-version is the Stripe-Version of Stripe events: not for --provider github');
  const { hook, label } = githubHook(o);
  const keyEnv = o.apiKeyEnv ?? (o.appId ? 'GITHUB_APP_PRIVATE_KEY' : defaults.apiKeyEnv);
  const credential = secretFrom(
    env,
    keyEnv,
    o.appId
      ? "the GitHub App's private key (PEM)"
      : 'app' in hook
        ? "a JWT of the GitHub App (or give --app-id and the app's private key)"
        : 'a GitHub token that can read the hook (admin:repo_hook or admin:org_hook)',
    // A PEM is many lines: it belongs with --app-id, which makes the JWT from it.
    o.appId ? undefined : 'a private key? give --app-id with it',
  );
  const appId = o.appId;
  const token = appId ? () => appJwt(appId, credential) : credential;
  if (typeof token === 'function') token(); // a key that cannot sign is said now, before any request
  return {
    provider: 'github',
    api: { apiBase: apiBase.toString(), token, hook, timeoutMs },
    apiBase: displayUrl(apiBase),
    hook: label,
    label,
  };
}

/**
 * The event types to ask the API for (`['invoice.paid']`, one type, or none), checked once: Stripe
 * filters by at most 20 (`types[]`), so more is bad input, not a silently truncated query.
 */
/** What an event type can be, here and in pull's state file: one word, no space. */
export const EVENT_TYPE = /^[^\s]+$/;

export function eventTypes(value: Strings | undefined, provider: 'stripe' | 'github'): string[] | undefined {
  const types = stringsOption(value, 'types');
  if (!types?.length) return undefined;
  // An empty --type (a shell variable that was not set) or a spaced one matches no event the API
  // has: asked for, it would pull nothing (or reconcile everything as missing) without a word.
  for (const t of types)
    if (!EVENT_TYPE.test(t))
      throw new UsageError(
        `--type ${JSON.stringify(t)}: not an event type (one word: invoice.paid, invoice.*; GitHub: issues, issues.opened)`,
      );
  if (provider === 'stripe' && types.length > 20)
    throw new UsageError(`--type was given ${types.length} times: Stripe filters by at most 20 (use a wildcard: invoice.*)`);
  return types;
}

/** The provider, if it is one whose API lists what it sent (stripe, github); else one line naming the command. */
export function apiProvider(provider: string | undefined, command: string): 'stripe' | 'github' {
  if (provider === 'stripe' || provider === 'github') return provider;
  throw new UsageError(
    provider === undefined
      ? '--provider is required (stripe or github)'
      : `${command} --provider ${provider}: only stripe and github have an API that lists what they sent`,
  );
}

/** --api-timeout as milliseconds: above 0, the default when absent. */
export function apiTimeoutMs(value: string | number | undefined): number {
  if (value === undefined) return REMOTE_DEFAULTS.timeoutMs;
  const ms = typeof value === 'number' ? value : parseDuration(value, '--api-timeout');
  if (!(ms > 0)) throw new UsageError(`--api-timeout ${value}: a timeout must be above 0`);
  return ms;
}

function githubHook(o: AccessOptions): { hook: GithubHook; label: string } {
  const named = [o.repo && '--repo', o.org && '--org', o.app && '--app'].filter(Boolean);
  if (named.length !== 1)
    throw new UsageError('say whose webhook GitHub delivered for: --repo OWNER/NAME --hook-id N, --org NAME --hook-id N, or --app (one)');
  if (o.appId && !o.app) throw new UsageError('--app-id goes with --app');
  if (o.app) {
    if (o.hookId !== undefined) throw new UsageError('--app reads the GitHub App’s one webhook: no --hook-id');
    return { hook: { app: true }, label: o.appId ? `app ${o.appId}` : 'app' };
  }
  if (o.hookId === undefined) throw new UsageError(`${named[0]} needs --hook-id N (the webhook's id, in its settings URL)`);
  const hookId = parseIntFlag(o.hookId, '--hook-id', 1, Number.MAX_SAFE_INTEGER, 0);
  if (o.repo) {
    if (!/^[\w.-]+\/[\w.-]+$/.test(o.repo)) throw new UsageError(`--repo ${o.repo}: expected OWNER/NAME`);
    return { hook: { repo: o.repo, hookId }, label: `repo ${o.repo} hook ${hookId}` };
  }
  return { hook: { org: o.org as string, hookId }, label: `org ${o.org} hook ${hookId}` };
}

/** The credential from its variable; a token must be one header-safe word (`tokenHint` says what else it may be). */
function secretFrom(env: NodeJS.ProcessEnv, name: string, what: string, tokenHint: string | undefined): string {
  const value = env[name];
  if (!value) throw new UsageError(`${name} is not set: it must hold ${what} (--api-key-env names another variable)`);
  // The README's examples write keys as rk_live_…: copied as they are, no API would take them.
  const placeholder = readmePlaceholder(value);
  if (placeholder) throw new UsageError(`${name}=${placeholder}: that is the README's placeholder; set it to ${what}`);
  if (tokenHint !== undefined) checkCredential(value, name, tokenHint);
  return value;
}
