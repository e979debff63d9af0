import { asSent } from '../providers/body-placed.js';
import { answerTaken, markRedelivery } from '../providers/contract.js';
import type { Dispatcher } from 'undici';
import type { PreparedEvent } from '../fixtures/index.js';
import type { OutgoingHeaders, Provider, RetryReason } from '../providers/index.js';
import { attempt, retryReason } from './attempt.js';
import type { AttemptOutcome, TransportError } from './attempt.js';
import type { Expectation } from './expect.js';
import type { Semaphore } from './semaphore.js';
import type { Timing } from './timing.js';
import { parseRetryAfter } from './timing.js';
import { sleep } from '../util/wait.js';
import type { Interrupt } from '../util/wait.js';
import { displayUrl } from '../util/options.js';
import { maskCredentials } from '../util/http-headers.js';
import { placeQuery } from '../providers/query-placed.js';

export interface AttemptRecord {
  /** 1 for the first attempt. */
  n: number;
  /** When it started, in ms since the run began. */
  atMs: number;
  latencyMs: number;
  status?: number;
  error?: TransportError;
  detail?: string;
  /** Why this attempt counts as failed, in Slack's vocabulary; absent when it succeeded. */
  reason?: RetryReason;
  /** Headers this attempt carried because it was a retry (e.g. X-Slack-Retry-Num). */
  retryHeaders?: OutgoingHeaders;
  redirects?: number;
  /** The wait before the next attempt, when there is one (after Retry-After and the time scale). */
  nextDelayMs?: number;
  bodySnippet?: string;
}

/**
 * How a delivery ended: `acknowledged` (a 2xx), `expected` (a non-2xx the user asked for with
 * --expect), `stopped` (the receiver said stop: 410, X-Slack-No-Retry), `exhausted` (no retries
 * left), `interrupted` (the run was cancelled).
 */
export type DeliveryOutcome = 'acknowledged' | 'expected' | 'stopped' | 'exhausted' | 'interrupted';

export interface DeliveryRecord {
  /** The event's place in generation order (0-based). */
  seq: number;
  /** Which copy of the event, 1..K with --duplicates K. */
  copy: number;
  deliveryId: string;
  eventType: string;
  fixture: string;
  attempts: AttemptRecord[];
  outcome: DeliveryOutcome;
  /** The last HTTP status received, if any. */
  finalStatus?: number;
  /** Whether the last attempt matched --expect. */
  met: boolean;
}

export interface RetryScheduled {
  deliveryId: string;
  eventType: string;
  /** The attempt that failed (its `nextDelayMs` is the wait). */
  failed: AttemptRecord;
  /** When the next attempt is due (unix ms). */
  dueAt: number;
}

/** One attempt as it went over the wire (send --verbose): what was sent, and what came back. */
export interface WireExchange {
  deliveryId: string;
  n: number;
  request: { method: 'POST'; url: string; headers: Record<string, string>; body: string };
  response?: { status: number; headers: Record<string, string>; body: string };
  error?: string;
}

export interface DeliveryContext {
  provider: Provider;
  secrets: readonly string[];
  url: URL;
  /**
   * The URL the provider posts to, where a proxy forwards to `url`: URL-bound schemes sign it, and
   * every attempt carries the X-Forwarded-Proto and -Host the proxy would add.
   */
  publicUrl?: URL;
  timing: Timing;
  expectation: Expectation;
  /** User headers (--header), set after signing so they can deliberately override. */
  extraHeaders: readonly (readonly [string, string])[];
  dispatcher: Dispatcher;
  slots: Semaphore;
  runStartMs: number;
  signal?: AbortSignal;
  /** The same interrupt as `signal`, cheap to listen to per attempt. */
  interrupt?: Interrupt;
  /** Told of every attempt as soon as its answer is in. */
  onAttempt?: (attempt: AttemptRecord, event: PreparedEvent) => void;
  /** Told of each attempt's full request and answer (send --verbose); costs a copy of both. */
  onWire?: (w: WireExchange) => void;
  /** Told when a retry is scheduled: which delivery, the attempt that failed, and the wait before the next. */
  onRetryScheduled?: (retry: RetryScheduled) => void;
  /** Told synchronously, inside the HTTP client's callback, of each final status (chaos kills on the K-th 2xx). */
  onAnswer?: (status: number) => void;
}

/**
 * Deliver one event as the provider would: sign every attempt anew (fresh timestamp, same delivery
 * id), add the provider's retry headers, wait out its schedule, and stop where it would stop.
 * The caller holds a slot for the first attempt; later attempts take their own.
 */
export async function deliver(
  event: PreparedEvent,
  meta: { seq: number; copy: number; fixture: string; firstAttempt?: number; lastReason?: RetryReason },
  ctx: DeliveryContext,
): Promise<DeliveryRecord> {
  // A delivery can resume its schedule at a later attempt (chaos: the retries after a restart).
  const firstAttempt = meta.firstAttempt ?? 1;
  const attempts: AttemptRecord[] = [];
  const { timing, provider } = ctx;
  let lastReason: RetryReason = meta.lastReason ?? 'unknown_error';
  let outcome: DeliveryOutcome | undefined;
  let finalStatus: number | undefined;
  // The waits so far, as slept: under --time-scale the real schedule's were longer by 1/scale.
  let waitedMs = 0;
  // When the delivery began (Square says so on every attempt): the event's making, else now.
  const firstAttemptMs = event.madeAtMs ?? Date.now();

  for (let n = firstAttempt; outcome === undefined; n++) {
    if (n > firstAttempt) await ctx.slots.acquire();
    // A retry is the same event, as old as the real schedule makes it: its `created` as far before
    // this attempt as the uncompressed waits would have put it (the same bytes when not compressed).
    // Where the body holds the send time itself (Linear's webhookTimestamp), a retry carries its own.
    const bodyOfAttempt =
      n > firstAttempt && provider.clockInBody && event.aged && event.madeAtMs !== undefined && !event.fixedHeaders
        ? event.aged(event.madeAtMs - Date.now())
        : waitedMs > 0 && timing.timeScale < 1 && event.aged && !event.fixedHeaders
          ? event.aged(waitedMs / timing.timeScale - waitedMs)
          : event.rawBody;
    // A redelivery says so where the provider marks it (LINE's isRedelivery, HubSpot's attemptNumber).
    const unsigned = n > 1 && !event.fixedHeaders ? markRedelivery(provider.contract, bodyOfAttempt, n - 1) : bodyOfAttempt;
    const signed = event.fixedHeaders
      ? { ...event.fixedHeaders }
      : provider.sign(unsigned, ctx.secrets, {
          nowMs: Date.now(),
          firstAttemptMs,
          deliveryId: event.deliveryId,
          eventType: event.eventType,
          facts: event.facts,
          url: (ctx.publicUrl ?? ctx.url).href,
        });
    // A signature that is a field of the body (SNS's) goes into it here, as the bytes go out.
    const { body: rawBody, headers } =
      provider.placeSignature && !event.fixedHeaders ? provider.placeSignature(unsigned, signed) : { body: unsigned, headers: signed };
    if (ctx.publicUrl) {
      headers['X-Forwarded-Proto'] = ctx.publicUrl.protocol.replace(':', '');
      headers['X-Forwarded-Host'] = ctx.publicUrl.host;
    }
    const retryHeaders =
      n > 1 && provider.retryHeaders && !event.fixedHeaders ? provider.retryHeaders(n - 1, lastReason, rawBody) : undefined;
    if (retryHeaders) Object.assign(headers, retryHeaders);
    applyExtraHeaders(headers, ctx.extraHeaders);
    // Where the provider writes its signature into the body (Mailgun), the request leaves with it there;
    // where its signing added to the URL (Twilio's bodySHA256), the request goes to that URL.
    const placed = placeQuery(provider, ctx.url, headers);
    const sent = asSent(provider, rawBody, placed.headers);

    // A tenth of a millisecond is all a timer on a shared machine can tell apart: no 2.6369129999999927.
    const atMs = Math.round((performance.now() - ctx.runStartMs) * 10) / 10;
    let result: AttemptOutcome;
    try {
      result = await attempt({
        url: placed.url,
        headers: sent.headers,
        body: sent.body,
        timeoutMs: timing.timeoutMs,
        maxRedirects: timing.maxRedirects,
        dispatcher: ctx.dispatcher,
        ...(ctx.interrupt ? { interrupt: ctx.interrupt } : {}),
        ...(ctx.onWire ? { wire: true } : {}),
        ...(ctx.onAnswer ? { onAnswer: ctx.onAnswer } : {}),
      });
    } finally {
      ctx.slots.release();
    }

    // One shape for every record (absent fields are undefined, which JSON leaves out): V8 keeps
    // the hot path monomorphic, which matters at tens of thousands of deliveries a second.
    const record: AttemptRecord = {
      n,
      atMs,
      latencyMs: Math.round(result.latencyMs * 10) / 10,
      status: result.status,
      error: result.error,
      detail: result.detail,
      reason: undefined,
      retryHeaders,
      redirects: result.redirects > 0 ? result.redirects : undefined,
      nextDelayMs: undefined,
      bodySnippet: result.bodySnippet,
    };
    attempts.push(record);
    if (ctx.onWire) {
      // Credentials are never shown (the signature is not a secret: it proves one, and changes each time).
      const shown = maskCredentials(sent.headers);
      ctx.onWire({
        deliveryId: event.deliveryId,
        n,
        request: { method: 'POST', url: displayUrl(placed.url), headers: shown, body: sent.body.toString('utf8') },
        ...(result.status !== undefined && result.wire
          ? { response: { status: result.status, body: result.wire.body, headers: maskCredentials(result.wire.headers) } }
          : {}),
        ...(result.error ? { error: `${result.error}${result.detail ? ` (${result.detail})` : ''}` } : {}),
      });
    }
    ctx.onAttempt?.(record, event);
    if (result.status !== undefined) finalStatus = result.status;

    const status = result.status;
    // A 2xx, or exactly the status the provider takes (Mailgun retries a 204).
    const ok = answerTaken(provider.contract, status);
    // A 2xx the provider does not take (Mailgun's 204) is retried as it retries it, whatever --expect says of 2xx.
    const untaken = !ok && status !== undefined && status >= 200 && status < 300;
    if (!ok) record.reason = lastReason = retryReason(result);

    if (result.error === 'interrupted') {
      outcome = 'interrupted';
    } else if (status !== undefined && ctx.expectation.matches(status) && !untaken) {
      outcome = ok ? 'acknowledged' : 'expected';
    } else if (ok) {
      outcome = 'acknowledged';
    } else if (status !== undefined && timing.stopStatuses.includes(status)) {
      outcome = 'stopped';
    } else if (timing.stopHeader && result.headers[timing.stopHeader.name] === timing.stopHeader.value) {
      outcome = 'stopped';
    } else if (n > timing.retryDelaysMs.length || provider.contract.resends.never?.includes(event.eventType)) {
      // Out of retries, or a type the provider never re-sends (Mailgun's delivered notifications): no more attempts, as it makes none.
      outcome = 'exhausted';
    } else {
      let delay = timing.retryDelaysMs[n - 1] as number;
      if (status !== undefined && timing.retryAfterStatuses.includes(status)) {
        const asked = parseRetryAfter(result.headers['retry-after'], Date.now());
        // A receiver's Retry-After is honoured, within what a timer can wait.
        if (asked !== undefined) delay = asked * timing.timeScale;
      }
      record.nextDelayMs = delay;
      waitedMs += delay;
      ctx.onRetryScheduled?.({ deliveryId: event.deliveryId, eventType: event.eventType, failed: record, dueAt: Date.now() + delay });
      if (!(await sleep(delay, ctx.signal))) outcome = 'interrupted';
    }
  }

  const lastStatus = attempts[attempts.length - 1]?.status;
  return {
    seq: meta.seq,
    copy: meta.copy,
    deliveryId: event.deliveryId,
    eventType: event.eventType,
    fixture: meta.fixture,
    attempts,
    outcome,
    finalStatus,
    met: lastStatus !== undefined && ctx.expectation.matches(lastStatus),
  };
}

/** Replace any header of the same name, whatever its case, so exactly one value is sent. */
function applyExtraHeaders(headers: OutgoingHeaders, extra: DeliveryContext['extraHeaders']): void {
  for (const [name, value] of extra) {
    const lower = name.toLowerCase();
    for (const key of Object.keys(headers)) if (key.toLowerCase() === lower) delete headers[key];
    headers[name] = value;
  }
}
