import { catalogueOf } from '../../fixtures/catalogue/index.js';
import { FORM_KEY, compileFixture, listShippedFixtures, loadFixtureFile } from '../../fixtures/index.js';
import type { EventFactory, FieldOverride, PreparedEvent } from '../../fixtures/index.js';
import type { OutgoingHeaders, Provider, RetryReason } from '../../providers/index.js';
import { attempt } from '../../delivery/attempt.js';
import type { AttemptOutcome } from '../../delivery/attempt.js';
import type { TargetDispatcher } from '../../delivery/dispatcher.js';
import { CHECK_HEADER } from '../../inbox/types.js';

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
}

export interface CheckContext {
  provider: Provider;
  secrets: readonly string[];
  url: URL;
  /** Per attempt: a receiver that hangs costs each case this long, not the provider's full timeout. */
  timeoutMs: number;
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
}

export interface CheckCase {
  name: string;
  summary: string;
  /** Why the case cannot apply to this provider (known before anything is sent), if it cannot. */
  skipFor?(provider: Provider): string | undefined;
  run(ctx: CheckContext): Promise<CaseOutcome>;
}

/** The timestamp cases need a provider that signs a timestamp (GitHub and Shopify do not). */
export const needsTimestamp = (p: Provider) => (p.timestamped ? undefined : `${p.title} signs no timestamp`);

export const is2xx = (s?: number) => s !== undefined && s >= 200 && s < 300;
export const is4xx = (s?: number) => s !== undefined && s >= 400 && s < 500;

export function lower(headers: OutgoingHeaders): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

export function sign(
  ctx: CheckContext,
  event: PreparedEvent,
  opts: { nowMs?: number; secrets?: readonly string[]; retry?: number; retryReason?: RetryReason } = {},
): Record<string, string> {
  const headers = ctx.provider.sign(event.rawBody, opts.secrets ?? ctx.secrets, {
    nowMs: opts.nowMs ?? Date.now(),
    deliveryId: event.deliveryId,
    eventType: event.eventType,
  });
  // A retry carries what the provider adds to retries (Slack: X-Slack-Retry-Num and -Reason).
  if (opts.retry && ctx.provider.retryHeaders)
    Object.assign(headers, ctx.provider.retryHeaders(opts.retry, opts.retryReason ?? 'http_timeout'));
  return lower(headers);
}

/** A secret the receiver does not know, of the provider's shape. */
export const stranger = (ctx: CheckContext) => ctx.provider.otherSecret(ctx.secrets[0] ?? '');

/**
 * Copy i of a delivery as the provider would send it: re-signed i seconds apart, so where the
 * provider signs a timestamp each copy's signature differs, as real retries' do. A receiver that
 * deduplicates on the signature instead of the delivery id stores every copy.
 */
export function copySignedSecondsApart(ctx: CheckContext, event: PreparedEvent, i: number, copies: number): Record<string, string> {
  return sign(ctx, event, { nowMs: Date.now() - (copies - 1 - i) * 1_000 });
}

/** Why copies of one delivery were mishandled: a refused duplicate, or one stored again. */
export function duplicateDiagnosis(ctx: CheckContext, answers: readonly AttemptOutcome[], n: number | undefined): string {
  if (answers.some((a) => !is2xx(a.status)))
    return 'your receiver refuses a copy of a delivery it already holds — the sender is asking "do you have it?": answer it 2xx, or it retries what you have for days';
  return `your receiver stores a copy of a delivery it already holds (${n} times): dedupe on ${ctx.provider.title}'s delivery id, not on the signature, the timestamp or the arrival`;
}

export function storedText(n: number | undefined): string {
  return n === undefined ? '' : n === 0 ? ', nothing stored' : `, stored ${n === 1 ? 'once' : `${n} times`}`;
}

export async function post(ctx: CheckContext, body: Buffer, headers: Record<string, string>): Promise<AttemptOutcome> {
  // Outside the signature, as a proxy's header would be: no verifier reads it, and a store keeps it.
  const marked = { ...headers, [CHECK_HEADER]: ctx.runId };
  const res = await attempt({ url: ctx.url, headers: marked, body, timeoutMs: ctx.timeoutMs, maxRedirects: 0, dispatcher: ctx.dispatcher });
  ctx.onAnswer?.(res);
  // A --timeout longer than the provider's must not let a slow answer pass: the provider would
  // have given up on it, so for the verdict it is a timeout.
  if (res.status !== undefined && res.latencyMs > ctx.providerTimeoutMs) {
    return {
      ...res,
      status: undefined,
      error: 'timeout',
      detail: `answered ${res.status} after ${Math.round(res.latencyMs)}ms, past the provider's ${ctx.providerTimeoutMs}ms`,
    };
  }
  return res;
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
    async run(ctx) {
      const event = ctx.factory.make(Date.now());
      const req = make(ctx, event);
      const res = await post(ctx, req.body, req.headers);
      const stored = await mustNotStore(ctx, event.deliveryId);
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

/** A delivery the provider really sends, which must get 2xx and be stored once. */
export async function mustAccept(ctx: CheckContext, e: PreparedEvent, headers: Record<string, string>, body = e.rawBody) {
  const res = await post(ctx, body, headers);
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
    .filter((f) => p.challengeAnswer?.(Buffer.from(JSON.stringify(f.body))) === undefined && !(FORM_KEY in f.body))
    .map((f) => compileFixture(p, f, []));
  // From the catalogue, a spread of its types (every k-th, CATALOGUE_SAMPLE in all): the receiver
  // meets event kinds it was never written for, as it will in production.
  const catalogue = (catalogueOf(p.name)?.events ?? []).filter((e) => !others.some((f) => f.fixture.name === e.name));
  const step = Math.max(1, Math.floor(catalogue.length / CATALOGUE_SAMPLE));
  const sampled = catalogue
    .filter((_, i) => i % step === 0)
    .slice(0, CATALOGUE_SAMPLE)
    .map((e) =>
      compileFixture(
        p,
        { name: e.name, eventType: e.eventType, path: `catalogue:${p.name}/${e.name}`, provider: p.name, body: structuredClone(e.body) },
        [],
      ),
    );
  const u = p.verifier.unknownType;
  const overrides: FieldOverride[] = 'path' in u ? [{ path: [...u.path], value: u.value, text: u.path.join('.') }] : [];
  const unknown = compileFixture(p, ctx.factory.fixture, overrides, 'eventName' in u ? u.eventName : undefined);
  return [...others, ...sampled, unknown];
}

/** How many catalogue types other-types sends beside the shipped ones. */
export const CATALOGUE_SAMPLE = 20;

/** The body of `e` grown to about `bytes` with a padding field: still the JSON object it was. */
export function padded(e: PreparedEvent, bytes: number): Buffer {
  const json = e.rawBody.toString('utf8');
  const pad = Math.max(0, bytes - e.rawBody.length - 32);
  return Buffer.from(`${json.slice(0, -1)},"hookdrill_padding":"${'x'.repeat(pad)}"}`);
}

export const mib = (bytes: number) =>
  bytes >= 1_000_000 && bytes % 1_000_000 === 0 ? `${bytes / 1_000_000} MB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** A large valid body every receiver must take ("several MiB"); where the provider documents a maximum, one just under it too. */
export const LARGE_BODY_BYTES = 4 * 1024 * 1024;

export const sigHeader = (ctx: CheckContext) => ctx.provider.signatureHeader.toLowerCase();

/** The provider's shipped form-encoded fixtures (Slack's slash command and interactions). */
export function formFixtures(ctx: CheckContext): EventFactory[] {
  return listShippedFixtures()
    .filter((f) => f.provider === ctx.provider.name)
    .map((f) => loadFixtureFile(f.path, ctx.provider.name))
    .filter((f) => FORM_KEY in f.body)
    .map((f) => compileFixture(ctx.provider, f, []));
}
