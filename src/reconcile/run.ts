import { STORED_BODY_MAX_BYTES } from '../inbox/types.js';
import { UsageError } from '../util/errors.js';
import { stringsOption } from '../util/shapes.js';
import type { Strings } from '../util/shapes.js';
import { runDeliveries } from '../delivery/run.js';
import { summarizeDeliveries } from '../delivery/summary.js';
import type { SendSummary } from '../delivery/summary.js';
import { parseExpectation } from '../delivery/expect.js';
import { openInbox, resolveTarget } from '../inbox/open.js';
import { displayUrl, parseIntFlag, parseUrl } from '../util/options.js';
import { ApiInterrupted } from '../remote/client.js';
import { GITHUB_RETENTION_SECONDS, githubRecord } from '../remote/github.js';
import { STRIPE_RETENTION_SECONDS, stripeRecord } from '../remote/stripe.js';
import type { FetchedEvent, SenderRecord, SentEvent } from '../remote/types.js';
import { parseTime } from '../inbox/selector.js';
import { resolveSigner, resolveTimingFlags } from '../delivery/signer.js';
import { runIdsCommand } from '../harness/store-probe.js';
import { ACCESS_DEFAULTS, apiProvider, eventTypes, resolveAccess } from '../remote/access.js';
import type { AccessOptions } from '../remote/access.js';

export type { SentEvent } from '../remote/types.js';

export interface ReconcileOptions extends AccessOptions {
  since?: string;
  until?: string;
  inbox?: string;
  stored?: string;
  /** Only what the sender itself saw fail to deliver. */
  onlyFailed?: boolean;
  /** Only these event types (Stripe: `invoice.*` allowed, at most 20; GitHub: `issues` or `issues.opened`). */
  types?: Strings;
  /** Put the missing events into the inbox as pending, for its worker to process. */
  fix?: boolean;
  /** Sign the missing events with `secrets` and deliver them here, once each. */
  redeliverTo?: string;
  secrets?: Strings;
  /** With fix or redeliverTo: say what would happen, change nothing. */
  dryRun?: boolean;
  /** Fetch each missing event's payload and headers into the result. */
  withPayloads?: boolean;
  concurrency?: string | number;
  now?: number;
  /** What it is doing, for a progress line at a terminal. */
  onProgress?: (p: ReconcileProgress) => void;
  signal?: AbortSignal;
}

export interface ReconcileProgress {
  phase: 'listing' | 'comparing' | 'fetching' | 'redelivering';
  done: number;
  /** Unknown while listing: the sender's API does not say how many there are. */
  total?: number;
}

export interface MissingEvent extends SentEvent {
  /** With --with-payloads: the event's body (parsed) and headers, as the sender's API gave them. */
  payload?: unknown;
  headers?: Record<string, string>;
}

export interface ReconcileResult {
  command: 'reconcile';
  ok: boolean;
  provider: string;
  apiBase: string;
  /** GitHub: whose hook was read. */
  hook?: string;
  since: number;
  until: number;
  store: 'inbox' | 'command';
  /** Events the sender lists in the range. */
  sent: number;
  held: number;
  /** Sent, and not held by the receiver: to fetch, redeliver or import. */
  missing: MissingEvent[];
  /** Held, but dead in the inbox (processing gave up). */
  dead: SentEvent[];
  /** With --fix: missing events now in the inbox as pending (0 with --dry-run). */
  fixed?: number;
  /** With --redeliver-to: where, and how each went (interrupted: the rest were never sent). */
  redelivered?: { url: string; summary: SendSummary; failed: { id: string; status: string }[]; interrupted: boolean };
  /** Missing events whose payload the sender's API would not give (past its retention, an error): not fixed or redelivered. */
  unfetched?: { id: string; error: string }[];
  dryRun?: boolean;
  /** What the user should know about the comparison (a range the sender no longer keeps). */
  notes: string[];
  elapsedMs: number;
}

export const RECONCILE_DEFAULTS = {
  ...ACCESS_DEFAULTS,
  concurrency: 8,
} as const;

/**
 * Compare what the sender says it sent with what the receiver holds: each event is held, missing,
 * or (with an inbox) held but dead. Then, when asked, bring the missing ones in: into the inbox
 * (--fix) or signed to a receiver (--redeliver-to).
 */
export async function run(o: ReconcileOptions): Promise<ReconcileResult> {
  const started = performance.now();
  const plan = validate(o);
  const progress = o.onProgress ?? (() => {});
  const notes: string[] = [];
  const kept = plan.record.provider === 'github' ? GITHUB_RETENTION_SECONDS : STRIPE_RETENTION_SECONDS;
  if ((o.now ?? Date.now()) / 1000 - plan.since / 1000 > kept)
    notes.push(
      plan.record.provider === 'github'
        ? 'GitHub keeps deliveries for 3 days: what it sent before that is not in its record, and not compared'
        : 'Stripe lists events of the last 30 days only: what it sent before that is not in its record, and not compared',
    );

  const sentEvents: SentEvent[] = [];
  for await (const e of plan.record.list((read) => progress({ phase: 'listing', done: read }))) sentEvents.push(e);
  progress({ phase: 'comparing', done: 0, total: sentEvents.length });
  const { missing, dead } = await compare(o, plan.record.provider, sentEvents, (done) =>
    progress({ phase: 'comparing', done, total: sentEvents.length }),
  );

  // Payloads are fetched once, for whatever needs them (GitHub: a request per event).
  const wantPayloads = o.withPayloads || ((o.fix || o.redeliverTo) && !o.dryRun);
  const fetched = new Map<string, FetchedEvent>();
  const unfetched: { id: string; error: string }[] = [];
  if (wantPayloads) {
    for (const [i, e] of missing.entries()) {
      try {
        const f = await plan.record.fetch(e);
        // The limit listen holds every delivery to: a body it would refuse is not stored or sent by another door.
        if (f.body.length > STORED_BODY_MAX_BYTES)
          throw new UsageError(
            `its payload is ${f.body.length.toLocaleString('en-US')} bytes, over the ${STORED_BODY_MAX_BYTES / 1024 / 1024} MiB listen stores`,
          );
        fetched.set(e.id, f);
      } catch (err) {
        // One event the API will not give (gone past its retention since it was listed) does not
        // stop the others; an interruption does.
        if (err instanceof ApiInterrupted || !(err instanceof UsageError)) throw err;
        unfetched.push({ id: e.id, error: err.message });
      }
      progress({ phase: 'fetching', done: i + 1, total: missing.length });
    }
  }
  const result: ReconcileResult = {
    command: 'reconcile',
    ok: missing.length === 0,
    provider: plan.record.provider,
    apiBase: plan.apiBase,
    ...(plan.hook ? { hook: plan.hook } : {}),
    since: plan.since,
    until: plan.until,
    store: o.inbox ? 'inbox' : 'command',
    sent: sentEvents.length,
    held: sentEvents.length - missing.length,
    missing: missing.map((e) => {
      const f = o.withPayloads ? fetched.get(e.id) : undefined;
      return f ? { ...e, payload: JSON.parse(f.body.toString('utf8')), headers: f.headers } : e;
    }),
    dead,
    ...(unfetched.length ? { unfetched } : {}),
    notes,
    elapsedMs: 0,
  };
  if (o.dryRun) result.dryRun = true;
  if (o.fix) result.fixed = o.dryRun ? 0 : await fix(resolveTarget(o.inbox as string), plan.record.provider, missing, fetched);
  if (plan.redeliver && !o.dryRun) {
    result.redelivered = await redeliver(plan.redeliver, plan.record.provider, missing, fetched, o, (p) =>
      progress({ phase: 'redelivering', ...p }),
    );
    if (result.redelivered.failed.length > 0 || result.redelivered.interrupted) result.ok = false;
  }
  result.elapsedMs = Math.round(performance.now() - started);
  return result;
}

interface Plan {
  record: SenderRecord;
  apiBase: string;
  hook?: string;
  since: number;
  until: number;
  redeliver?: { url: URL; secrets: string[] };
}

function validate(o: ReconcileOptions): Plan {
  const provider = apiProvider(o.provider, 'reconcile');
  if (!o.since) throw new UsageError('--since is required (3d, or an ISO time): how far back to compare');
  if (!!o.inbox === !!o.stored)
    throw new UsageError('say where the receiver keeps deliveries: --inbox FILE|URL or --stored "<command>" (one)');
  if (o.fix && !o.inbox) throw new UsageError('--fix puts the missing events into a hookdrill inbox: give --inbox');
  if (o.fix && o.redeliverTo) throw new UsageError('--fix and --redeliver-to both bring the missing events in: choose one');
  if (o.dryRun && !o.fix && !o.redeliverTo) throw new UsageError('--dry-run goes with --fix or --redeliver-to');
  let redeliver: Plan['redeliver'];
  const secretsGiven = stringsOption(o.secrets, 'secrets') ?? [];
  if (o.redeliverTo) {
    const url = parseUrl(o.redeliverTo, '--redeliver-to');
    const secrets = resolveSigner({ provider, secrets: secretsGiven }).secrets;
    redeliver = { url, secrets };
  } else if (secretsGiven.length) throw new UsageError('--secret signs what --redeliver-to delivers: give --redeliver-to');
  const now = o.now ?? Date.now();
  const since = parseTime(o.since, '--since', now);
  const until = o.until !== undefined ? parseTime(o.until, '--until', now) : now;
  if (until <= since) throw new UsageError(`--until is not after --since: nothing to compare`);
  const types = eventTypes(o.types, provider);
  const range = {
    since: Math.floor(since / 1000),
    until: Math.floor(until / 1000),
    ...(o.onlyFailed ? { onlyFailed: true } : {}),
    ...(types ? { types } : {}),
  };
  const access = resolveAccess(o, 'reconcile');
  const signal = o.signal ? { signal: o.signal } : {};
  const common = { apiBase: access.apiBase, since, until, ...(redeliver ? { redeliver } : {}) };
  if (access.provider === 'stripe') return { record: stripeRecord({ ...access.api, ...range, ...signal }), ...common };
  return { record: githubRecord({ ...access.api, ...range, ...signal }), hook: access.hook, ...common };
}

async function compare(
  o: ReconcileOptions,
  source: string,
  sentEvents: readonly SentEvent[],
  onDone: (done: number) => void,
): Promise<{ missing: SentEvent[]; dead: SentEvent[] }> {
  const missing: SentEvent[] = [];
  const dead: SentEvent[] = [];
  if (!o.inbox) {
    const held = new Set(await runIdsCommand(o.stored as string, '--stored', {}));
    for (const e of sentEvents) if (!held.has(e.id)) missing.push(e);
    return { missing, dead };
  }
  const inbox = await openInbox(resolveTarget(o.inbox), { readonly: true, create: false });
  try {
    for (let i = 0; i < sentEvents.length; i += 500) {
      const slice = sentEvents.slice(i, i + 500);
      const rows = await inbox.select({ source, ids: slice.map((e) => e.id) }, { limit: 500 });
      const status = new Map(rows.map((r) => [r.deliveryId, r.status]));
      for (const e of slice) {
        const s = status.get(e.id);
        if (s === undefined) missing.push(e);
        else if (s === 'dead') dead.push(e);
      }
      onDone(i + slice.length);
    }
  } finally {
    await inbox.close();
  }
  return { missing, dead };
}

/**
 * The missing events into the inbox as pending, due now, keyed by their own ids — so a late real
 * delivery of one is a duplicate — with their origin in the headers kept (x-hookdrill-origin).
 */
async function fix(target: string, source: string, missing: readonly SentEvent[], fetched: Map<string, FetchedEvent>): Promise<number> {
  const inbox = await openInbox(target, { create: false });
  try {
    let put = 0;
    const receivedAt = Date.now();
    for (const e of missing) {
      const f = fetched.get(e.id);
      if (!f) continue;
      const r = await inbox.put({
        source,
        deliveryId: e.id,
        eventType: e.type,
        body: f.body,
        headers: { ...f.headers, 'x-hookdrill-origin': 'reconcile' },
        receivedAt,
      });
      if (r.inserted) put++;
    }
    return put;
  } finally {
    await inbox.close();
  }
}

/**
 * The missing events signed as the provider signs (a fresh timestamp, the original id, so the
 * receiver sees a redelivery) and delivered once each — no retry schedule: what fails is listed,
 * and a second reconcile finds it still missing.
 */
async function redeliver(
  to: { url: URL; secrets: string[] },
  providerName: string,
  missing: readonly SentEvent[],
  fetched: Map<string, FetchedEvent>,
  o: ReconcileOptions,
  onProgress: (p: { done: number; total: number }) => void,
): Promise<NonNullable<ReconcileResult['redelivered']>> {
  const { provider, secrets } = resolveSigner({ provider: providerName, secrets: to.secrets });
  const sendable = missing.filter((e) => fetched.has(e.id));
  const out = await runDeliveries({
    provider,
    secrets,
    url: to.url,
    timing: resolveTimingFlags(provider, { noRetry: true }),
    expectation: parseExpectation('2xx'),
    events: {
      make: (seq) => {
        const e = sendable[seq] as SentEvent;
        return { rawBody: (fetched.get(e.id) as FetchedEvent).body, deliveryId: e.id, eventType: e.type };
      },
      label: () => providerName,
    },
    count: sendable.length,
    concurrency: parseIntFlag(o.concurrency, '--concurrency', 1, 1_000, RECONCILE_DEFAULTS.concurrency),
    duplicates: 1,
    extraHeaders: [],
    onProgress: (p) => onProgress({ done: p.done, total: p.total }),
    ...(o.signal ? { signal: o.signal } : {}),
  });
  const summary = summarizeDeliveries(sendable.length, out.deliveries, out.elapsedMs);
  const started = new Set(out.deliveries.map((d) => d.deliveryId));
  return {
    url: displayUrl(to.url),
    summary,
    failed: [
      ...out.deliveries
        .filter((d) => !d.met)
        .map((d) => ({ id: d.deliveryId, status: String(d.finalStatus ?? d.attempts.at(-1)?.error ?? 'nothing') })),
      // Interrupted: what was never started is not redelivered either.
      ...sendable.filter((e) => !started.has(e.id)).map((e) => ({ id: e.id, status: 'not sent (interrupted)' })),
    ],
    interrupted: out.interrupted,
  };
}
