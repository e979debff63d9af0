import { connect } from 'node:net';
import { compileFixture, listShippedFixtures, loadFixtureFile } from '../fixtures.js';
import type { EventFactory, FieldOverride, PreparedEvent } from '../fixtures.js';
import type { OutgoingHeaders, Provider, RetryReason } from '../providers/index.js';
import { attempt } from '../delivery/attempt.js';
import type { AttemptOutcome } from '../delivery/attempt.js';
import type { TargetDispatcher } from '../delivery/dispatcher.js';
import { percentile } from '../stats.js';
import { hostAndPort } from '../options.js';
import { sleep } from '../wait.js';

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
}

export interface CheckCase {
  name: string;
  summary: string;
  /** Why the case cannot apply to this provider (known before anything is sent), if it cannot. */
  skipFor?(provider: Provider): string | undefined;
  run(ctx: CheckContext): Promise<CaseOutcome>;
}

/** The timestamp cases need a provider that signs a timestamp (GitHub and Shopify do not). */
const needsTimestamp = (p: Provider) => (p.timestamped ? undefined : `${p.title} signs no timestamp`);

const is2xx = (s?: number) => s !== undefined && s >= 200 && s < 300;
const is4xx = (s?: number) => s !== undefined && s >= 400 && s < 500;

function lower(headers: OutgoingHeaders): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
}

function sign(
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
const stranger = (ctx: CheckContext) => ctx.provider.otherSecret(ctx.secrets[0] ?? '');

/**
 * Copy i of a delivery as the provider would send it: re-signed i seconds apart, so where the
 * provider signs a timestamp each copy's signature differs, as real retries' do. A receiver that
 * deduplicates on the signature instead of the delivery id stores every copy.
 */
function copySignedSecondsApart(ctx: CheckContext, event: PreparedEvent, i: number, copies: number): Record<string, string> {
  return sign(ctx, event, { nowMs: Date.now() - (copies - 1 - i) * 1_000 });
}

/** Why copies of one delivery were mishandled: a refused duplicate, or one stored again. */
function duplicateDiagnosis(ctx: CheckContext, answers: readonly AttemptOutcome[], n: number | undefined): string {
  if (answers.some((a) => !is2xx(a.status)))
    return 'your receiver refuses a copy of a delivery it already holds — the sender is asking "do you have it?": answer it 2xx, or it retries what you have for days';
  return `your receiver stores a copy of a delivery it already holds (${n} times): dedupe on ${ctx.provider.title}'s delivery id, not on the signature, the timestamp or the arrival`;
}

function storedText(n: number | undefined): string {
  return n === undefined ? '' : n === 0 ? ', nothing stored' : `, stored ${n === 1 ? 'once' : `${n} times`}`;
}

async function post(ctx: CheckContext, body: Buffer, headers: Record<string, string>): Promise<AttemptOutcome> {
  const res = await attempt({ url: ctx.url, headers, body, timeoutMs: ctx.timeoutMs, maxRedirects: 0, dispatcher: ctx.dispatcher });
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

function answer(o: AttemptOutcome): string {
  return o.status !== undefined ? String(o.status) : (o.error ?? 'no answer');
}

/** "nothing stored" / "stored" / "" (no store given), and whether that is a failure. */
async function storedCount(ctx: CheckContext, id: string): Promise<number | undefined> {
  return (await ctx.storedCounts([id]))?.[0];
}

async function mustNotStore(ctx: CheckContext, id: string): Promise<{ text: string; bad: boolean }> {
  const n = await storedCount(ctx, id);
  if (n === undefined) return { text: '', bad: false };
  return n === 0 ? { text: ', nothing stored', bad: false } : { text: `, but STORED ${id}`, bad: true };
}

/** A request the receiver must refuse with 4xx and must not store. */
function rejection(
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
async function mustAccept(ctx: CheckContext, e: PreparedEvent, headers: Record<string, string>, body = e.rawBody) {
  const res = await post(ctx, body, headers);
  const n = await storedCount(ctx, e.deliveryId);
  const ok = is2xx(res.status) && (n === undefined || n === 1);
  return { res, n, ok, text: `${answer(res)}${storedText(n)}` };
}

/** An event of the provider's made from a shipped fixture (or its default one), optionally of an unknown type. */
function eventsOfOtherTypes(ctx: CheckContext): EventFactory[] {
  const p = ctx.provider;
  const others = listShippedFixtures()
    .filter((f) => f.provider === p.name && f.name !== ctx.factory.fixture.name)
    .map((f) => loadFixtureFile(f.path, p.name))
    // An endpoint check (Slack's url_verification) is an event of its own kind: its own case.
    .filter((f) => p.challengeAnswer?.(Buffer.from(JSON.stringify(f.body))) === undefined)
    .map((f) => compileFixture(p, f, []));
  const u = p.verifier.unknownType;
  const overrides: FieldOverride[] = 'path' in u ? [{ path: [...u.path], value: u.value, text: u.path.join('.') }] : [];
  const unknown = compileFixture(p, ctx.factory.fixture, overrides, 'eventName' in u ? u.eventName : undefined);
  return [...others, unknown];
}

/** The body of `e` grown to about `bytes` with a padding field: still the JSON object it was. */
function padded(e: PreparedEvent, bytes: number): Buffer {
  const json = e.rawBody.toString('utf8');
  const pad = Math.max(0, bytes - e.rawBody.length - 32);
  return Buffer.from(`${json.slice(0, -1)},"hookdrill_padding":"${'x'.repeat(pad)}"}`);
}

const mib = (bytes: number) =>
  bytes >= 1_000_000 && bytes % 1_000_000 === 0 ? `${bytes / 1_000_000} MB` : `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** A large valid body every receiver must take ("several MiB"); where the provider documents a maximum, one just under it too. */
export const LARGE_BODY_BYTES = 4 * 1024 * 1024;

const sigHeader = (ctx: CheckContext) => ctx.provider.signatureHeader.toLowerCase();

export const CASES: readonly CheckCase[] = [
  {
    name: 'valid',
    summary: "a valid delivery gets 2xx within the provider's timeout, and is stored",
    async run(ctx) {
      const e = ctx.factory.make(Date.now());
      const res = await post(ctx, e.rawBody, sign(ctx, e));
      const n = await storedCount(ctx, e.deliveryId);
      const ok = is2xx(res.status) && (n === undefined || n === 1);
      const observed = `${answer(res)} in ${Math.round(res.latencyMs)}ms${n === undefined ? '' : n === 1 ? ', stored' : `, stored ${n} times`}`;
      if (ok) return { status: 'pass', observed };
      return {
        status: 'fail',
        observed,
        diagnosis: is2xx(res.status)
          ? n === 0
            ? 'your receiver answers 2xx but does not store the delivery (or stores it under another id than the delivery id)'
            : 'your receiver stores one delivery more than once'
          : `your receiver refuses a valid delivery signed as ${ctx.provider.title} signs it: is the secret right, and is the signature checked over the raw bytes?`,
      };
    },
  },
  {
    name: 'duplicate',
    summary: 'the same delivery again (re-signed, as the provider would) gets 2xx and is stored once',
    async run(ctx) {
      const e = ctx.factory.make(Date.now());
      const first = await post(ctx, e.rawBody, copySignedSecondsApart(ctx, e, 0, 2));
      const second = await post(ctx, e.rawBody, copySignedSecondsApart(ctx, e, 1, 2));
      const n = await storedCount(ctx, e.deliveryId);
      const ok = is2xx(first.status) && is2xx(second.status) && (n === undefined || n === 1);
      const observed = `${answer(first)} then ${answer(second)}${storedText(n)}`;
      return ok ? { status: 'pass', observed } : { status: 'fail', observed, diagnosis: duplicateDiagnosis(ctx, [first, second], n) };
    },
  },
  {
    name: 'retry',
    summary: "a retry of a delivery, re-signed 1 s later with the provider's retry headers, gets 2xx and is stored once",
    async run(ctx) {
      const e = ctx.factory.make(Date.now());
      // What every real retry looks like: the same delivery id, a timestamp (and so a signature)
      // at least a second newer, and whatever the provider adds to retries.
      const firstAt = Date.now() - 1_000;
      const first = await post(ctx, e.rawBody, sign(ctx, e, { nowMs: firstAt }));
      const retry = await post(ctx, e.rawBody, sign(ctx, e, { nowMs: firstAt + 1_000, retry: 1 }));
      const n = await storedCount(ctx, e.deliveryId);
      const ok = is2xx(first.status) && is2xx(retry.status) && (n === undefined || n === 1);
      const observed = `${answer(first)}, then ${answer(retry)} to the retry${storedText(n)}`;
      return ok ? { status: 'pass', observed } : { status: 'fail', observed, diagnosis: duplicateDiagnosis(ctx, [first, retry], n) };
    },
  },
  {
    name: 'concurrent-duplicates',
    summary: '10 copies at once (each re-signed, as retries are) all get 2xx, and it is stored once',
    async run(ctx) {
      const e = ctx.factory.make(Date.now());
      const all = await Promise.all(Array.from({ length: 10 }, (_, i) => post(ctx, e.rawBody, copySignedSecondsApart(ctx, e, i, 10))));
      const n = await storedCount(ctx, e.deliveryId);
      const answers = all.map(answer);
      const ok = all.every((r) => is2xx(r.status)) && (n === undefined || n === 1);
      const counts = [...new Set(answers)].map((a) => `${answers.filter((x) => x === a).length}×${a}`).join(' ');
      const observed = `${counts}${storedText(n)}`;
      return ok ? { status: 'pass', observed } : { status: 'fail', observed, diagnosis: duplicateDiagnosis(ctx, all, n) };
    },
  },
  rejection(
    'wrong-secret',
    'signed with another secret: 4xx, nothing stored',
    (ctx, e) => ({ body: e.rawBody, headers: sign(ctx, e, { secrets: [stranger(ctx)] }) }),
    (ctx) =>
      `your receiver accepts a signature made with a secret it does not hold: it does not compare ${ctx.provider.signatureHeader} at all`,
  ),
  rejection(
    'flipped-byte',
    'one byte of the body changed after signing: 4xx, nothing stored',
    (ctx, e) => {
      const headers = sign(ctx, e);
      const body = Buffer.from(e.rawBody);
      // The last letter in the body, case flipped: still JSON, no longer what was signed.
      for (let i = body.length - 1; i >= 0; i--) {
        const c = body[i] as number;
        if ((c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a)) {
          body[i] = c ^ 0x20;
          break;
        }
      }
      return { body, headers };
    },
    () => 'your receiver accepts a body changed after signing: the signature is not checked against the bytes received',
  ),
  rejection(
    'reserialized',
    'the same JSON re-serialised (whitespace): 4xx — signatures cover bytes, not JSON',
    (ctx, e) => ({ body: Buffer.from(JSON.stringify(JSON.parse(e.rawBody.toString('utf8')), null, 2)), headers: sign(ctx, e) }),
    () =>
      'your receiver verifies a re-serialised copy of the JSON, not the raw bytes: read the body as bytes (express.raw, not express.json) and verify those',
  ),
  rejection(
    'missing-signature',
    'no signature header: 4xx, nothing stored',
    (ctx, e) => {
      const headers = sign(ctx, e);
      delete headers[sigHeader(ctx)];
      return { body: e.rawBody, headers };
    },
    (ctx) => `your receiver accepts a request with no ${ctx.provider.signatureHeader} at all: anyone can post to it`,
  ),
  rejection(
    'malformed-signature',
    'a signature header that does not parse: 4xx, nothing stored',
    (ctx, e) => ({ body: e.rawBody, headers: { ...sign(ctx, e), [sigHeader(ctx)]: 'hookdrill:not-a-signature' } }),
    (ctx) => `your receiver accepts a ${ctx.provider.signatureHeader} that holds no signature`,
  ),
  rejection(
    'wrong-length-signature',
    'the right signature(s), each two characters short: 4xx, nothing stored',
    (ctx, e) => {
      const headers = sign(ctx, e);
      // Every signature in the header, not only the last: with two secrets (rotation) the receiver
      // must not find the untouched one and rightly accept.
      headers[sigHeader(ctx)] = ctx.provider.verifier.editSignatures(headers[sigHeader(ctx)] ?? '', (sig) => sig.slice(0, -2));
      return { body: e.rawBody, headers };
    },
    () =>
      'your receiver accepts a signature that is only a prefix of the right one: compare the whole value (and its length) in constant time',
  ),
  rejection(
    'stale-timestamp',
    'signed 6 minutes ago (the tolerance is 5): 4xx, nothing stored',
    (ctx, e) => ({ body: e.rawBody, headers: sign(ctx, e, { nowMs: Date.now() - 360_000 }) }),
    (ctx) =>
      `your receiver accepts a signature 6 minutes old: a captured request can be replayed forever; refuse timestamps older than 5 minutes, as ${ctx.provider.verifier.official} does`,
    needsTimestamp,
  ),
  {
    name: 'future-timestamp',
    summary:
      "signed 6 minutes ahead: 4xx where the provider's own verifier refuses it (Standard Webhooks); Stripe's accepts it (a pass), Slack's bolt too though Slack's docs refuse it (a warning)",
    skipFor: needsTimestamp,
    async run(ctx) {
      const e = ctx.factory.make(Date.now());
      const res = await post(ctx, e.rawBody, sign(ctx, e, { nowMs: Date.now() + 360_000 }));
      const stored = await mustNotStore(ctx, e.deliveryId);
      const rule = ctx.provider.verifier.futureTimestamp;
      const official = ctx.provider.verifier.official;
      if (is4xx(res.status) && !stored.bad) return { status: 'pass', observed: `${answer(res)}${stored.text}` };
      if (is2xx(res.status) && rule === 'accepted')
        return { status: 'pass', observed: `${answer(res)}: accepted, as ${official} does (its tolerance is one-sided)` };
      if (is2xx(res.status) && rule === 'accepted-documented-refused')
        return {
          status: 'warn',
          observed: `${answer(res)}: accepted, as ${official} does`,
          diagnosis: `${ctx.provider.title}'s docs refuse a timestamp more than 5 minutes from now either way; the official library checks only the old side`,
        };
      return {
        status: 'fail',
        observed: `${answer(res)}${stored.text} (expected 4xx, nothing stored)`,
        diagnosis: is2xx(res.status)
          ? `your receiver accepts a timestamp 6 minutes in the future; ${official} refuses it ("too new"): check both sides of the 5-minute window`
          : `a request signed outside the window must get 4xx; it got ${answer(res)}`,
      };
    },
  },
  {
    name: 'rotation',
    summary:
      "while a secret is rolled the header holds two signatures (the receiver's and one by a secret it does not know), in either order: both 2xx, stored",
    skipFor: (p) => (p.rotation ? undefined : `${p.title} signs with one secret at a time`),
    async run(ctx) {
      const p = ctx.provider;
      const results: string[] = [];
      const refused: string[] = [];
      for (const [where, secrets] of [
        ['second', [stranger(ctx), ...ctx.secrets]],
        ['first', [...ctx.secrets, stranger(ctx)]],
      ] as const) {
        const e = ctx.factory.make(Date.now());
        const r = await mustAccept(ctx, e, sign(ctx, e, { secrets }));
        results.push(`${r.text} with its signature ${where}`);
        if (!r.ok) refused.push(where);
      }
      const observed = results.join('; ');
      if (refused.length === 0) return { status: 'pass', observed };
      const entry = p.name === 'stripe' ? 'v1= entries' : "'v1,' entries";
      return {
        status: 'fail',
        observed,
        diagnosis: `your receiver refuses a valid signature when ${p.signatureHeader} holds two ${entry} and its own is ${refused.length === 2 ? 'in either place' : `the ${refused[0]}`} — ${p.title} sends two while a secret is being rolled: try every entry`,
      };
    },
  },
  {
    name: 'other-schemes',
    summary: "beside the signature, an entry of another scheme (Stripe test mode's v0=, Standard Webhooks' v1a,) is ignored: 2xx, stored",
    skipFor: (p) => (p.verifier.withOtherScheme ? undefined : `${p.title}'s signature header holds one signature and nothing else`),
    async run(ctx) {
      const p = ctx.provider;
      const e = ctx.factory.make(Date.now());
      const headers = sign(ctx, e);
      headers[sigHeader(ctx)] = p.verifier.withOtherScheme?.(headers[sigHeader(ctx)] ?? '') ?? '';
      const r = await mustAccept(ctx, e, headers);
      if (r.ok) return { status: 'pass', observed: r.text };
      const what =
        p.name === 'stripe' ? 'a v0= entry — Stripe adds one to every test-mode delivery' : 'a v1a, entry — the spec reserves it';
      return {
        status: 'fail',
        observed: r.text,
        diagnosis: `your receiver refuses a valid delivery whose ${p.signatureHeader} also holds ${what}: ignore every scheme but the one you verify, as ${p.verifier.official} does`,
      };
    },
  },
  {
    name: 'large-body',
    summary: `a valid ${mib(LARGE_BODY_BYTES)} delivery (and one just under the provider's documented maximum, where it has one: GitHub 25 MB) gets 2xx and is stored`,
    async run(ctx) {
      const p = ctx.provider;
      const sizes = [LARGE_BODY_BYTES, ...(p.verifier.maxBodyBytes ? [p.verifier.maxBodyBytes - 100_000] : [])];
      const results: string[] = [];
      let refused: number | undefined;
      for (const size of sizes) {
        const base = ctx.factory.make(Date.now());
        const body = padded(base, size);
        const e = { ...base, rawBody: body };
        const r = await mustAccept(ctx, e, sign(ctx, e), body);
        results.push(`${r.text} to ${mib(body.length)}`);
        if (!r.ok && refused === undefined) refused = body.length;
      }
      const observed = results.join('; ');
      if (refused === undefined) return { status: 'pass', observed };
      const most = p.verifier.maxBodyBytes
        ? `${p.title} sends up to ${mib(p.verifier.maxBodyBytes)}`
        : `${p.title}'s events can be this large`;
      return {
        status: 'fail',
        observed,
        diagnosis: `your receiver refuses a valid ${mib(refused)} delivery — ${most}: set its body limit above the largest event (express.raw's default is 100 KiB)`,
      };
    },
  },
  {
    name: 'other-types',
    summary:
      'authentic events of every other shipped type, and of a type no receiver knows, get 2xx and are stored (store or ignore what you do not handle)',
    async run(ctx) {
      const refused: string[] = [];
      const factories = eventsOfOtherTypes(ctx);
      for (const f of factories) {
        const e = f.make(Date.now());
        const r = await mustAccept(ctx, e, sign(ctx, e));
        if (!r.ok) refused.push(`${e.eventType} (${r.text})`);
      }
      const observed = `${factories.length - refused.length} of ${factories.length} types accepted`;
      if (refused.length === 0) return { status: 'pass', observed };
      return {
        status: 'fail',
        observed: `${observed}; refused: ${refused.join(', ')}`,
        diagnosis: `your receiver refuses authentic events of types it has no handler for — ${
          (ctx.provider.profiles[ctx.provider.defaultProfile]?.retryDelaysMs.length ?? 0) > 0
            ? `${ctx.provider.title} retries each one for as long as it retries, and may disable the endpoint`
            : `${ctx.provider.title} records each as a failed delivery, and a run of failures can disable the hook`
        }: answer 2xx and ignore them`,
      };
    },
  },
  {
    name: 'url-verification',
    summary: "Slack's url_verification request is answered 2xx with its challenge in the body (plain text or JSON)",
    skipFor: (p) => (p.challengeAnswer ? undefined : `${p.title} sends no endpoint check`),
    async run(ctx) {
      const [shipped] = listShippedFixtures().filter(
        (f) =>
          f.provider === ctx.provider.name && ctx.provider.challengeAnswer?.(Buffer.from(JSON.stringify(loadFixtureFile(f.path).body))),
      );
      if (!shipped) return { status: 'skipped', observed: 'no endpoint-check fixture is shipped' };
      const e = compileFixture(ctx.provider, loadFixtureFile(shipped.path, ctx.provider.name), []).make(Date.now());
      const challenge = String((JSON.parse(e.rawBody.toString('utf8')) as { challenge?: unknown }).challenge);
      const res = await post(ctx, e.rawBody, sign(ctx, e));
      const body = (res.bodySnippet ?? '').trim();
      let echoed = body === challenge || body === `challenge=${challenge}`;
      try {
        echoed ||= (JSON.parse(body) as { challenge?: unknown }).challenge === challenge;
      } catch {
        /* not JSON */
      }
      const shown = JSON.stringify(body.slice(0, 60));
      if (is2xx(res.status) && echoed) return { status: 'pass', observed: `${answer(res)}, the challenge echoed` };
      return {
        status: 'fail',
        observed: `${answer(res)} ${shown}`,
        diagnosis: `your receiver does not answer url_verification with its challenge — ${ctx.provider.title} will not enable the endpoint until the answer's body is the challenge`,
      };
    },
  },
  {
    name: 'first-seen-retry',
    summary:
      "a delivery never seen before that already carries the provider's retry headers (the first attempt never arrived) gets 2xx and is stored",
    skipFor: (p) => (p.retryHeaders ? undefined : `${p.title}'s retries carry no header of their own: an unseen retry is the valid case`),
    async run(ctx) {
      const e = ctx.factory.make(Date.now());
      const r = await mustAccept(ctx, e, sign(ctx, e, { retry: 1, retryReason: 'connection_failed' }));
      if (r.n === undefined && is2xx(r.res.status))
        return { status: 'skipped', observed: `${r.text}: whether it was stored is the point (--inbox or --stored)` };
      if (r.ok) return { status: 'pass', observed: r.text };
      return {
        status: 'fail',
        observed: r.text,
        diagnosis: is2xx(r.res.status)
          ? 'your receiver answers 2xx to a retry it has never seen and drops it — the first attempt may never have arrived (connection_failed): dedupe on the event id, never on the retry header'
          : 'your receiver refuses a retry it has never seen — the first attempt may never have arrived: treat it as any delivery',
      };
    },
  },
  {
    name: 'oversized-body',
    summary: 'a body over --max-bytes gets 413 (a reset instead is a warning), and the receiver still answers',
    async run(ctx) {
      const e = ctx.factory.make(Date.now());
      const json = e.rawBody.toString('utf8');
      const body = Buffer.from(`${json.slice(0, -1)},"hookdrill_padding":"${'x'.repeat(ctx.maxBytes + 1024)}"}`);
      const big = await post(ctx, body, sign(ctx, { ...e, rawBody: body }));
      const refused = big.status === 413 || big.error === 'reset';
      const next = ctx.factory.make(Date.now());
      const after = await post(ctx, next.rawBody, sign(ctx, next));
      const ok = refused && is2xx(after.status);
      const observed = `${answer(big)} to ${body.length} bytes, then ${answer(after)} to a valid delivery`;
      if (!ok)
        return {
          status: 'fail',
          observed: `${observed} (expected 413, then 2xx)`,
          diagnosis: refused
            ? 'your receiver stops answering after refusing a large body'
            : `your receiver takes a body larger than --max-bytes (${mib(ctx.maxBytes)}): with no limit anyone can exhaust its memory, so refuse larger bodies with 413 (if its limit is higher, give check that limit with --max-bytes)`,
        };
      // A reset instead of the 413 (the receiver closed before reading the rest): a sender that
      // writes its whole body before reading never sees why, and retries the same body.
      if (big.status !== 413) return { status: 'warn', observed: `${observed}: the connection was reset before a 413 reached the sender` };
      return { status: 'pass', observed };
    },
  },
  {
    name: 'malformed-json',
    summary:
      "authentic but malformed JSON gets 2xx, or 4xx where the provider's own library parses the body it verified (all but Shopify's); elsewhere a 4xx is a warning",
    async run(ctx) {
      const e = ctx.factory.make(Date.now());
      const body = Buffer.from(e.rawBody.toString('utf8').slice(0, -5));
      const res = await post(ctx, body, sign(ctx, { ...e, rawBody: body }));
      if (is2xx(res.status)) return { status: 'pass', observed: answer(res) };
      const official = ctx.provider.verifier.official;
      if (is4xx(res.status) && ctx.provider.verifier.parsesJson)
        return { status: 'pass', observed: `${answer(res)}: refused, as ${official} does (it parses the body it verified)` };
      if (is4xx(res.status))
        return {
          status: 'warn',
          observed: answer(res),
          diagnosis: 'an authentic delivery refused is retried until the sender gives up: store what verifies, parse it in the worker',
        };
      return {
        status: 'fail',
        observed: `${answer(res)} (expected 2xx or 4xx)`,
        diagnosis: 'your receiver fails (5xx or no answer) on a body it cannot parse: the sender retries it for days',
      };
    },
  },
  {
    name: 'latency',
    summary: "p99 of 50 sequential valid deliveries is below half the provider's timeout",
    async run(ctx) {
      const latencies: number[] = [];
      let failures = 0;
      for (let i = 0; i < 50; i++) {
        const e = ctx.factory.make(Date.now());
        const res = await post(ctx, e.rawBody, sign(ctx, e));
        latencies.push(res.latencyMs);
        if (!is2xx(res.status)) failures++;
      }
      const p99 = percentile(latencies, 99) ?? Infinity;
      const limit = ctx.providerTimeoutMs / 2;
      const ok = p99 < limit && failures === 0;
      return {
        status: ok ? 'pass' : 'fail',
        observed: `p99 ${Math.round(p99)}ms, limit ${Math.round(limit)}ms${failures ? `, ${failures} not 2xx` : ''}`,
      };
    },
  },
  {
    name: 'slow-client',
    summary: 'a client sending its headers a byte a second does not stop a valid delivery being answered',
    async run(ctx) {
      const socket = connect(hostAndPort(ctx.url));
      socket.on('error', () => undefined);
      const line = `POST ${ctx.url.pathname} HTTP/1.1\r\nHost: ${ctx.url.host}\r\n`;
      let sent = 0;
      const drip = setInterval(() => {
        if (sent < line.length && !socket.destroyed) socket.write(line[sent++] as string);
      }, 1_000);
      try {
        await sleep(1_100); // the slow client is connected and has started
        const e = ctx.factory.make(Date.now());
        const res = await post(ctx, e.rawBody, sign(ctx, e));
        const ok = is2xx(res.status);
        return {
          status: ok ? 'pass' : 'fail',
          observed: `${answer(res)} in ${Math.round(res.latencyMs)}ms while a client dripped its headers`,
        };
      } finally {
        clearInterval(drip);
        socket.destroy();
      }
    },
  },
  {
    name: 'unsigned-flood',
    summary: '200 unsigned requests: none answered 2xx, none stored',
    async run(ctx) {
      const events = Array.from({ length: 200 }, () => ctx.factory.make(Date.now()));
      let answered2xx = 0;
      let unanswered = 0;
      let next = 0;
      await Promise.all(
        Array.from({ length: 20 }, async () => {
          while (next < events.length) {
            const e = events[next++] as PreparedEvent;
            const headers = sign(ctx, e);
            delete headers[sigHeader(ctx)];
            const res = await post(ctx, e.rawBody, headers);
            if (is2xx(res.status)) answered2xx++;
            if (res.status === undefined) unanswered++;
          }
        }),
      );
      // One look at the store for all 200 ids (a --stored command runs once, not 200 times).
      const counts = await ctx.storedCounts(events.map((e) => e.deliveryId));
      const probed = counts !== undefined;
      const stored = (counts ?? []).filter((n) => n > 0).length;
      // A receiver that is down or falls over also answers nothing with 2xx: that is no pass.
      const ok = answered2xx === 0 && stored === 0 && unanswered === 0;
      const lost = unanswered ? `, ${unanswered} got no answer at all` : '';
      return { status: ok ? 'pass' : 'fail', observed: `${answered2xx} answered 2xx${probed ? `, ${stored} stored` : ''}${lost}` };
    },
  },
];

export const CASE_NAMES = CASES.map((c) => c.name);
