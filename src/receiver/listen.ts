import { windowSec } from '../providers/util.js';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UsageError } from '../util/errors.js';
import { formatDuration, parseDuration } from '../util/duration.js';
import { displayTarget, openInbox, resolveTarget } from '../inbox/open.js';
import { createListenMetrics } from './metrics.js';
import type { ListenMetrics } from './metrics.js';
import type { Claimed, Inbox, InboxStats } from '../inbox/index.js';
import { serveKeys } from '../delivery/key-server.js';
import { resolveSigner } from '../delivery/signer.js';
import { checkKeyMaterial } from '../providers/key-material.js';
import type { Provider } from '../providers/index.js';
import { createMountedServer, createReceiverServer, listen } from './server.js';
import type { ReceiverEvent, ReceiverOptions, RefusedCapture } from './index.js';
import type { Route, RouteTarget } from '../routes/types.js';
import { checkUniqueNames, describeTarget, parseEventsFlag } from '../routes/parse.js';
import { passesFilter } from '../routes/match.js';
import { resolveRoute, routingHandler } from '../worker/route.js';
import { RECEIVER_DEFAULTS } from './defaults.js';
import { DEFAULT_BACKOFF, PermanentError, Worker, deadAfter } from '../worker/index.js';
import { WORKER_DEFAULTS } from '../worker/defaults.js';
import { LISTEN_DEFAULTS } from './listen-defaults.js';
import type { RouteChange, WorkOutcome } from '../worker/index.js';
import { forwardHandler } from '../worker/forward.js';
import { displayUrl, parseBytesFlag, parseIntFlag, parseUrl } from '../util/options.js';
import { stringOption } from '../util/shapes.js';

export interface ListenOptions {
  port?: string | number;
  host?: string;
  provider?: string;
  secrets?: string[];
  inbox?: string;
  forwardTo?: string;
  forwardTimeout?: string | number;
  /** Deliveries committed in one transaction at most (group commit); 1 commits each alone. */
  commitBatch?: string | number;
  /** How long a batch waits for more deliveries before it commits. */
  commitWait?: string;
  /** A delivery not committed within this is answered 503. */
  storeDeadline?: string | number;
  /** Sign forwards with this secret instead of the one deliveries are verified with. */
  forwardSecret?: string;
  /** Forward the headers as received (the original signature, which goes stale after 5 minutes). */
  forwardOriginalHeaders?: boolean;
  maxBytes?: string | number;
  /** Body bytes held across all requests at once; past it, 503 with Retry-After. */
  maxBytesInFlight?: string | number;
  tolerance?: string;
  /** The URL the provider posts to (URL-bound schemes sign it): each request is verified over it. A URL-bound provider needs it, or trustProxy. */
  publicUrl?: string;
  /** Without publicUrl, rebuild each request's URL from the X-Forwarded-* values the proxy in front added. */
  trustProxy?: boolean;
  concurrency?: string | number;
  maxAttempts?: string | number;
  lease?: string | number;
  backoffBase?: string | number;
  backoffMax?: string | number;
  /** Store only; leave rows pending for another worker (or for inspection). */
  noWorker?: boolean;
  /**
   * Where each event type goes, in order, the first match winning; what none takes goes to
   * forwardTo (or nowhere: marked done). From `--route` or the project file's `routes`.
   */
  routes?: readonly Route[];
  /** Keep only these event types (`--events`, as the Stripe CLI's): others are answered 200 and not stored. */
  events?: readonly string[];
  /**
   * Several providers on one port, each on a path of its own with its own secret(s), into one
   * inbox (the project file's `receive`). Instead of provider, secrets and publicUrl.
   */
  receive?: readonly ReceiveMount[];
  onRequest?: (e: ReceiverEvent, refused?: () => RefusedCapture) => void;
  onOutcome?: (o: WorkOutcome) => void;
  /** With routes: a route whose target failed is paused, and resumed once it answers again. */
  onRoute?: (change: RouteChange) => void;
  onError?: (err: unknown) => void;
  /** What the store found that a person must know now, though deliveries are still stored (Redis lost the queue's data). */
  onWarning?: (text: string) => void;
}

/** One provider of a listen that receives several. */
export interface ReceiveMount {
  provider: string;
  /** Its path on listen's port (default `/<provider>`). */
  path?: string;
  secrets: readonly string[];
  publicUrl?: string;
}

export interface Ready {
  event: 'ready';
  url: string;
  inbox: string;
  /** The provider, or with several, their names joined by commas. */
  provider: string;
  /** With several providers: where each posts. */
  providers?: { provider: string; path: string; url: string }[];
  /** With routes: each, in order, and where it sends its rows (the default last). */
  routes?: { name: string; provider: string; events: readonly string[]; to: string }[];
  forwardTo: string | null;
  worker: boolean;
  /** With a worker: its retry budget, and how long a row that keeps failing takes to be dead. */
  retries?: { maxAttempts: number; baseMs: number; maxMs: number; deadAfterMs: { minMs: number; maxMs: number } };
  pid: number;
  /** What the store says may not survive a crash (Redis without AOF): one line each, at start. */
  warnings: string[];
}

export interface ListenSummary {
  command: 'listen';
  requests: number;
  stored: number;
  duplicates: number;
  rejected: number;
  processed: { done: number; retried: number; dead: number };
  inbox: InboxStats;
}

/** What listen has done so far: the live status line reads these. */
export interface ListenCounts {
  requests: number;
  stored: number;
  duplicates: number;
  rejected: number;
  /** Answered 503: the inbox could not commit (in time). */
  failed: number;
  /** Verified and left out by --events: answered 200, not stored. */
  filtered?: number;
  done: number;
  retried: number;
  dead: number;
}

export interface Listening {
  ready: Ready;
  /** A snapshot of the counts so far. */
  counts(): ListenCounts;
  /** Stop accepting, let the worker finish the rows in hand, close the inbox. */
  stop(): Promise<ListenSummary>;
}

/** Run the receiver (and, unless told not to, the worker) until stop() is called. */
export async function start(o: ListenOptions): Promise<Listening> {
  const port = parseIntFlag(o.port, '--port', 0, 65_535, LISTEN_DEFAULTS.port);
  // Judged before the inbox is opened: a bad URL must not leave a file or a schema behind.
  const mounts = mountsOf(o, port);
  const multi = o.receive !== undefined;
  const host = o.host ?? LISTEN_DEFAULTS.host;
  // '' binds every interface and shows as http://:PORT: never what was meant.
  if (host.trim() === '')
    throw new UsageError('--host is empty: give an address (0.0.0.0 for every interface, 127.0.0.1 for this machine)');
  const forwardTo = o.forwardTo ? parseUrl(o.forwardTo, '--forward-to') : undefined;
  const routes = o.routes ?? [];
  checkRoutes(routes, mounts);
  const filter = o.events !== undefined ? parseEventsFlag(o.events) : undefined;
  // Anything sent anywhere: the forward's timeout and lease matter, and forwards run a few at a time.
  const forwards = forwardTo !== undefined || routes.some((r) => r.target.kind === 'url');
  const fallback: RouteTarget = forwardTo ? { kind: 'url', url: forwardTo } : { kind: 'drop' };
  const duration = (text: string | number | undefined, flag: string, fallback: number) =>
    text !== undefined ? parseDuration(text, flag) : fallback;
  // A duration with a floor and a ceiling, each with its reason: 0 parses as a duration, and would
  // make every forward fail (--forward-timeout), rows claimed again at once (--lease) or a failing
  // row retried in a tight loop (--backoff-base).
  const bounded = (
    text: string | number | undefined,
    flag: string,
    fallback: number,
    min: { ms: number; why: string },
    max: { ms: number; why: string },
  ) => {
    const ms = duration(text, flag, fallback);
    if (text === undefined) return ms;
    if (ms < min.ms) throw new UsageError(`${flag} ${text}: at least ${formatDuration(min.ms)} (${min.why})`);
    if (ms > max.ms) throw new UsageError(`${flag} ${text}: at most ${formatDuration(max.ms)} (${max.why})`);
    return ms;
  };
  // 1s: below it, an app's ordinary slow moment (a GC pause, a cold TLS handshake, a lock) counts
  // as a failure, and the delivery is sent again while the first forward may still be completing.
  const forwardTimeoutMs = bounded(
    o.forwardTimeout,
    '--forward-timeout',
    LISTEN_DEFAULTS.forwardTimeoutMs,
    { ms: 1_000, why: 'shorter, an app having a slow moment fails every forward and is sent each one again' },
    { ms: 3_600_000, why: 'an app that has not answered in an hour has hung; each such forward holds a worker slot' },
  );
  const maxBytes = parseBytesFlag(o.maxBytes, '--max-bytes', 1, 1024 ** 3, RECEIVER_DEFAULTS.maxBytes);
  const maxInFlightBytes = parseBytesFlag(
    o.maxBytesInFlight,
    '--max-bytes-in-flight',
    1,
    64 * 1024 ** 3,
    Math.max(RECEIVER_DEFAULTS.maxInFlightBytes, maxBytes),
  );
  if (maxInFlightBytes < maxBytes)
    throw new UsageError(
      `--max-bytes-in-flight ${maxInFlightBytes} is below --max-bytes ${maxBytes}: a delivery of the largest size allowed would never fit`,
    );
  // The provider's own window unless told otherwise (Paddle's SDK: 5 s; most: 5 minutes).
  const toleranceOf = (provider: Provider) => {
    const sec = Math.round(duration(o.tolerance, '--tolerance', windowSec(provider) * 1000) / 1000);
    if (sec < 1) throw new UsageError(`--tolerance ${o.tolerance}: at least 1s (0 would refuse every signed timestamp)`);
    return sec;
  };
  for (const m of mounts) toleranceOf(m.provider);
  // Forwards run a few at a time (the app's capacity); with nowhere to forward, marking rows done
  // costs nothing, and claiming many at once saves a commit per row.
  const concurrency = parseIntFlag(
    o.concurrency,
    '--concurrency',
    1,
    1_000,
    forwards ? WORKER_DEFAULTS.concurrency : LISTEN_DEFAULTS.markDoneConcurrency,
  );
  const maxAttempts = parseIntFlag(o.maxAttempts, '--max-attempts', 1, 1_000, WORKER_DEFAULTS.maxAttempts);
  // 100ms: a claim must outlive the commit that claims the row and the one that settles it; shorter,
  // rows in hand are claimed again by the next poll and processed twice. Lease and backoff are also
  // capped at what is still a setting rather than a typo (1000d), well inside a JavaScript timer.
  const leaseMs = bounded(
    o.lease,
    '--lease',
    WORKER_DEFAULTS.leaseMs,
    { ms: 100, why: 'shorter, a row still being worked on is claimed again and processed twice' },
    { ms: 86_400_000, why: "a crashed worker's rows would wait that long before anyone retries them" },
  );
  const backoff = {
    // 10ms: a failing row waits at least this between attempts; 0 spends --max-attempts in a tight loop.
    baseMs: bounded(
      o.backoffBase,
      '--backoff-base',
      DEFAULT_BACKOFF.baseMs,
      { ms: 10, why: 'shorter, a failing row uses up its attempts at once, with no time for the app to recover' },
      { ms: 86_400_000, why: 'the first retry would come more than a day after the failure' },
    ),
    maxMs: bounded(
      o.backoffMax,
      '--backoff-max',
      DEFAULT_BACKOFF.maxMs,
      { ms: 10, why: 'the longest wait between attempts; it cannot be below --backoff-base' },
      { ms: 30 * 86_400_000, why: 'a row would wait more than a month between attempts' },
    ),
  };
  if (backoff.maxMs < backoff.baseMs) {
    throw new UsageError(
      `--backoff-max (${formatDuration(backoff.maxMs)}) is below --backoff-base (${formatDuration(backoff.baseMs)}): the longest delay cannot be shorter than the first`,
    );
  }
  if (forwards && leaseMs <= forwardTimeoutMs) {
    // A forward still running when its lease runs out would be claimed and sent again.
    throw new UsageError(
      `--lease (${formatDuration(leaseMs)}) must be longer than --forward-timeout (${formatDuration(forwardTimeoutMs)})`,
    );
  }
  if (multi && o.forwardSecret !== undefined)
    throw new UsageError(
      "--forward-secret signs one provider's forwards; with several providers each one's forwards are signed with its own secret: leave it out",
    );
  for (const { provider, secrets } of mounts) {
    if (o.forwardSecret !== undefined) checkKeyMaterial(provider, o.forwardSecret, 'sign');
    if (o.forwardOriginalHeaders && provider.contract.batching.events === 'list')
      // Each event of a batch is a row of its own, its body the event alone: no received signature covers it.
      throw new UsageError(
        `--forward-original-headers: ${provider.title} puts several events in one body and listen stores each on its own, so no received signature covers a row: leave it out (forwards are signed anew)`,
      );
    if (o.forwardOriginalHeaders && o.forwardSecret !== undefined)
      throw new UsageError('--forward-secret signs forwards anew; --forward-original-headers keeps the received signature: give one');
    if (forwards && !o.forwardOriginalHeaders && o.forwardSecret === undefined && secrets.length > 1 && !provider.rotation) {
      // Several secrets (a rotation) of a provider that signs with one: which one the app holds
      // is not ours to guess, and a wrong guess makes every forward fail.
      throw new UsageError(
        multi
          ? `${provider.name} signs with one secret and its secretEnv names ${secrets.length}: keep the one its services verify with`
          : `${provider.name} signs with one secret and --secret was given ${secrets.length} times: say which forwards are signed with (--forward-secret)`,
      );
    }
  }
  const signerOf = (m: Mount) =>
    o.forwardOriginalHeaders ? undefined : { provider: m.provider, secrets: o.forwardSecret !== undefined ? [o.forwardSecret] : m.secrets };
  // A row of a provider this listen does not receive (imported into its inbox) is forwarded as the
  // one provider of a single-provider listen signs it, as before routes; with several, it is refused.
  const mountFor = (source: string): Mount | undefined => mounts.find((m) => m.provider.name === source) ?? (multi ? undefined : mounts[0]);
  // A JWT provider's forwards (Pub/Sub's) are signed with hookdrill's own key: the services verify
  // them against the keys hookdrill serves in test mode, so they are served while listen forwards.
  if (forwards)
    for (const m of mounts) {
      const signer = signerOf(m);
      if (signer) await serveKeys(signer.provider, signer.secrets);
    }
  const inboxTarget = resolveTarget(o.inbox ?? LISTEN_DEFAULTS.inbox);

  const commitBatch = parseIntFlag(o.commitBatch, '--commit-batch', 1, 10_000, LISTEN_DEFAULTS.commitBatch);
  const commitWaitMs = duration(o.commitWait, '--commit-wait', LISTEN_DEFAULTS.commitWaitMs);
  if (commitWaitMs > 1_000)
    throw new UsageError(`--commit-wait ${o.commitWait}: at most 1s (every delivery in a batch waits this long for its 200)`);
  const storeDeadlineMs = duration(o.storeDeadline, '--store-deadline', RECEIVER_DEFAULTS.storeDeadlineMs);
  if (storeDeadlineMs < 10 || storeDeadlineMs > 60_000)
    throw new UsageError(`--store-deadline ${o.storeDeadline}: between 10ms and 60s (keep it below your provider's timeout)`);
  // Group commit: deliveries that arrive together share one transaction and one disk sync; each
  // is still answered only after the transaction holding it has committed. On SQLite, writes go
  // to a writer thread, so the event loop never waits on the disk.
  // Bound once the inbox is open (its gauges read it); the commit batches report to it from the start.
  let metrics: ListenMetrics | undefined;
  const inbox: Inbox = await openInbox(inboxTarget, {
    receiver: {
      // /healthz says "stuck" well before the deadline turns deliveries away.
      stuckAfterMs: storeDeadlineMs / 2,
      ...(o.onWarning ? { onWarning: o.onWarning } : {}),
      ...(commitBatch > 1
        ? { groupCommit: { maxBatch: commitBatch, maxWaitMs: commitWaitMs, onBatch: (n: number) => metrics?.batch(n) } }
        : {}),
    },
  });
  metrics = createListenMetrics(inbox);
  // A store that fails is said once on stderr, loudly, not only in each request's line.
  let lastStoreFailure: string | undefined;
  const storeFailed = (reason: string) => {
    if (reason === lastStoreFailure) return;
    lastStoreFailure = reason;
    o.onError?.(new Error(`answering 503: ${reason}`));
  };
  const startedAt = new Date().toISOString();
  const counts: ListenCounts = { requests: 0, stored: 0, duplicates: 0, rejected: 0, failed: 0, filtered: 0, done: 0, retried: 0, dead: 0 };
  const routed = routes.length > 0 || multi;
  const worker = o.noWorker
    ? undefined
    : new Worker({
        inbox,
        concurrency,
        maxAttempts,
        leaseMs,
        backoff,
        // With nowhere to forward to, a stored delivery is simply marked done once logged.
        handler: routingHandler({
          routes,
          fallback,
          forwarder: (source, url) => {
            const m = mountFor(source);
            if (!m)
              return async () => {
                throw new PermanentError(`no provider ${source} in this listen: its forwards cannot be signed`);
              };
            const signer = signerOf(m);
            return forwardHandler(url, {
              timeoutMs: forwardTimeoutMs,
              ...(signer ? { signer } : {}),
              verifySecrets: m.secrets,
              provider: m.provider,
            });
          },
        }),
        ...(routed
          ? {
              routeOf: (row: Claimed) => resolveRoute(routes, fallback, row).name,
              onRoute: (change: RouteChange) => {
                metrics?.route(change);
                o.onRoute?.(change);
              },
            }
          : {}),
        onOutcome: (outcome) => {
          metrics?.outcome(outcome);
          if (outcome.outcome === 'done') counts.done++;
          else if (outcome.outcome === 'retry') counts.retried++;
          else if (outcome.outcome === 'dead') counts.dead++;
          o.onOutcome?.(outcome);
        },
        onError: (err) => {
          // The inbox file gone is the receiver's cause too (every delivery is answered 503):
          // said once in its words, whichever of the two meets it first.
          if (err instanceof Error && err.name === 'InboxFileGoneError') return storeFailed(err.message);
          o.onError?.(err);
        },
      });
  const receiverOf = (m: Mount): ReceiverOptions => ({
    provider: m.provider,
    secrets: m.secrets,
    inbox,
    maxBytes,
    maxInFlightBytes,
    toleranceSec: toleranceOf(m.provider),
    ...(m.publicUrl !== undefined ? { publicUrl: m.publicUrl } : {}),
    ...(o.trustProxy ? { trustProxy: true } : {}),
    ...(filter ? { keep: (type: string | undefined) => passesFilter(filter, m.provider.name, type) } : {}),
    // The row keeps the route it was given: a change of routes later applies to new deliveries.
    ...(routed
      ? { routeOf: (eventType: string | undefined) => resolveRoute(routes, fallback, { source: m.provider.name, eventType }).name }
      : {}),
    storeDeadlineMs,
    metrics: () => (metrics as ListenMetrics).scrape(),
    // The counts behind /healthz's verdict: what this listen answered since it started.
    healthDetail: () => ({
      answered: {
        since: startedAt,
        stored: counts.stored,
        duplicates: counts.duplicates,
        rejected: counts.rejected,
        failed: counts.failed,
      },
    }),
    onRequest: (event, refused) => {
      if (multi) event.source = m.provider.name;
      metrics?.request(event);
      if (event.result !== 'health') counts.requests++;
      if (event.result === 'filtered') counts.filtered = (counts.filtered ?? 0) + 1;
      if (event.result === 'stored') {
        counts.stored++;
        worker?.wake();
      } else if (event.result === 'duplicate') counts.duplicates++;
      else if (event.result === 'rejected') counts.rejected++;
      else if (event.result === 'store_failed') {
        counts.failed++;
        storeFailed(event.reason ?? 'the store failed');
      }
      if (event.result === 'stored') lastStoreFailure = undefined;
      o.onRequest?.(event, refused);
    },
  });
  const server: Server = multi
    ? createMountedServer(
        mounts.map((m) => ({ path: m.path as string, options: receiverOf(m) })),
        (path) => {
          counts.requests++;
          const event: ReceiverEvent = { status: 404, result: 'not_found', reason: `no provider posts to ${path}` };
          metrics?.request(event);
          o.onRequest?.(event);
        },
      )
    : createReceiverServer(receiverOf(mounts[0] as Mount));

  let address: AddressInfo;
  try {
    address = await listen(server, port, host);
  } catch (err) {
    await inbox.close();
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE') throw new UsageError(`port ${port} on ${host} is already in use`);
    if (code === 'EACCES') throw new UsageError(`no permission to listen on port ${port}`);
    if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND') throw new UsageError(`--host ${host} is not an address of this machine`);
    throw err;
  }
  worker?.start();

  const shownHost = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const ready: Ready = {
    event: 'ready',
    url: `http://${shownHost}:${address.port}/`,
    inbox: displayTarget(inboxTarget),
    provider: mounts.map((m) => m.provider.name).join(','),
    ...(multi
      ? {
          providers: mounts.map((m) => ({
            provider: m.provider.name,
            path: m.path as string,
            url: `http://${shownHost}:${address.port}${m.path}`,
          })),
        }
      : {}),
    ...(routes.length > 0
      ? {
          routes: [
            ...routes.map((r) => ({ name: r.name, provider: r.provider, events: r.events, to: describeTarget(r.target) })),
            { name: 'default', provider: '*', events: ['*'], to: describeTarget(fallback) },
          ],
        }
      : {}),
    forwardTo: forwardTo ? displayUrl(forwardTo) : null,
    worker: worker !== undefined,
    ...(worker ? { retries: { maxAttempts, ...backoff, deadAfterMs: deadAfter(maxAttempts, backoff) } } : {}),
    pid: process.pid,
    warnings: (await inbox.durabilityWarnings?.()) ?? [],
  };

  let stopped: Promise<ListenSummary> | undefined;
  return {
    ready,
    counts: () => ({ ...counts }),
    stop() {
      stopped ??= (async () => {
        // No new connections; idle keep-alive ones close now, busy ones after their answer.
        const closed = new Promise((r) => server.close(r));
        server.closeIdleConnections();
        await closed;
        let stats: InboxStats;
        try {
          await worker?.stop();
          stats = await inbox.stats();
        } finally {
          // Closed whatever happened: an open pool or writer thread would keep the process alive.
          await inbox.close();
        }
        return {
          command: 'listen' as const,
          requests: counts.requests,
          stored: counts.stored,
          duplicates: counts.duplicates,
          rejected: counts.rejected,
          processed: { done: counts.done, retried: counts.retried, dead: counts.dead },
          inbox: stats,
        };
      })();
      return stopped;
    },
  };
}

/** A provider as this listen receives it. */
interface Mount {
  provider: Provider;
  secrets: string[];
  /** Its path; undefined: a listen of one provider, which takes every path. */
  path: string | undefined;
  publicUrl: string | undefined;
}

/** The providers listen receives: the one of --provider, or each of `receive`, checked. */
function mountsOf(o: ListenOptions, port: number): Mount[] {
  if (!o.receive) {
    // Verifying accepts several secrets at once (rotation) whatever the provider: each is tried.
    const { provider, secrets } = resolveSigner({ ...o, verifying: true });
    return [{ provider, secrets, path: undefined, publicUrl: publicUrlFor(provider, o, port) }];
  }
  if (o.provider !== undefined || o.secrets?.length || o.publicUrl !== undefined)
    throw new UsageError(
      '--provider, --secret and --public-url are for a listen of one provider; the project file\'s "receive" names several',
    );
  if (o.receive.length === 0) throw new UsageError('receive: no provider given');
  const paths = new Set<string>();
  return o.receive.map((r) => {
    const { provider, secrets } = resolveSigner({ provider: r.provider, secrets: [...r.secrets], verifying: true });
    const path = r.path ?? `/${provider.name}`;
    if (paths.has(path)) throw new UsageError(`receive: ${path} is given to two providers; each needs a path of its own`);
    paths.add(path);
    let publicUrl: string | undefined;
    if (r.publicUrl !== undefined) publicUrl = parseUrl(r.publicUrl, `receive.${provider.name}.publicUrl`).href;
    if (provider.urlBound && publicUrl === undefined && !o.trustProxy)
      throw new UsageError(
        `receive.${provider.name}: ${provider.name} signs the URL it posts to: give its publicUrl, the URL set at ${provider.title}`,
      );
    if (!provider.urlBound && publicUrl !== undefined)
      throw new UsageError(`receive.${provider.name}.publicUrl: ${provider.name} signs no URL; leave it out`);
    return { provider, secrets, path, publicUrl };
  });
}

/** Each route names a provider this listen receives (or any): a route for one it does not would never be taken. */
function checkRoutes(routes: readonly Route[], mounts: readonly Mount[]): void {
  checkUniqueNames(routes, 'routes');
  const names: string[] = mounts.map((m) => m.provider.name);
  for (const r of routes) {
    if (r.provider !== '*' && !names.includes(r.provider))
      throw new UsageError(`route ${r.name}: listen receives ${names.join(', ')}, not ${r.provider}: no delivery would take it`);
  }
}

/**
 * The URL a URL-bound provider's signatures are verified over: --public-url, or each request's
 * own as the trusted proxy gives it — never one a client's headers choose. A provider that signs
 * no URL takes no --public-url: given, it would be a setting that silently does nothing.
 */
function publicUrlFor(provider: Provider, o: ListenOptions, port: number): string | undefined {
  const given = o.publicUrl !== undefined ? parseUrl(stringOption(o.publicUrl, 'publicUrl'), '--public-url').href : undefined;
  if (!provider.urlBound) {
    if (given !== undefined || o.trustProxy)
      throw new UsageError(`${given !== undefined ? '--public-url' : '--trust-proxy'}: ${provider.name} signs no URL; leave it out`);
    return undefined;
  }
  if (given !== undefined && o.trustProxy)
    throw new UsageError('--public-url fixes the URL every request is verified over; --trust-proxy rebuilds it per request: give one');
  if (given === undefined && !o.trustProxy) {
    const local = `http://127.0.0.1:${port || 3000}/`;
    throw new UsageError(
      `${provider.name} signs the URL it posts to: give --public-url, the URL set at ${provider.title} (${local} for send --url ${local}), or --trust-proxy behind a proxy that sets X-Forwarded-Proto and -Host`,
    );
  }
  return given;
}
