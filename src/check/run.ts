import { randomBytes } from 'node:crypto';
import { displayTarget, resolveTarget } from '../inbox/open.js';
import { durationMs, RECEIVER_PROCESS_DEFAULTS, startReceiver } from '../harness/receiver-process.js';
import { ReceiverStartError } from '../harness/supervisor.js';
import { UsageError } from '../util/errors.js';
import { maskSecrets } from '../util/secrets.js';
import { resolveTls } from '../delivery/tls.js';
import { parseDuration } from '../util/duration.js';
import { CHECK_DEFAULTS } from './defaults.js';
import {
  FORM_KEY,
  compileFixture,
  defaultFixtureOf,
  contentTypeOption,
  listShippedFixtures,
  loadFixtureFile,
  resolveFixtures,
} from '../fixtures/index.js';
import type { ContentType } from '../fixtures/index.js';
import { resolvePublicUrl, resolveSigner } from '../delivery/signer.js';
import { TargetDispatcher, warmUpHttpClient } from '../delivery/dispatcher.js';
import { RECEIVER_DEFAULTS } from '../receiver/defaults.js';
import { storedCounts as probeCounts } from '../harness/store-probe.js';
import type { StoreProbe } from '../harness/store-probe.js';
import { CASES, CASE_NAMES } from './cases/index.js';
import type { CaseOutcome, CaseStatus, CheckCase, CheckContext } from './cases/index.js';
import { Interrupt } from '../util/wait.js';
import { CheckPreflightError, preflight } from './preflight.js';
import { ProbeInterrupted, runIdsCommand } from '../harness/store-probe.js';
import { findStoredKey, storedKeyDiagnosis } from './stored-key.js';
import { signedAsSent } from './cases/common.js';
import { displayUrl, parseBytesFlag, parseUrl } from '../util/options.js';
import { providers } from '../providers/index.js';
import type { ProviderName } from '../providers/index.js';
import { listOption, stringOption } from '../util/shapes.js';
import type { Strings } from '../util/shapes.js';
import { serveKeys } from '../delivery/key-server.js';
import { FORWARD_TIMEOUT_MS, routeTakes, takenByListen } from './forwarded.js';
import type { ForwardedRoute } from './forwarded.js';
import type { Fixture } from '../fixtures/index.js';
import { catalogueFixture } from '../fixtures/index.js';
import { catalogueOf } from '../fixtures/catalogue/index.js';

export interface CheckOptions {
  url?: string;
  /**
   * The URL the provider posts to, where the receiver sits behind a proxy that forwards to `url`:
   * URL-bound schemes (Square, HubSpot) sign it, and every request carries
   * X-Forwarded-Proto and -Host as the proxy would add them.
   */
  publicUrl?: string;
  provider?: ProviderName | (string & {});
  secrets?: Strings;
  inbox?: string;
  stored?: string;
  /** Case names: `['duplicate', 'retry']` or `'duplicate,retry'`. */
  only?: Strings;
  /** Case names: `['duplicate', 'retry']` or `'duplicate,retry'`. */
  skip?: Strings;
  maxBytes?: string | number;
  /** Per attempt (default: the provider's timeout, at most 5 s). */
  timeout?: string | number;
  ca?: string;
  insecure?: boolean;
  /** Start the receiver with this shell command (PORT from the URL), check it, stop it. */
  receiver?: string;
  /** With receiver: how long it may take to accept connections. */
  readyTimeout?: string | number;
  /** The id every request carries as X-Hookdrill-Check (default: chk-<UTC time>-<random>), e.g. a CI job's id. */
  runId?: string;
  /** `json` (the default) or `form`: the content type of the GitHub hook the receiver sits behind. */
  contentType?: ContentType | (string & {});
  onCase?: (c: CaseReport) => void;
  /** Aborting it (Ctrl-C, a CI job's SIGTERM) stops sending: the cases judged are reported, the rest marked not judged. */
  signal?: AbortSignal;
  /**
   * The receiver is a listen route's target (`check --route`): sent what listen forwards to it —
   * re-signed as listen re-signs, with X-Hookdrill-*, only the types the route takes, held to
   * listen's forward timeout; the cases listen answers itself are skipped, saying so.
   */
  forward?: ForwardedRoute;
}

export interface CaseReport {
  name: string;
  summary: string;
  status: CaseStatus;
  observed: string;
  /** With a fail or a warning: the defect as a developer fixes it. */
  diagnosis?: string;
  /** With a fail or a warning: the first line of the receiver's last answer body that was not a 2xx (its own words). */
  answer?: string;
  /** Not judged (status skipped): the case whose failure leaves this one's verdict meaningless, or `interrupted`. */
  notJudged?: string;
  ms: number;
}

export interface CheckResult {
  command: 'check';
  ok: boolean;
  /** Every request carried it as X-Hookdrill-Check: `inspect --check-run ID` shows what the run left in an inbox. */
  runId: string;
  provider: string;
  url: string;
  store: 'inbox' | 'command' | 'none';
  /** With --inbox: the inbox judged (where `inspect --check-run` finds what the run left). */
  inbox?: string;
  /** With receiver: the command check started (secrets masked) and stopped. */
  receiver?: string;
  /** check --route: the listen route whose target was judged. */
  route?: string;
  cases: CaseReport[];
  counts: Record<CaseStatus, number>;
  /** The failures that are causes (every failed case: a consequence of one is not judged, not failed). */
  roots: string[];
  /** Cases not judged because a case they depend on failed, or the run was interrupted (counted as skipped). */
  notJudged: number;
  /** Stopped early by an interrupt: what was judged is reported, and the run does not pass. */
  interrupted: boolean;
  /** The signal that stopped a --stored command, where the run learnt of the interrupt from it. */
  interruptedBy?: NodeJS.Signals;
  elapsedMs: number;
}

function caseList(value: unknown, option: 'only' | 'skip'): string[] | undefined {
  const flag = `--${option}`;
  const names = listOption(value, option);
  if (names === undefined) return undefined;
  if (names.length === 0) throw new UsageError(`${flag} names no case (cases: ${CASE_NAMES.join(', ')})`);
  const unknown = names.filter((n) => !CASE_NAMES.includes(n));
  if (unknown.length) throw new UsageError(`${flag} ${unknown.join(',')}: no such case (cases: ${CASE_NAMES.join(', ')})`);
  return names;
}

/** A run id as given (a header value: printable, no spaces), or a new one that sorts by time. */
function checkRunId(given: string | undefined): string {
  if (given !== undefined) {
    if (!/^[\x21-\x7e]{1,100}$/.test(given))
      throw new UsageError(`--run-id ${JSON.stringify(given)}: expected 1 to 100 printable characters, no spaces`);
    return given;
  }
  const at = new Date()
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `chk-${at}-${randomBytes(3).toString('hex')}`;
}

/** A case's report with what only check itself reads: whether valid's delivery got 2xx, and its id. */
type Report = CaseReport & Pick<CaseOutcome, 'accepted' | 'deliveryId' | 'unanswered' | 'sent'>;

/** A case that was not run: what it waited on, in words, and which case (or the interrupt) that was. */
function notJudged(c: CheckCase, why: string, root: string): CaseReport {
  return { name: c.name, summary: c.summary, status: 'skipped', observed: `not judged: ${why}`, notJudged: root, ms: 0 };
}

/** Why a case's verdict would mean nothing: a case it needs failed (or was not judged itself). */
function blockedBy(c: CheckCase, done: ReadonlyMap<string, Report>): { why: string; root: string } | undefined {
  for (const need of c.needs ?? []) {
    const r = done.get(need.case);
    if (r === undefined || r.status === 'pass' || r.status === 'warn') continue;
    if (r.notJudged !== undefined) return { why: r.observed.replace(/^not judged: /, ''), root: r.notJudged };
    if (r.status !== 'fail') continue; // skipped by --only/--skip: nothing known, so judged as usual
    if (need.answered && r.accepted) continue;
    const why =
      need.case === 'valid'
        ? r.accepted
          ? 'a valid delivery is answered 2xx but not stored as sent (see valid)'
          : r.unanswered
            ? 'valid deliveries get no answer (see valid)'
            : 'valid deliveries are refused (see valid)'
        : `${need.case} failed`;
    return { why, root: need.case };
  }
  return undefined;
}

/** Every case, what it proves, and the providers it cannot apply to (check --list). */
export function listCases(): { name: string; summary: string; notFor: string[] }[] {
  return CASES.map((c) => ({
    name: c.name,
    summary: c.summary,
    notFor: Object.values(providers)
      .filter((p) => c.skipFor?.(p) !== undefined)
      // Where the reason rests on a library's version, the version is said with the name.
      .map((p) => {
        const versions = p.verifier.officialVersions;
        return versions && c.skipFor?.(p)?.includes(versions) ? `${p.name} per ${versions}` : p.name;
      }),
  }));
}

/** Run the conformance battery against a receiver: each case passes, fails, warns, or is skipped with a reason. */
export async function run(o: CheckOptions): Promise<CheckResult> {
  const started = performance.now();
  const url = parseUrl(stringOption(o.url, 'url'), '--url');
  const { provider, secrets } = resolveSigner(o);
  const publicUrl = resolvePublicUrl(provider, o.publicUrl);
  // A JWT provider's public keys, where the receiver fetches them (test mode: delivery/key-server.ts).
  await serveKeys(provider, secrets);
  if (o.inbox && o.stored) throw new UsageError('give one of --inbox and --stored, not both');
  const only = caseList(o.only, 'only');
  const skip = caseList(o.skip, 'skip') ?? [];
  const forward = o.forward;
  // Through a route the target answers listen, which waits --forward-timeout (10 s unless told), not the provider.
  const providerTimeoutMs = forward
    ? forward.forwardTimeout !== undefined
      ? parseDuration(forward.forwardTimeout, '--forward-timeout')
      : FORWARD_TIMEOUT_MS
    : (provider.profiles[provider.defaultProfile] as { timeoutMs: number }).timeoutMs;
  // A delivery the provider would send waits as long as the provider does; a request that must be
  // refused (no provider sends it) waits at most CHECK_DEFAULTS.refusalTimeoutMs.
  const timeoutMs = o.timeout !== undefined ? parseDuration(o.timeout, '--timeout') : providerTimeoutMs;
  const refusalTimeoutMs = o.timeout !== undefined ? timeoutMs : Math.min(providerTimeoutMs, CHECK_DEFAULTS.refusalTimeoutMs);
  if (timeoutMs <= 0) throw new UsageError(`--timeout ${o.timeout}: a timeout must be above 0`);
  const maxBytes = parseBytesFlag(o.maxBytes, '--max-bytes', 1, 1024 ** 3, RECEIVER_DEFAULTS.maxBytes);
  const inboxPath = o.inbox ? resolveTarget(o.inbox) : undefined;
  const runId = checkRunId(stringOption(o.runId, 'runId'));
  // Checked before the receiver starts: a form content type is GitHub's hook setting alone.
  const contentType = contentTypeOption(o.contentType, provider);

  const aliases = provider.otherIds;
  const probe: StoreProbe | undefined = inboxPath
    ? { kind: 'inbox', target: inboxPath, source: provider.name, aliases }
    : o.stored
      ? { kind: 'command', command: o.stored, aliases }
      : undefined;
  const storedCounts: CheckContext['storedCounts'] = async (ids) =>
    probe === undefined
      ? undefined
      : probeCounts(probe, ids, {}).catch((err: unknown) => {
          // The command's own error output may echo a secret from its command line.
          // An interrupt is kept as it is: the battery stops on it, blaming no one.
          throw err instanceof UsageError && !(err instanceof ProbeInterrupted) ? new UsageError(maskSecrets(err.message, secrets)) : err;
        });

  const readyTimeoutMs = durationMs(o.readyTimeout, '--ready-timeout', RECEIVER_PROCESS_DEFAULTS.readyTimeoutMs);
  if (o.readyTimeout !== undefined && !o.receiver) throw new UsageError('--ready-timeout goes with --receiver');
  // check starts the receiver itself: in a group of its own, ready when its port answers from that
  // group, stopped (and never left behind) when the battery is done.
  const receiver = o.receiver
    ? await startReceiver({ command: o.receiver, url: url.toString(), readyTimeout: readyTimeoutMs }).catch((err: unknown) => {
        // Its stderr is quoted in the message, and a receiver may print its own secret there.
        if (err instanceof ReceiverStartError) throw new ReceiverStartError(maskSecrets(err.message, secrets));
        throw err;
      })
    : undefined;
  try {
    return { ...(await battery()), ...(o.receiver ? { receiver: maskSecrets(o.receiver, secrets) } : {}) };
  } finally {
    await receiver?.stop();
  }

  /**
   * A --stored command that prints something, but not the id of the valid delivery the receiver
   * just took, is printing another column (or the receiver keys on its own id): judging duplicates
   * with it would call every one "stored 0 times". Said once, instead of judged with.
   */
  async function probeStoredCommand(valid: Report, ctx: CheckContext): Promise<Report | undefined> {
    if (valid.status !== 'fail' || valid.accepted !== true || !o.stored) return undefined;
    const lines = await runIdsCommand(o.stored, '--stored', {}).catch(() => undefined);
    if (!lines || lines.length === 0) return undefined; // nothing held: the valid case's own finding
    const id = valid.deliveryId;
    if (id !== undefined && lines.some((l) => l === id || provider.otherIds?.(id).includes(l))) return undefined;
    // A value of the delivery itself (a header, a body field) printed in its place: the receiver keys
    // its store on that, a defect of the receiver's (exit 1), not a --stored command gone wrong.
    if (valid.sent) {
      const e = ctx.factory.make(Date.now());
      const another = { headers: signedAsSent(ctx, e), body: e.rawBody, deliveryId: e.deliveryId };
      const key = findStoredKey(provider, valid.sent, another, lines);
      if (key)
        return {
          ...valid,
          observed: `${valid.observed} under its delivery id; stored under ${key.where}`,
          diagnosis: maskSecrets(storedKeyDiagnosis(provider, key), secrets),
        };
    }
    const example = lines[lines.length - 1] ?? '';
    throw new CheckPreflightError(
      maskSecrets(
        `--stored printed ${lines.length} line${lines.length === 1 ? '' : 's'} but not the id of the delivery the receiver just answered 2xx (${id ?? ''}); its last line is ${JSON.stringify(example.slice(0, 80))}: give a command that prints the ${ctx.provider.title} delivery ids the receiver keys on, one per line — or, if it does, the receiver stores deliveries under an id of its own, and cannot tell a retry from a new event`,
        secrets,
      ),
    );
  }

  /**
   * The event the battery is built on, through a route: the provider's default fixture if the route
   * takes its type, else its first shipped fixture (then catalogue event) of a type it takes — a
   * target is judged on what listen forwards to it, never on a type it will not see.
   */
  function routeFixture(route: ForwardedRoute): Fixture {
    const typeOf = (f: Fixture) => compileFixture(provider, f, [], undefined, contentType).make(Date.now()).eventType;
    const shipped = listShippedFixtures()
      .filter((f) => f.provider === provider.name)
      .map((f) => loadFixtureFile(f.path, provider.name));
    const first = resolveFixtures([defaultFixtureOf(provider.name)], provider.name)[0];
    const candidates = [...(first ? [first] : []), ...shipped];
    const found =
      candidates.find((f) => !(FORM_KEY in f.body) && routeTakes(route, typeOf(f))) ??
      (catalogueOf(provider.name)?.events ?? []).map((e) => catalogueFixture(provider.name, e)).find((f) => routeTakes(route, typeOf(f)));
    if (!found)
      throw new UsageError(
        `route ${route.name} takes ${route.events.join(', ')}: hookdrill has no ${provider.title} event of such a type to send (see hookdrill fixtures)`,
      );
    return found;
  }

  async function battery(): Promise<CheckResult> {
    await warmUpHttpClient();
    const dispatcher = new TargetDispatcher(url.origin, 32, resolveTls(o));
    const interrupt = new Interrupt(o.signal);
    const fixture = forward ? routeFixture(forward) : resolveFixtures([defaultFixtureOf(provider.name)], provider.name)[0];
    // What the scheme has the receiver fetch or visit (SNS's certificate, its SubscribeURL), served for the run.
    const served = await provider.serve?.().catch(async (err: unknown) => {
      await dispatcher.close();
      throw err;
    });
    const ctx: CheckContext = {
      ...(served ? { served } : {}),
      contentType,
      provider,
      secrets,
      url,
      ...(publicUrl ? { publicUrl } : {}),
      timeoutMs,
      refusalTimeoutMs,
      providerTimeoutMs,
      maxBytes,
      factory: compileFixture(provider, fixture!, [], undefined, contentType),
      dispatcher,
      storedCounts,
      runId,
      interrupt,
      tls: resolveTls(o),
      ...(o.receiver ? { receiver: o.receiver } : {}),
      ...(forward ? { forward: { route: forward, attempts: new Map<string, number>() } } : {}),
    };
    // Why each case will not run, decided before anything is sent: a run that tests nothing must
    // not end in PASS, so a selection that leaves no case to run is refused as bad input.
    const skipReason = (c: (typeof CASES)[number]): string | undefined =>
      only && !only.includes(c.name)
        ? 'not in --only'
        : skip.includes(c.name)
          ? 'in --skip'
          : (c.skipFor?.(provider) ?? (forward ? takenByListen(c.name, forward) : undefined));
    if (CASES.every((c) => skipReason(c) !== undefined)) {
      const why = [...new Set(CASES.map(skipReason))].join('; ');
      throw new UsageError(`no case left to run (${why}): nothing would be checked`);
    }
    // Nothing listening is one finding, said before any case runs (check --receiver has made sure
    // already that its child owns the port).
    if (!o.receiver)
      await preflight(url, resolveTls(o), refusalTimeoutMs).catch(async (err: unknown) => {
        await dispatcher.close();
        await served?.close();
        throw err;
      });
    const reports: CaseReport[] = [];
    const byName = new Map<string, Report>();
    // The signal that stopped a --stored probe, where it came before (or without) hookdrill's own.
    let probeSignal: NodeJS.Signals | undefined;
    const stopped = () => interrupt.aborted || probeSignal !== undefined;
    const probeCut = (err: unknown): undefined => {
      if (!(err instanceof ProbeInterrupted)) throw err;
      probeSignal = err.signal;
      return undefined;
    };
    try {
      for (const c of CASES) {
        const t = performance.now();
        const reason = skipReason(c);
        const blocked = reason === undefined ? blockedBy(c, byName) : undefined;
        let report: Report;
        if (reason !== undefined) {
          report = { name: c.name, summary: c.summary, status: 'skipped', observed: reason, ms: 0 };
        } else if (stopped() || blocked !== undefined) {
          const why = stopped() ? 'interrupted before it ran' : (blocked?.why ?? '');
          report = notJudged(c, why, stopped() ? 'interrupted' : (blocked?.root ?? ''));
        } else {
          let said: string | undefined;
          // A --stored probe stopped by Ctrl-C (its sqlite3 gets the signal too, perhaps before
          // hookdrill's own handler runs) interrupts the run: not the command's fault, nor the receiver's.
          const outcome: CaseOutcome | undefined = await c
            .run({
              ...ctx,
              onAnswer: (a) => {
                const first =
                  a.status !== undefined && (a.status < 200 || a.status >= 300) ? a.bodySnippet?.trim().split('\n')[0] : undefined;
                if (first) said = first.slice(0, 200);
              },
            })
            .catch(probeCut);
          // Stopped halfway, a case's verdict would judge the interrupt, not the receiver.
          report =
            stopped() || outcome === undefined
              ? notJudged(c, 'interrupted while it ran', 'interrupted')
              : {
                  name: c.name,
                  summary: c.summary,
                  ...outcome,
                  ...(said !== undefined && outcome.status !== 'pass' ? { answer: said } : {}),
                  ms: Math.round(performance.now() - t),
                };
          if (c.name === 'valid' && !stopped() && probe?.kind === 'command')
            report = (await probeStoredCommand(report, ctx).catch(probeCut)) ?? report;
          if (stopped() && report.status !== 'skipped') report = notJudged(c, 'interrupted while it ran', 'interrupted');
        }
        byName.set(c.name, report);
        const { accepted: _a, deliveryId: _d, unanswered: _u, sent: _s, ...shown } = report;
        reports.push(shown);
        o.onCase?.(shown);
      }
    } finally {
      await dispatcher.close();
      await served?.close();
    }
    const counts: Record<CaseStatus, number> = { pass: 0, fail: 0, warn: 0, skipped: 0 };
    for (const r of reports) counts[r.status]++;
    return {
      command: 'check',
      ok: counts.fail === 0 && !stopped(),
      runId,
      provider: provider.name,
      url: displayUrl(url),
      ...(forward ? { route: forward.name } : {}),
      store: inboxPath ? 'inbox' : o.stored ? 'command' : 'none',
      // A password in a postgres:// URL is not shown.
      ...(inboxPath ? { inbox: displayTarget(inboxPath) } : {}),
      cases: reports,
      counts,
      roots: reports.filter((r) => r.status === 'fail').map((r) => r.name),
      notJudged: reports.filter((r) => r.notJudged !== undefined).length,
      interrupted: stopped(),
      ...(probeSignal ? { interruptedBy: probeSignal } : {}),
      elapsedMs: Math.round(performance.now() - started),
    };
  }
}
