import { UsageError } from '../../errors.js';
import { openInbox, resolveTarget } from '../../inbox/open.js';
import { displayUrl, parseUrl } from '../../options.js';
import { listStripeEvents } from '../../reconcile/stripe.js';
import type { SentEvent } from '../../reconcile/stripe.js';
import { parseTime } from '../../selector.js';
import { runIdsCommand } from '../../store-probe.js';

export interface ReconcileOptions {
  provider?: string;
  since?: string;
  until?: string;
  /** The environment variable holding the provider's API key (default STRIPE_API_KEY). */
  apiKeyEnv?: string;
  apiBase?: string;
  inbox?: string;
  stored?: string;
  /** Only what the sender itself saw fail to deliver. */
  onlyFailed?: boolean;
  /** Put the missing events into the inbox as pending, for its worker to process. */
  fix?: boolean;
  /** With fix: say what would be put, put nothing. */
  dryRun?: boolean;
  env?: NodeJS.ProcessEnv;
  now?: number;
}

export interface ReconcileResult {
  command: 'reconcile';
  ok: boolean;
  provider: string;
  apiBase: string;
  since: number;
  until: number;
  store: 'inbox' | 'command';
  /** Events the sender lists in the range. */
  sent: number;
  held: number;
  /** Sent, and not held by the receiver: to fetch, redeliver or import. */
  missing: SentEvent[];
  /** Held, but dead in the inbox (processing gave up). */
  dead: SentEvent[];
  /** With --fix: missing events now in the inbox as pending (0 with --dry-run). */
  fixed?: number;
  dryRun?: boolean;
  elapsedMs: number;
}

export const RECONCILE_DEFAULTS = { apiBase: 'https://api.stripe.com', apiKeyEnv: 'STRIPE_API_KEY' } as const;

/**
 * Compare what the sender says it sent with what the receiver holds: each event is held, missing,
 * or (with an inbox) held but dead. Stripe today; GitHub's deliveries API is not built yet.
 */
export async function run(o: ReconcileOptions): Promise<ReconcileResult> {
  const started = performance.now();
  if (o.provider !== 'stripe') {
    throw new UsageError(
      o.provider === undefined ? '--provider is required (stripe)' : `reconcile --provider ${o.provider}: only stripe is built so far`,
    );
  }
  if (!o.since) throw new UsageError('--since is required (3d, or an ISO time): how far back to compare');
  if (!!o.inbox === !!o.stored)
    throw new UsageError('say where the receiver keeps deliveries: --inbox FILE|URL or --stored "<command>" (one)');
  if (o.fix && !o.inbox) throw new UsageError('--fix puts the missing events into a hookdrill inbox: give --inbox');
  if (o.dryRun && !o.fix) throw new UsageError('--dry-run goes with --fix');
  const now = o.now ?? Date.now();
  const since = parseTime(o.since, '--since', now);
  const until = o.until !== undefined ? parseTime(o.until, '--until', now) : now;
  if (until <= since) throw new UsageError(`--until is not after --since: nothing to compare`);
  const env = o.env ?? process.env;
  const keyEnv = o.apiKeyEnv ?? RECONCILE_DEFAULTS.apiKeyEnv;
  const apiKey = env[keyEnv];
  if (!apiKey)
    throw new UsageError(
      `${keyEnv} is not set: it must hold a Stripe API key with read access to events (--api-key-env names another variable)`,
    );
  const apiBase = parseUrl(o.apiBase ?? RECONCILE_DEFAULTS.apiBase, '--api-base');

  const sentEvents: SentEvent[] = [];
  for await (const e of listStripeEvents({
    apiBase: apiBase.toString(),
    apiKey,
    since: Math.floor(since / 1000),
    until: Math.floor(until / 1000),
    ...(o.onlyFailed ? { onlyFailed: true } : {}),
  }))
    sentEvents.push(e);

  const missing: SentEvent[] = [];
  const dead: SentEvent[] = [];
  if (o.inbox) {
    const inbox = await openInbox(resolveTarget(o.inbox), { readonly: true, create: false });
    try {
      for (let i = 0; i < sentEvents.length; i += 500) {
        const slice = sentEvents.slice(i, i + 500);
        const rows = await inbox.select({ source: 'stripe', ids: slice.map((e) => e.id) }, { limit: 500 });
        const status = new Map(rows.map((r) => [r.deliveryId, r.status]));
        for (const e of slice) {
          const s = status.get(e.id);
          if (s === undefined) missing.push(e);
          else if (s === 'dead') dead.push(e);
        }
      }
    } finally {
      await inbox.close();
    }
  } else {
    const held = new Set(await runIdsCommand(o.stored as string, '--stored', {}));
    for (const e of sentEvents) if (!held.has(e.id)) missing.push(e);
  }
  return {
    command: 'reconcile',
    ok: missing.length === 0,
    provider: 'stripe',
    apiBase: displayUrl(apiBase),
    since,
    until,
    store: o.inbox ? 'inbox' : 'command',
    sent: sentEvents.length,
    held: sentEvents.length - missing.length,
    missing: missing.map(({ raw: _, ...e }) => e),
    dead: dead.map(({ raw: _, ...e }) => e),
    ...(o.fix ? { fixed: o.dryRun ? 0 : await fix(resolveTarget(o.inbox as string), missing), ...(o.dryRun ? { dryRun: true } : {}) } : {}),
    elapsedMs: Math.round(performance.now() - started),
  };
}

/**
 * The missing events into the inbox as pending, due now, keyed by their own ids — so a late real
 * delivery of one is a duplicate — with their origin in the headers kept (x-hookdrill-origin).
 */
async function fix(target: string, missing: readonly SentEvent[]): Promise<number> {
  const inbox = await openInbox(target, { create: false });
  try {
    let put = 0;
    const receivedAt = Date.now();
    for (const e of missing) {
      if (e.raw === undefined) continue;
      const r = await inbox.put({
        source: 'stripe',
        deliveryId: e.id,
        eventType: e.type,
        body: Buffer.from(JSON.stringify(e.raw)),
        headers: { 'content-type': 'application/json', 'x-hookdrill-origin': 'reconcile' },
        receivedAt,
      });
      if (r.inserted) put++;
    }
    return put;
  } finally {
    await inbox.close();
  }
}
