import { serialized } from '../../providers/contract.js';
import { catalogueOf } from '../../fixtures/catalogue/index.js';
import { FORM_KEY, catalogueFixture, compileFixture, listShippedFixtures, loadFixtureFile } from '../../fixtures/index.js';
import type { ContentType, EventFactory, FieldOverride, PreparedEvent } from '../../fixtures/index.js';
import type { JsonObject, OutgoingHeaders, Provider, RetryReason, ServedHost } from '../../providers/index.js';
import { attempt } from '../../delivery/attempt.js';
import { asSent } from '../../providers/body-placed.js';
import type { AttemptOutcome } from '../../delivery/attempt.js';
import type { TargetDispatcher, TlsOptions } from '../../delivery/dispatcher.js';
import { CHECK_HEADER } from '../../inbox/types.js';
import { formPayloadJson, windowSec } from '../../providers/util.js';
import { sleep } from '../../util/wait.js';
import { retrySpan } from '../wording.js';
import type { Interrupt } from '../../util/wait.js';
import type { SentDelivery } from '../stored-key.js';
import { forwardMarksFor, resignedAsListen, routeTakes } from '../forwarded.js';
import type { ForwardedRoute } from '../forwarded.js';
import { placeQuery } from '../../providers/query-placed.js';

export type CaseStatus = 'pass' | 'fail' | 'warn' | 'skipped';

export interface CaseOutcome {
  status: CaseStatus;
  /** What was seen, in words: "401, nothing stored", "p99 12ms (limit 10s)". */
  observed: string;
  /**
   * With a fail or a warning: the defect as a developer fixes it, and why the provider cares
   * ("your receiver refuses a valid signature when the header holds two v1= entries — …").
   */
  diagnosis?: string;
  /** The valid case: whether the delivery itself got 2xx (the rejection cases mean something only if it did). */
  accepted?: boolean;
  /** The valid case: its delivery got no answer at all (a timeout, a reset), not a refusal. */
  unanswered?: boolean;
  /** The valid case: its delivery's id (a --stored command that never prints it prints something else). */
  deliveryId?: string;
  /** The valid case: the delivery as it went out, so what a --stored command printed instead can be found in it. */
  sent?: SentDelivery;
}

/**
 * What must have held for a case's verdict to mean anything: `case` did not fail (or was not
 * judged itself); with `answered`, only that its delivery got 2xx. A receiver that refuses every
 * valid delivery also "passes" every forgery and fails every duplicate: one finding, not twenty.
 */
export interface Need {
  case: string;
  answered?: boolean;
}

/** A case that needs a valid delivery taken and stored: it sends valid deliveries and judges their storing. */
export const NEEDS_VALID: readonly Need[] = [{ case: 'valid' }];
/** A case that needs only a valid delivery answered 2xx: a refusal it asks for means nothing from a receiver that refuses everything. */
export const NEEDS_ANSWERED: readonly Need[] = [{ case: 'valid', answered: true }];

/** A forgery case: meaningful once the receiver answers valid deliveries and refuses another secret's signature. */
export const NEEDS_SIGNATURE: readonly Need[] = [...NEEDS_ANSWERED, { case: 'wrong-secret' }];

export interface CheckContext {
  provider: Provider;
  /** How bodies go out: JSON, or (a GitHub hook set to form) the JSON in one `payload=` field. */
  contentType: ContentType;
  secrets: readonly string[];
  url: URL;
  /**
   * The URL the provider is told to post to, where the receiver sits behind a proxy
   * (--public-url): URL-bound schemes sign it, and every request carries the X-Forwarded-Proto and
   * -Host a proxy would add. Absent: the URL posted to is the public one.
   */
  publicUrl?: URL;
  /**
   * Per attempt of a delivery the provider would send: the provider's own timeout (or --timeout),
   * so a receiver is held to the provider's rule and not a stricter one.
   */
  timeoutMs: number;
  /**
   * Per attempt of a request that must be refused (a forgery, an unsigned flood): no provider
   * sends it, so its timeout is no rule of the provider's; a receiver that hangs on it costs each
   * case this long (at most 5 s), not Stripe's 20 s.
   */
  refusalTimeoutMs: number;
  /** The provider's own timeout: what the latency case holds the receiver to. */
  providerTimeoutMs: number;
  maxBytes: number;
  factory: EventFactory;
  dispatcher: TargetDispatcher;
  /** How many times the receiver holds each id; undefined when no store was given. */
  storedCounts(ids: readonly string[]): Promise<number[] | undefined>;
  /** Hears every answer the case gets: a failed case shows the receiver's own words. */
  onAnswer?(o: AttemptOutcome): void;
  /** The run's id: every request carries it as X-Hookdrill-Check, so its rows can be told apart in an inbox. */
  runId: string;
  /** How the receiver's certificate is trusted (--ca, --insecure), for the case that opens its own socket. */
  tls: TlsOptions;
  /** An interrupt stops every attempt in flight and every one after it. */
  interrupt?: Interrupt;
  /** The command that starts the receiver (--receiver), where given: a fix is worded in its language. */
  receiver?: string;
  /** The host the provider's scheme serves for the run (SNS's certificate and SubscribeURL), where it has one. */
  served?: ServedHost;
  /**
   * check --route: the receiver is a listen route's target, sent what listen's forwarder sends —
   * re-signed as it re-signs, marked with X-Hookdrill-*, only the types the route takes.
   */
  forward?: { route: ForwardedRoute; attempts: Map<string, number> };
}

export interface CheckCase {
  name: string;
  summary: string;
  /** Why the case cannot apply to this provider (known before anything is sent), if it cannot. */
  skipFor?(provider: Provider): string | undefined;
  /** The cases whose verdicts this one's depends on: where one failed, this one is not judged. */
  needs?: readonly Need[];
  run(ctx: CheckContext): Promise<CaseOutcome>;
}

/**
 * Where the provider sends a shared token, not a signature (GitLab's X-Gitlab-Token, Basic or
 * Bearer credentials): the words that say the token signs nothing, for the cases that hold a
 * receiver to what a signature covers. Undefined for a provider that signs.
 */
export function tokenSignsNothing(p: Provider): string | undefined {
  // A JWT is signed, but over its claims: the body is no more covered than under a token.
  // One whose claim carries the body's hash (Plaid's request_body_sha256) binds the body: the body cases apply.
  if (p.jwt?.bodyHash) return undefined;
  if (p.jwt)
    return `${p.title} sends a signed JWT in ${p.signatureHeader}: it binds who sent it, for whom (aud) and until when (exp), not the body (nor an id) — the jwt cases judge its claims`;
  if (!p.tokenOnly) return undefined;
  const what = { token: 'a shared token', bearer: 'a Bearer token', basic: 'Basic credentials', field: 'a shared secret' }[p.tokenOnly];
  return `${p.title} sends ${what} in ${p.signatureHeader}${p.tokenOnly === 'field' ? ' (a field of the body)' : ''}, not a signature: the token does not sign the body (nor a time, nor an id)`;
}

/**
 * Where the signature is written into the body and covers named fields only (Mailgun's timestamp +
 * token, not event-data): the words that say a changed body under a right signature is accepted.
 */
export function signsFieldsOnly(p: Provider): string | undefined {
  if (!p.bodySignature) return undefined;
  return `${p.title}'s signature covers ${p.bodySignature.covers}: a receiver that checks it as ${p.verifier.official} does rightly accepts a body changed in transit — a property of the scheme (TLS is what protects the body), so a refusal is not demanded`;
}

/** The timestamp cases need a provider that signs a timestamp (GitHub and Shopify do not). */
export const needsTimestamp = (p: Provider) =>
  tokenSignsNothing(p) ??
  (p.jwt ? `${p.title}'s time is the token's own (iat${p.jwt.iatOnly ? '' : ', exp'}): the jwt cases judge it` : undefined) ??
  (p.signedOnce
    ? `${p.title}'s retries carry their first attempt's signature, timestamp and all (${p.signedOnce.source}), so a delivery's signed time is hours old by its last retry: no window of minutes is demanded (late-retry holds a receiver to its retries instead)`
    : undefined) ??
  (p.timestamped
    ? undefined
    : p.signedHeaders.some((h) => /timestamp/i.test(h))
      ? `${p.verifier.official} holds the signed timestamp to no window`
      : p.verifier.unheldTimestamp
        ? `${p.verifier.official} holds the signed ${p.verifier.unheldTimestamp} to no window`
        : `${p.title} signs no timestamp`);

export const is2xx = (s?: number) => s !== undefined && s >= 200 && s < 300;
export const is4xx = (s?: number) => s !== undefined && s >= 400 && s < 500;

export function lower(headers: OutgoingHeaders): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

/**
 * The headers a signing writes, keyed lower-case (the cases edit and delete them by name); post()
 * writes each back as the provider names it ("X-HubSpot-Signature-v3"), as `send` does.
 */
export function sign(
  ctx: CheckContext,
  event: PreparedEvent,
  opts: { nowMs?: number; secrets?: readonly string[]; retry?: number; retryReason?: RetryReason; url?: string } = {},
): Record<string, string> {
  const headers = signedAsSent(ctx, event, opts);
  const names = casingOf(ctx.provider);
  for (const name of Object.keys(headers)) names.set(name.toLowerCase(), name);
  return lower(headers);
}

/** Each provider's header names as it writes them, by their lower-case form: learnt from its own signings. */
const casings = new WeakMap<Provider, Map<string, string>>();
function casingOf(provider: Provider): Map<string, string> {
  let names = casings.get(provider);
  if (!names) {
    names = new Map();
    casings.set(provider, names);
  }
  return names;
}

/** The headers with each name the provider writes in its casing; any other (a proxy's, check's own) as it is. */
function providerCased(provider: Provider, headers: Record<string, string>): Record<string, string> {
  const names = casingOf(provider);
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [names.get(k) ?? k, v]));
}

/** The headers a signing writes, named as the provider names them ("X-GitHub-Delivery"): for findings that name a header. */
export function signedAsSent(
  ctx: CheckContext,
  event: PreparedEvent,
  opts: { nowMs?: number; secrets?: readonly string[]; retry?: number; retryReason?: RetryReason; url?: string } = {},
): Record<string, string> {
  const nowMs = opts.nowMs ?? Date.now();
  const url = opts.url ?? signedUrl(ctx);
  const provided = ctx.provider.sign(event.rawBody, opts.secrets ?? ctx.secrets, {
    nowMs,
    firstAttemptMs: event.madeAtMs,
    deliveryId: event.deliveryId,
    eventType: event.eventType,
    facts: event.facts,
    url,
  });
  // Through a route: what the provider sent listen, signed anew as listen's forwarder signs it.
  const headers = ctx.forward
    ? resignedAsListen(
        ctx.provider,
        provided,
        event.rawBody,
        opts.secrets ?? ctx.secrets,
        { deliveryId: event.deliveryId, eventType: event.eventType, url },
        nowMs,
      )
    : provided;
  // A retry carries what the provider adds to retries (Slack: X-Slack-Retry-Num and -Reason).
  if (opts.retry && ctx.provider.retryHeaders)
    Object.assign(headers, ctx.provider.retryHeaders(opts.retry, opts.retryReason ?? 'http_timeout', event.rawBody) ?? {});
  return { ...headers };
}

/**
 * A request signed `offsetMs` from now (negative: in the past): the timestamp header moved, or
 * where the clock is in the body (Linear's webhookTimestamp) the body aged and signed again.
 */
export function signedAt(ctx: CheckContext, e: PreparedEvent, offsetMs: number): { body: Buffer; headers: Record<string, string> } {
  if (ctx.provider.clockInBody && e.aged) {
    const body = e.aged(-offsetMs);
    return { body, headers: sign(ctx, { ...e, rawBody: body }) };
  }
  return { body: e.rawBody, headers: sign(ctx, e, { nowMs: Date.now() + offsetMs }) };
}

/** The URL a URL-bound provider signs: the public one the provider posts to. */
export function signedUrl(ctx: CheckContext): string {
  return (ctx.publicUrl ?? ctx.url).href;
}

/** What a proxy in front of the receiver adds (--public-url): where the request was sent, as the sender saw it. */
export function forwardedHeaders(ctx: CheckContext): Record<string, string> {
  if (!ctx.publicUrl) return {};
  return { 'x-forwarded-proto': ctx.publicUrl.protocol.replace(':', ''), 'x-forwarded-host': ctx.publicUrl.host };
}

/** A secret the receiver does not know, of the provider's shape. */
export const stranger = (ctx: CheckContext) => ctx.provider.otherSecret(ctx.secrets[0] ?? '');

/**
 * Copy i of a delivery as the provider would send it: re-signed i seconds apart, so where the
 * provider signs a timestamp each copy's signature differs, as real retries' do. A receiver that
 * deduplicates on the signature instead of the delivery id stores every copy.
 */
export function copySignedSecondsApart(ctx: CheckContext, event: PreparedEvent, i: number, copies: number): Record<string, string> {
  // A second apart, the oldest within half the provider's window: Paddle's SDK refuses a timestamp
  // more than 5 s old, so ten copies a second apart would be nine seconds of stale signatures.
  const stepMs = Math.min(1_000, (windowSec(ctx.provider) * 1_000) / 2 / copies);
  return sign(ctx, event, { nowMs: Date.now() - (copies - 1 - i) * stepMs });
}

/** The provider's window for a signed timestamp, in words: "5 minutes", Paddle's "5 seconds". */
export function windowWords(provider: { toleranceSec?: number }): string {
  const sec = windowSec(provider);
  const [n, unit] = sec % 60 === 0 ? [sec / 60, 'minute'] : [sec, 'second'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** Why copies of one delivery were mishandled: a refused duplicate, or one stored again. */
export function duplicateDiagnosis(ctx: CheckContext, answers: readonly AttemptOutcome[], n: number | undefined): string {
  // Each diagnosis as the observation shows it: the first copy refused is no refused duplicate,
  // and nothing stored is no duplicate stored.
  const [first] = answers;
  if (first && !is2xx(first.status))
    return `your receiver answered ${answer(first)} to the first copy, a delivery it had not seen — not a duplicate's problem: see valid (is it flaky under a second request?)`;
  if (answers.some((a) => !is2xx(a.status)))
    return `your receiver refuses a copy of a delivery it already holds — the sender is asking "do you have it?": answer it 2xx, or ${retrySpan(ctx.provider) ? `${ctx.provider.title} retries what you have for ${retrySpan(ctx.provider)}` : 'it counts as a failed delivery'}`;
  if (n === 0) return storedWrongly(0);
  return `your receiver stores a copy of a delivery it already holds (${n} times): dedupe on ${ctx.provider.title}'s delivery id, not on the signature, the timestamp or the arrival`;
}

export function storedText(n: number | undefined): string {
  return n === undefined ? '' : n === 0 ? ', nothing stored' : `, stored ${n === 1 ? 'once' : `${n} times`}`;
}

export async function post(
  ctx: CheckContext,
  body: Buffer,
  headers: Record<string, string>,
  o: {
    /** The body written in these pieces, as a sender's chunks arrive. */
    pieces?: readonly Buffer[];
    /** A request that must be refused: waited on for refusalTimeoutMs, not the provider's timeout. */
    refusal?: boolean;
    /** The answer's body read up to 4 KiB, not 200 bytes: it is judged (Discord's interaction response). */
    readAnswer?: boolean;
    /** Posted to this URL, not ctx.url: the receiver's with a query added (Graph's ?validationToken=…). */
    url?: URL;
    /** The answer's deadline where it is not the provider's timeout (a handshake's own: Graph's validation, 10 s). */
    deadlineMs?: number;
    /**
     * The body already holds its field signature as the case wrote it, item by item (forged-item's
     * one wrong clientState among right ones): sent as it is, not placed again.
     */
    placed?: boolean;
  } = {},
): Promise<AttemptOutcome> {
  // A signature that is a field of the body goes into it now, as send puts it there: SNS's by its
  // placeSignature, Mailgun's by asSent (a provider has one or neither, so the order does not matter).
  const placed = ctx.provider.placeSignature && !o.placed ? ctx.provider.placeSignature(body, headers) : { body, headers };
  // What the signing added to the URL (Twilio's bodySHA256) goes into it now, as send puts it there.
  const to = placeQuery(ctx.provider, o.url ?? ctx.url, placed.headers);
  const sent = o.placed ? { body: placed.body, headers: to.headers } : asSent(ctx.provider, placed.body, to.headers);
  // Outside the signature, as a proxy's header would be: no verifier reads it, and a store keeps it.
  const marked = {
    ...forwardedHeaders(ctx),
    ...providerCased(ctx.provider, sent.headers),
    ...(ctx.forward ? forwardMarksFor(ctx.provider, sent.headers, sent.body, ctx.forward.attempts) : {}),
    [CHECK_HEADER]: ctx.runId,
  };
  const pieces =
    !o.pieces || sent.body === body
      ? o.pieces
      : ctx.provider.placeSignature
        ? recutAt(sent.body, o.pieces)
        : recut(o.pieces, body, sent.body);
  const res = await attempt({
    url: to.url,
    headers: marked,
    body: sent.body,
    timeoutMs: o.deadlineMs ?? (o.refusal ? ctx.refusalTimeoutMs : ctx.timeoutMs),
    maxRedirects: 0,
    dispatcher: ctx.dispatcher,
    ...(pieces ? { pieces } : {}),
    ...(ctx.interrupt ? { interrupt: ctx.interrupt } : {}),
    ...(o.readAnswer ? { wire: true } : {}),
  });
  ctx.onAnswer?.(res);
  // A --timeout longer than the provider's must not let a slow answer pass: the provider would
  // have given up on it, so for the verdict it is a timeout (through a route: listen's forwarder would).
  const deadlineMs = o.deadlineMs ?? ctx.providerTimeoutMs;
  if (res.status !== undefined && res.latencyMs > deadlineMs) {
    return {
      ...res,
      status: undefined,
      error: 'timeout',
      detail: `answered ${res.status} after ${Math.round(res.latencyMs)}ms, past ${ctx.forward ? "listen's forward timeout" : "the provider's"} ${deadlineMs}ms`,
    };
  }
  return res;
}

/**
 * The pieces of `body` as cuts of `sent`, where a signature written into the body (Mailgun's) changed
 * its start: each cut moved by the length the body gained, so it falls inside the same character.
 */
function recut(pieces: readonly Buffer[], body: Buffer, sent: Buffer): readonly Buffer[] {
  if (sent === body) return pieces;
  const delta = sent.length - body.length;
  const out: Buffer[] = [];
  let from = 0;
  let at = 0;
  for (const piece of pieces) {
    at += piece.length;
    const end = at === body.length ? sent.length : at + delta;
    // A cut before the written signature ends, or where the rest of the body differs, cannot be moved: sent as one.
    if (end <= from || !body.subarray(at).equals(sent.subarray(end))) return [sent];
    out.push(sent.subarray(from, end));
    from = end;
  }
  return out;
}

/** A body cut where `pieces` cut the one it replaced (a signature put in keeps every offset), the rest in the last piece. */
function recutAt(body: Buffer, pieces: readonly Buffer[]): Buffer[] {
  const out: Buffer[] = [];
  let at = 0;
  for (const [i, p] of pieces.entries()) {
    const end = i === pieces.length - 1 ? body.length : Math.min(body.length, at + p.length);
    out.push(body.subarray(at, end));
    at = end;
  }
  return out;
}

export function answer(o: AttemptOutcome): string {
  return o.status !== undefined ? String(o.status) : (o.error ?? 'no answer');
}

/** "nothing stored" / "stored" / "" (no store given), and whether that is a failure. */
export async function storedCount(ctx: CheckContext, id: string): Promise<number | undefined> {
  return (await ctx.storedCounts([id]))?.[0];
}

export async function mustNotStore(ctx: CheckContext, id: string): Promise<{ text: string; bad: boolean }> {
  const n = await storedCount(ctx, id);
  if (n === undefined) return { text: '', bad: false };
  return n === 0 ? { text: ', nothing stored', bad: false } : { text: `, but STORED ${id}`, bad: true };
}

/** A request the receiver must refuse with 4xx and must not store. */
export function rejection(
  name: string,
  summary: string,
  make: (ctx: CheckContext, e: PreparedEvent) => { body: Buffer; headers: Record<string, string> },
  /** The defect, in a developer's words, when the receiver took the request. */
  defect: (ctx: CheckContext) => string,
  skipFor?: CheckCase['skipFor'],
): CheckCase {
  return {
    name,
    summary,
    ...(skipFor ? { skipFor } : {}),
    // A receiver that takes another secret's signature (or stores before it verifies) takes every
    // forgery: one finding, wrong-secret, not one per forgery.
    needs: name === 'wrong-secret' ? NEEDS_ANSWERED : NEEDS_SIGNATURE,
    async run(ctx) {
      const event = ctx.factory.make(Date.now());
      const req = make(ctx, event);
      const res = await post(ctx, req.body, req.headers, { refusal: true });
      const stored = await mustNotStore(ctx, event.deliveryId);
      const discarded = discardJudged(ctx, res, stored);
      if (discarded) return discarded;
      const ok = is4xx(res.status) && !stored.bad;
      if (ok) return { status: 'pass', observed: `${answer(res)}${stored.text}` };
      const diagnosis =
        is4xx(res.status) && stored.bad
          ? 'your receiver stores a delivery before it verifies the signature: verify the raw bytes first, then store'
          : is2xx(res.status)
            ? defect(ctx)
            : `a forged or damaged request must get 4xx (a refusal the sender does not retry); it got ${answer(res)}`;
      return { status: 'fail', observed: `${answer(res)}${stored.text} (expected 4xx, nothing stored)`, diagnosis };
    },
  };
}

/**
 * A refusal by discarding (the contract's `refusal`, Microsoft Graph's): a 2xx is the right answer
 * to a forged delivery too, so the store alone tells a refusal from a forgery taken — and with no
 * store to look at, a 2xx is neither. Undefined where the provider refuses with a 4xx, or the
 * answer was no 2xx (judged as any refusal).
 */
function discardJudged(ctx: CheckContext, res: AttemptOutcome, stored: { text: string; bad: boolean }): CaseOutcome | undefined {
  const r = ctx.provider.contract.refusal;
  if (r?.kind !== 'discard' || !is2xx(res.status)) return undefined;
  if (stored.bad)
    return {
      status: 'fail',
      observed: `${answer(res)}${stored.text} (expected it discarded: nothing stored)`,
      diagnosis: `your receiver keeps a forged delivery: a 2xx is right (${r.what}), but only after checking and dropping it — compare ${ctx.provider.signatureHeader} with your secret, in constant time, before anything is stored`,
    };
  if (stored.text === '')
    return {
      status: 'warn',
      observed: `${answer(res)}: ${ctx.provider.title} takes a 2xx for a forged delivery too (${r.what})`,
      diagnosis: 'whether it was discarded is seen only in the store: give --stored or --inbox',
    };
  return { status: 'pass', observed: `${answer(res)}${stored.text}: discarded, as ${ctx.provider.title} asks (${r.what})` };
}

/** How long after a 2xx the store is looked at again, when nothing was there at the 2xx: a few seconds in all. */
const LATE_LOOKS_MS = [100, 200, 400, 800, 1_500];

/**
 * A delivery answered 2xx but not in the store: is it there shortly after? A receiver that answers
 * first and stores in the background (Go's `go save()`) shows its row a few ms to a second later —
 * its defect is the order, not a lost store or another key. True when the row appeared.
 */
export async function storedLater(ctx: CheckContext, id: string): Promise<boolean> {
  for (const ms of LATE_LOOKS_MS) {
    if (ctx.interrupt?.aborted) return false;
    await sleep(ms);
    if (((await storedCount(ctx, id)) ?? 0) > 0) return true;
  }
  return false;
}

/** The finding for a delivery that was stored only after its 2xx. */
export function answeredBeforeStoring(ctx: CheckContext, what = 'the delivery'): string {
  const t = ctx.provider.title;
  return `your receiver answered 2xx before storing ${what}: nothing was stored when the 2xx came, and it appeared shortly after — a crash or deploy between the two loses a delivery ${t} was told was taken and will not send again: store it (or queue it durably), then answer`;
}

/**
 * Why a delivery answered 2xx is not in the store: stored after the answer (looked for again
 * shortly after), or not at all (or under another id).
 */
export async function notStoredDiagnosis(ctx: CheckContext, id: string, what?: string): Promise<{ diagnosis: string; late: boolean }> {
  if (await storedLater(ctx, id)) return { diagnosis: answeredBeforeStoring(ctx, what), late: true };
  return { diagnosis: storedWrongly(0, what), late: false };
}

/** Why a delivery answered 2xx is mishandled all the same: not stored (n is 0), or stored more than once. */
export function storedWrongly(n: number | undefined, what = 'the delivery'): string {
  return n === 0
    ? `your receiver answers 2xx but does not store ${what} (or stores it under another id than the delivery id)`
    : 'your receiver stores one delivery more than once';
}

/** A delivery the provider really sends, which must get 2xx and be stored once. */
export async function mustAccept(
  ctx: CheckContext,
  e: PreparedEvent,
  headers: Record<string, string>,
  body = e.rawBody,
  pieces?: readonly Buffer[],
) {
  const res = await post(ctx, body, headers, pieces ? { pieces } : {});
  const n = await storedCount(ctx, e.deliveryId);
  const ok = is2xx(res.status) && (n === undefined || n === 1);
  return { res, n, ok, text: `${answer(res)}${storedText(n)}` };
}

/** An event of the provider's made from a shipped fixture (or its default one), optionally of an unknown type. */
export function eventsOfOtherTypes(ctx: CheckContext): EventFactory[] {
  const p = ctx.provider;
  const others = listShippedFixtures()
    .filter((f) => f.provider === p.name && f.name !== ctx.factory.fixture.name)
    .map((f) => loadFixtureFile(f.path, p.name))
    // An endpoint check (Slack's url_verification) and a form (a slash command, an interaction:
    // answered, not stored, by design) are requests of their own kind, with cases of their own.
    .filter((f) => p.challengeAnswer?.(Buffer.from(JSON.stringify(f.body))) === undefined && !(FORM_KEY in f.body) && !p.isNotice?.(f.body))
    // A handshake (SNS's SubscriptionConfirmation) is completed, not stored: a case of its own.
    .filter((f) => p.handshakeVisit?.(Buffer.from(JSON.stringify(f.body))) === undefined)
    .filter((f) => p.subscriptionKind?.(f.body) === p.subscriptionKind?.(ctx.factory.fixture.body))
    .map((f) => compileFixture(p, f, [], undefined, ctx.contentType));
  // From the catalogue, a spread of its types (every k-th, CATALOGUE_SAMPLE in all): the receiver
  // meets event kinds it was never written for, as it will in production.
  // Not Stripe's thin events: an event destination receives snapshot or thin payloads, never both,
  // and this battery judges a snapshot endpoint (constructEvent refuses a thin one, by design).
  // Nor an endpoint check (Discord's PING): it has a case of its own and is never stored.
  const forward = ctx.forward;
  const takes = (f: EventFactory) => forward === undefined || routeTakes(forward.route, f.make(Date.now()).eventType);
  const catalogue = (catalogueOf(p.name)?.events ?? []).filter(
    (e) =>
      !others.some((f) => f.fixture.name === e.name) &&
      // Through a route, the spread is over the types it takes (listen forwards no other to its target).
      (forward === undefined || (e.name !== ctx.factory.fixture.name && routeTakes(forward.route, e.eventType))) &&
      e.body.object !== 'v2.core.event' &&
      p.challengeAnswer?.(Buffer.from(JSON.stringify(e.body))) === undefined,
  );
  const step = Math.max(1, Math.floor(catalogue.length / CATALOGUE_SAMPLE));
  const sampled = catalogue
    .filter((_, i) => i % step === 0)
    .slice(0, CATALOGUE_SAMPLE)
    .map((e) => compileFixture(p, catalogueFixture(p.name, e), [], undefined, ctx.contentType));
  const u = p.verifier.unknownType;
  const overrides: FieldOverride[] = 'path' in u ? [{ path: [...u.path], value: u.value, text: u.path.join('.') }] : [];
  const unknown = compileFixture(p, ctx.factory.fixture, overrides, 'eventName' in u ? u.eventName : undefined, ctx.contentType);
  // Through a route, only the types it takes: listen forwards no other to its target.
  return [...others, ...sampled, unknown].filter(takes);
}

/** How many catalogue types other-types sends beside the shipped ones. */
export const CATALOGUE_SAMPLE = 20;

/**
 * The body of `e` with one more top-level field, written as the provider writes its bodies
 * (Stripe's pretty-printed, everyone else's compact): the text before that field's string value
 * and the text after it, so a large value can be put between them without serialising it again.
 * A body that is not a JSON object (a form) is grown at its end, as it is.
 */
function around(provider: Provider, e: PreparedEvent, field: string): { head: string; tail: string } {
  const text = e.rawBody.toString('utf8');
  const payload = formPayloadOf(provider, e.rawBody);
  let body: unknown;
  try {
    body = JSON.parse(payload ?? text);
  } catch {
    body = undefined;
  }
  // A list of events (HubSpot's body): the field goes in the first, so the body is still the JSON it was.
  const list = Array.isArray(body) && typeof body[0] === 'object' && body[0] !== null && !Array.isArray(body[0]);
  if (!list && (typeof body !== 'object' || body === null || Array.isArray(body))) {
    const end = text.lastIndexOf('}');
    return { head: `${text.slice(0, end < 0 ? text.length : end)},"${field}":"`, tail: '"}' };
  }
  // Letters, digits and `-` only: a form encodes it as it is, so it can be found in either.
  const mark = `hookdrill-${field}-value`;
  const withField = list
    ? serialized(provider, [{ ...(body as JsonObject[])[0], [field]: mark }, ...(body as JsonObject[]).slice(1)])
    : serialized(provider, { ...(body as JsonObject), [field]: mark });
  const out = likeBody(provider, e.rawBody, withField);
  const at = out.lastIndexOf(`"${mark}"`);
  return { head: out.slice(0, at + 1), tail: out.slice(at + mark.length + 1) };
}

export { serialized };

/** The JSON inside a form body (`payload=<the JSON>`, a GitHub hook set to form), or undefined for any other body. */
export function formPayloadOf(provider: Provider, rawBody: Buffer): string | undefined {
  return provider.formPayload ? formPayloadJson(rawBody) : undefined;
}

/** `json` as a body of the kind `rawBody` is: inside the same `payload=` form where it was one, else as it is. */
export function likeBody(provider: Provider, rawBody: Buffer, json: string): string {
  return provider.formPayload && formPayloadJson(rawBody) !== undefined ? provider.formPayload(json) : json;
}

/**
 * `e` with another body (grown, or of other text) as the same delivery. Where the provider reads
 * the delivery id from the body's bytes themselves (Postmark sends none, so a record is keyed by
 * its hash), the new body is a new delivery with its own id; a body-held id field stays as it was.
 */
export function withBody(provider: Provider, e: PreparedEvent, rawBody: Buffer): PreparedEvent {
  const fromBytes = provider.deliveryId({}, e.rawBody) === e.deliveryId;
  const id = fromBytes ? (provider.deliveryId({}, rawBody) ?? e.deliveryId) : e.deliveryId;
  return { ...e, rawBody, deliveryId: id };
}

/** The body of `e` grown to about `bytes` with a padding field: still the JSON object it was, written as the provider writes it. */
export function padded(provider: Provider, e: PreparedEvent, bytes: number): Buffer {
  const { head, tail } = around(provider, e, 'hookdrill_padding');
  const pad = Math.max(0, bytes - Buffer.byteLength(head) - Buffer.byteLength(tail));
  return Buffer.from(`${head}${'x'.repeat(pad)}${tail}`);
}

export const mib = (bytes: number) =>
  bytes >= 1_000_000 && bytes % 1_000_000 === 0 ? `${bytes / 1_000_000} MB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** Characters of 4 bytes in UTF-8 (an emoji, a musical symbol), one of which sits across each cut. */
const ACROSS = ['\u{1F600}', '\u{1F389}', '\u{1D11E}'];

/**
 * `gap` bytes of text: 2- and 3-byte characters (Cyrillic, Latin, CJK), and ASCII only where
 * needed to come out exact. Nothing JSON escapes: the text is the string value's bytes as they are.
 */
function multibyteText(gap: number): string {
  let out = '';
  let left = gap;
  if (left >= 10) {
    out += '\u0436'; // ж, 2 bytes
    left -= 2;
  }
  const rem = left % 3;
  out += rem === 1 ? 'a' : rem === 2 ? '\u00e9' : '';
  left -= rem;
  const cjk = '\u6f22\u5b57\u306e'; // 漢字の, 3 bytes each
  return out + cjk.repeat(Math.floor(left / 9)) + cjk.slice(0, (left % 9) / 3);
}

/**
 * The body of `e` grown to about `bytes` with a field of multi-byte text laid out so that a 4-byte
 * character straddles every `every`-th byte of the body (1 KiB: so every read size a receiver's
 * stack uses — 1, 4, 8, 16, 64 KiB — splits one). Returns the body and its cuts there, so it can be
 * sent in pieces that split those characters as a network's segments would.
 */
export function straddling(
  provider: Provider,
  e: PreparedEvent,
  bytes: number,
  every: number,
  /** false: the same kind of text, laid out so that every cut falls between two characters. */
  across = true,
): { body: Buffer; pieces: Buffer[] } {
  const { head, tail } = around(provider, e, 'hookdrill_text');
  let pos = Buffer.byteLength(head);
  let text = '';
  let n = 0;
  for (let cut = every; cut < bytes; cut += every) {
    if (cut - 2 < pos) continue;
    if (!across) {
      text += multibyteText(cut - pos);
      pos = cut;
      continue;
    }
    text += multibyteText(cut - 2 - pos) + (ACROSS[n++ % ACROSS.length] as string);
    pos = cut + 2;
  }
  const body = Buffer.from(`${head}${text}${tail}`);
  const pieces: Buffer[] = [];
  for (let at = 0; at < body.length; at += PIECE_BYTES) pieces.push(body.subarray(at, Math.min(body.length, at + PIECE_BYTES)));
  return { body, pieces };
}

/** The multi-byte body's size: under the 64 KiB limits some receivers set (large-body judges limits), over every read size. */
export const MULTIBYTE_BODY_BYTES = 60 * 1024;
/** Its pieces on the wire: each one ends inside a character. */
const PIECE_BYTES = 4 * 1024;

/** A large valid body every receiver must take ("several MiB"); where the provider documents a maximum, one just under it too. */
export const LARGE_BODY_BYTES = 4 * 1024 * 1024;

export const sigHeader = (ctx: CheckContext) => ctx.provider.signatureHeader.toLowerCase();

/** The legacy signature header the provider still sends beside the verified one (GitHub's X-Hub-Signature), lower-cased, if any. */
export const legacyHeader = (ctx: CheckContext) => ctx.provider.verifier.legacySignature?.header.toLowerCase();

/**
 * The headers with every signature the provider sends removed: the verified one and, where the
 * provider still sends a legacy one beside it, that one too — an unsigned request carries neither,
 * and a receiver that verifies only the legacy one rightly refuses it.
 */
export function withoutSignatures(ctx: CheckContext, headers: Record<string, string>): Record<string, string> {
  const out = { ...headers };
  delete out[sigHeader(ctx)];
  const legacy = legacyHeader(ctx);
  if (legacy) delete out[legacy];
  return out;
}

/** The headers with every signature the provider sends (the verified one, and any legacy one) passed through `edit`. */
export function withSignaturesEdited(
  ctx: CheckContext,
  headers: Record<string, string>,
  edit: (value: string, header: string) => string,
): Record<string, string> {
  const out = { ...headers };
  for (const h of [sigHeader(ctx), legacyHeader(ctx)]) if (h !== undefined && out[h] !== undefined) out[h] = edit(out[h] ?? '', h);
  return out;
}

/** The provider's shipped form-encoded fixtures (Slack's slash command and interactions). */
export function formFixtures(ctx: CheckContext): EventFactory[] {
  return (
    listShippedFixtures()
      .filter((f) => f.provider === ctx.provider.name)
      .map((f) => loadFixtureFile(f.path, ctx.provider.name))
      .filter((f) => FORM_KEY in f.body)
      .map((f) => compileFixture(ctx.provider, f, []))
      // Not Slack's ssl_check: sent unsigned, it is no signed form request (and bolt's receivers differ on it).
      .filter((f) => !ctx.provider.unsignedCheck?.(f.make(Date.now()).rawBody, { 'content-type': 'application/x-www-form-urlencoded' }))
  );
}
