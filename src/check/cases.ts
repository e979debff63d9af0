import { connect } from 'node:net';
import type { EventFactory, PreparedEvent } from '../fixtures.js';
import type { OutgoingHeaders, Provider } from '../providers/index.js';
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
  opts: { nowMs?: number; secret?: string; retry?: number } = {},
): Record<string, string> {
  const headers = ctx.provider.sign(event.rawBody, opts.secret ? [opts.secret] : ctx.secrets, {
    nowMs: opts.nowMs ?? Date.now(),
    deliveryId: event.deliveryId,
    eventType: event.eventType,
  });
  // A retry carries what the provider adds to retries (Slack: X-Slack-Retry-Num and -Reason).
  if (opts.retry && ctx.provider.retryHeaders) Object.assign(headers, ctx.provider.retryHeaders(opts.retry, 'http_timeout'));
  return lower(headers);
}

/**
 * Copy i of a delivery as the provider would send it: re-signed i seconds apart, so where the
 * provider signs a timestamp each copy's signature differs, as real retries' do. A receiver that
 * deduplicates on the signature instead of the delivery id stores every copy.
 */
function copySignedSecondsApart(ctx: CheckContext, event: PreparedEvent, i: number, copies: number): Record<string, string> {
  return sign(ctx, event, { nowMs: Date.now() - (copies - 1 - i) * 1_000 });
}

function storedText(n: number | undefined): string {
  return n === undefined ? '' : `, stored ${n === 1 ? 'once' : `${n} times`}`;
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
      return { status: ok ? 'pass' : 'fail', observed: `${answer(res)}${stored.text}${ok ? '' : ' (expected 4xx, nothing stored)'}` };
    },
  };
}

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
      return {
        status: ok ? 'pass' : 'fail',
        observed: `${answer(res)} in ${Math.round(res.latencyMs)}ms${n === undefined ? '' : n === 1 ? ', stored' : `, stored ${n} times`}`,
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
      return { status: ok ? 'pass' : 'fail', observed: `${answer(first)} then ${answer(second)}${storedText(n)}` };
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
      return { status: ok ? 'pass' : 'fail', observed: `${answer(first)}, then ${answer(retry)} to the retry${storedText(n)}` };
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
      return { status: ok ? 'pass' : 'fail', observed: `${counts}${storedText(n)}` };
    },
  },
  rejection('wrong-secret', 'signed with another secret: 4xx, nothing stored', (ctx, e) => ({
    body: e.rawBody,
    headers: sign(ctx, e, { secret: ctx.provider.otherSecret(ctx.secrets[0] ?? '') }),
  })),
  rejection('flipped-byte', 'one byte of the body changed after signing: 4xx, nothing stored', (ctx, e) => {
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
  }),
  rejection('reserialized', 'the same JSON re-serialised (whitespace): 4xx — signatures cover bytes, not JSON', (ctx, e) => ({
    body: Buffer.from(JSON.stringify(JSON.parse(e.rawBody.toString('utf8')), null, 2)),
    headers: sign(ctx, e),
  })),
  rejection('missing-signature', 'no signature header: 4xx, nothing stored', (ctx, e) => {
    const headers = sign(ctx, e);
    delete headers[sigHeader(ctx)];
    return { body: e.rawBody, headers };
  }),
  rejection('malformed-signature', 'a signature header that does not parse: 4xx, nothing stored', (ctx, e) => ({
    body: e.rawBody,
    headers: { ...sign(ctx, e), [sigHeader(ctx)]: 'hookdrill:not-a-signature' },
  })),
  rejection('wrong-length-signature', 'the right signature, two characters short: 4xx, nothing stored', (ctx, e) => {
    const headers = sign(ctx, e);
    headers[sigHeader(ctx)] = (headers[sigHeader(ctx)] ?? '').slice(0, -2);
    return { body: e.rawBody, headers };
  }),
  rejection(
    'stale-timestamp',
    'signed 6 minutes ago (the tolerance is 5): 4xx, nothing stored',
    (ctx, e) => ({ body: e.rawBody, headers: sign(ctx, e, { nowMs: Date.now() - 360_000 }) }),
    needsTimestamp,
  ),
  rejection(
    'future-timestamp',
    'signed 6 minutes in the future: 4xx, nothing stored',
    (ctx, e) => ({ body: e.rawBody, headers: sign(ctx, e, { nowMs: Date.now() + 360_000 }) }),
    needsTimestamp,
  ),
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
      if (!ok) return { status: 'fail', observed: `${observed} (expected 413, then 2xx)` };
      // A reset instead of the 413 (the receiver closed before reading the rest): a sender that
      // writes its whole body before reading never sees why, and retries the same body.
      if (big.status !== 413) return { status: 'warn', observed: `${observed}: the connection was reset before a 413 reached the sender` };
      return { status: 'pass', observed };
    },
  },
  {
    name: 'malformed-json',
    summary: 'authentic but malformed JSON gets 2xx (a 4xx only makes the sender retry: a warning)',
    async run(ctx) {
      const e = ctx.factory.make(Date.now());
      const body = Buffer.from(e.rawBody.toString('utf8').slice(0, -5));
      const res = await post(ctx, body, sign(ctx, { ...e, rawBody: body }));
      if (is2xx(res.status)) return { status: 'pass', observed: answer(res) };
      if (is4xx(res.status))
        return { status: 'warn', observed: `${answer(res)}: authentic deliveries rejected are retried until the sender gives up` };
      return { status: 'fail', observed: `${answer(res)} (expected 2xx)` };
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
