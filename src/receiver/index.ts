import { createHash } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isStoredHeader } from '../util/http-headers.js';
import type { Inbox } from '../inbox/index.js';
import { SignatureError } from '../providers/index.js';
import type { Provider } from '../providers/index.js';
import { RECEIVER_DEFAULTS } from './defaults.js';
import { ScrapePace } from './scrape-pace.js';
import { BodyBudget, headerRefusal } from './admission.js';
import { checkKeysMaterial } from '../providers/key-material.js';
import { serialized, splitBatch } from '../providers/contract.js';
import { queryChallengeOf } from '../providers/handshake.js';
import type { BatchPart } from '../providers/contract.js';
import { withoutSecret } from '../providers/kept-body.js';
import { withQuery } from '../providers/query-placed.js';
import { UsageError } from '../util/errors.js';

export interface ReceiverOptions {
  provider: Provider;
  secrets: readonly string[];
  inbox: Inbox;
  /** Bodies larger than this are refused with 413 and not read further. Default 5 MiB. */
  maxBytes?: number;
  /** Signed-timestamp tolerance in seconds, either way (default: the provider's 300). */
  toleranceSec?: number;
  /**
   * The URL the provider posts to (URL-bound schemes sign it: Square, HubSpot): each request is
   * verified over it, whatever its headers say. A URL-bound receiver needs it or trustProxy.
   */
  publicUrl?: string;
  /**
   * Without publicUrl: rebuild each request's URL from X-Forwarded-Proto and -Host, taking the
   * right-most value (the one the proxy in front added; values to its left are the client's own),
   * then the socket and Host. Only behind a proxy that sets both: otherwise any client chooses the
   * URL its signature is checked against.
   */
  trustProxy?: boolean;
  /** A store not committed within this is answered 503 (default 2 s: below every provider's timeout). */
  storeDeadlineMs?: number;
  /**
   * Called after each request is answered: for logs, and for waking a worker. A refused signature
   * comes with its request as it arrived (its kept headers, never credentials, and its raw body),
   * apart from the event so that no log line can carry a body: for `listen --ui`'s "why refused".
   * It is built only when asked for (a flood of forgeries costs nothing more without --ui).
   */
  onRequest?: (event: ReceiverEvent, refused?: () => RefusedCapture) => void;
  /** More for /healthz's answer, beside its verdict (listen: what it answered since it started). */
  healthDetail?: () => Record<string, unknown>;
  /**
   * Body bytes held across all requests at once (default 128 MiB); a request past it is answered
   * 503 with Retry-After before its body is read. At least maxBytes, or no large delivery fits.
   */
  maxInFlightBytes?: number;
  /** Serve `GET /metrics` with this (listen: Prometheus's text format). */
  metrics?: () => Promise<{ contentType: string; body: string }>;
  /**
   * Which verified deliveries are kept, by event type (`listen --events`): one it leaves out is
   * answered 200 and not stored, as the Stripe CLI acknowledges an event and forwards nothing.
   */
  keep?: (eventType: string | undefined) => boolean;
  /** The route each delivery is stored with, by its event type (listen with routes): the row keeps it. */
  routeOf?: (eventType: string | undefined) => string;
}

/** A request whose signature was refused, as it arrived: what `hookdrill verify` judges. */
export interface RefusedCapture {
  method: string;
  path: string;
  headers: Record<string, string>;
  body: Buffer;
  arrivedAtMs: number;
  /** Refused on its headers alone: its body was never read (`body` is empty). */
  bodyUnread?: boolean;
  /** The URL as it arrived (Host and path; no forwarded header trusted): for a diagnosis, never a verdict. */
  url?: string;
}

export interface ReceiverEvent {
  status: number;
  /** What happened: stored, duplicate, rejected (bad signature), too_large, store_failed, challenge, … */
  result:
    | 'stored'
    | 'duplicate'
    | 'rejected'
    | 'too_large'
    | 'busy'
    | 'store_failed'
    | 'challenge'
    | 'method_not_allowed'
    | 'health'
    | 'filtered'
    | 'not_found'
    | 'error';
  /** The provider it came for (a listen that receives several). */
  source?: string;
  deliveryId?: string;
  eventType?: string;
  reason?: string;
  /** With rejected: the signature failure's code (missing_header, stale_timestamp, no_match, …). */
  code?: string;
  bytes?: number;
  /** From the request's arrival to its answer. */
  ms?: number;
}

/** Kept for the library API: the receiver's body limit by default (see receiver/defaults.ts). */
export const DEFAULT_MAX_BYTES = RECEIVER_DEFAULTS.maxBytes;

/**
 * The reference receiver as a Node `http` request handler. The order is the whole design:
 * read the raw body (413 past maxBytes) → verify the signature over those bytes (401; nothing
 * stored) → store, keyed by the delivery id, and wait for the commit (503 if it fails, so the
 * sender retries) → only then 200. A duplicate is answered 200: the sender is asking "do you
 * have it?". Authentic but malformed JSON is stored and acknowledged; the worker buries it.
 */
/** The request handler, and the one for Node's `checkContinue` (a request sent with `Expect: 100-continue`). */
export type ReceiverHandler = ((req: IncomingMessage, res: ServerResponse) => void) & {
  checkContinue?: (req: IncomingMessage, res: ServerResponse) => void;
};

export function createReceiver(options: ReceiverOptions): ReceiverHandler {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const { provider, inbox } = options;
  // Refused before the first request, not at each: a library caller given no or a blank secret
  // would otherwise run a receiver that stores forgeries, or refuses everything.
  checkKeysMaterial(provider, options.secrets, 'verify');
  if (provider.urlBound && options.publicUrl === undefined && !options.trustProxy) {
    // Rebuilt from the request, the URL is the client's to choose: a delivery signed for another
    // endpoint of the same account would verify.
    throw new UsageError(
      `${provider.name} signs the URL it posts to: give the receiver its public URL (publicUrl), or trustProxy where a proxy in front sets X-Forwarded-Proto and -Host`,
    );
  }
  const storeDeadlineMs = options.storeDeadlineMs ?? RECEIVER_DEFAULTS.storeDeadlineMs;
  const baseVerify = options.toleranceSec !== undefined ? { toleranceSec: options.toleranceSec } : {};
  // Only a URL-bound scheme reads the URL: the rest verify with the options as they are, per request.
  const verifyOptionsOf = (req: IncomingMessage) =>
    provider.urlBound
      ? {
          ...baseVerify,
          url:
            options.publicUrl !== undefined
              ? withSignedQuery(provider, options.publicUrl, req.url ?? '/')
              : requestUrl(req, { trustProxy: options.trustProxy === true }),
        }
      : baseVerify;

  const arrived = new WeakMap<ServerResponse, number>();
  const answer = (res: ServerResponse, event: ReceiverEvent, body: unknown, refused?: () => RefusedCapture, close?: boolean) => {
    // An empty answer is an acknowledgment (Slack's commands: a body would be posted as a message).
    const text = body === '' ? '' : JSON.stringify(body);
    // Answered before its body was read: the connection cannot carry another request after it.
    if (close) res.setHeader('connection', 'close');
    res.writeHead(event.status, { ...(text ? { 'content-type': 'application/json' } : {}), 'content-length': Buffer.byteLength(text) });
    res.end(text);
    const t0 = arrived.get(res);
    // Every event is a fresh literal: timed in place, not copied, on the hot path.
    if (t0 !== undefined) event.ms = performance.now() - t0;
    options.onRequest?.(event, refused);
  };

  const scrapes = new ScrapePace();
  const budget = new BodyBudget(options.maxInFlightBytes ?? RECEIVER_DEFAULTS.maxInFlightBytes);
  // Requests that asked `Expect: 100-continue` and have not been told to go on: they are judged on
  // their headers and answered without a 100 when refused, so their bodies are never sent.
  const awaitingContinue = new WeakSet<ServerResponse>();
  const handler: ReceiverHandler = (req, res) => {
    arrived.set(res, performance.now());
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics' && options.metrics && (req.method === 'GET' || req.method === 'HEAD')) {
      const metrics = options.metrics;
      void scrapes
        .turn()
        .then((ok) => (ok ? metrics() : undefined))
        .then(
          (m) => {
            if (!m) {
              res.writeHead(429, { 'retry-after': '1', 'content-length': 0 });
              return void res.end();
            }
            res.writeHead(200, { 'content-type': m.contentType, 'content-length': Buffer.byteLength(m.body) });
            res.end(m.body);
          },
          () => {
            res.writeHead(500).end();
          },
        );
      return;
    }
    if (path === '/healthz') {
      if (req.method !== 'GET' && req.method !== 'HEAD')
        return answer(res, { status: 405, result: 'method_not_allowed' }, { error: 'method_not_allowed' });
      // Healthy means deliveries can be kept: a store that cannot keep them is a 503 here too.
      void (inbox.health?.() ?? Promise.resolve<{ ok: boolean; problem?: string; warnings?: string[] }>({ ok: true })).then(
        (h) =>
          answer(
            res,
            { status: h.ok ? 200 : 503, result: 'health', ...(h.problem ? { reason: h.problem } : {}) },
            {
              ok: h.ok,
              ...(h.ok ? {} : { problem: publicProblem(h.problem ?? 'the inbox cannot store deliveries', inbox.location) }),
              ...(h.warnings?.length ? { warnings: h.warnings.map((w) => publicProblem(w, inbox.location)) } : {}),
              ...options.healthDetail?.(),
            },
          ),
        (err: unknown) => {
          const reason = err instanceof Error ? err.message : String(err);
          answer(res, { status: 503, result: 'health', reason }, { ok: false, problem: publicProblem(reason, inbox.location) });
        },
      );
      return;
    }
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return answer(res, { status: 405, result: 'method_not_allowed' }, { error: 'method_not_allowed' });
    }

    const declared = Number(req.headers['content-length'] ?? Number.NaN);
    const expects = awaitingContinue.has(res);
    // Before a byte of the body: a signature header that cannot be valid is refused at once.
    // (Slack's ssl_check comes unsigned: a request that may be one is read, it is a few bytes; so is
    // a challenge in the query, Graph's validationToken, answered in handle before any verifying.)
    const queried = provider.handshake ? queryChallengeOf(provider.handshake, req.url ?? '/') !== undefined : false;
    if (!queried && !provider.mayBeUnsignedCheck?.(req.headers)) {
      const err = headerRefusal(provider, req.headers, options.secrets, verifyOptionsOf(req));
      if (err) {
        answer(
          res,
          { status: 401, result: 'rejected', reason: err.message, code: err.code, ...(declared >= 0 ? { bytes: declared } : {}) },
          { error: err.code, message: err.message },
          () => ({
            method: req.method ?? 'POST',
            path: req.url ?? '/',
            headers: keptHeaders(req),
            body: Buffer.alloc(0),
            arrivedAtMs: Date.now(),
            bodyUnread: true,
          }),
          true,
        );
        return discardRest(req, 0, expects ? 0 : REFUSED_DISCARD_BYTES);
      }
    }

    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    // What this request holds of the budget, given back once, when its exchange is over.
    let taken = 0;
    res.once('close', () => budget.give(taken));
    const take = (n: number) => {
      if (!budget.take(n)) return false;
      taken += n;
      return true;
    };
    const busy = () => {
      refused = true;
      chunks.length = 0;
      res.setHeader('retry-after', '1');
      answer(
        res,
        {
          status: 503,
          result: 'busy',
          reason: `over ${budget.capBytes} body bytes held at once`,
          ...(declared >= 0 ? { bytes: declared } : {}),
        },
        { error: 'busy' },
        undefined,
        true,
      );
      discardRest(req, size, expects ? 0 : REFUSED_DISCARD_BYTES);
    };
    const tooLarge = (bytes: number) => {
      refused = true;
      chunks.length = 0;
      answer(res, { status: 413, result: 'too_large', bytes }, { error: 'payload_too_large', maxBytes }, undefined, expects);
      // Without a 100 Continue, a client that waits for one sends no body: nothing to wait for.
      discardRest(req, size, expects ? 0 : DISCARD_CAP_BYTES);
    };
    if (declared > maxBytes) return tooLarge(declared);
    if (declared >= 0 && !take(declared)) return busy();
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (refused) return;
      if (size > maxBytes) return tooLarge(size);
      // Chunked: no length declared, so each chunk takes its share as it comes.
      if (!(declared >= 0) && !take(chunk.length)) return busy();
      chunks.push(chunk);
    });
    // Judged and admitted: now the client may send its body.
    if (expects) res.writeContinue();

    req.on('error', () => undefined); // a client that vanished mid-body: nothing to answer
    req.on('end', () => {
      if (refused) return;
      handle(Buffer.concat(chunks, size), req, res).catch((err: unknown) => {
        const reason = err instanceof Error ? err.message : String(err);
        if (!res.headersSent) answer(res, { status: 500, result: 'error', reason }, { error: 'internal_error' });
      });
    });
  };
  handler.checkContinue = (req: IncomingMessage, res: ServerResponse) => {
    awaitingContinue.add(res);
    handler(req, res);
  };
  return handler;

  async function handle(rawBody: Buffer, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const bytes = rawBody.length;
    // A challenge in the URL (Microsoft Graph's ?validationToken=…, posted with an empty body and
    // nothing of it signed): echoed decoded, alone, as text/plain, before any verification — Graph
    // creates the subscription only on that answer within 10 s. Nothing is stored.
    const queried = provider.handshake ? queryChallengeOf(provider.handshake, req.url ?? '/') : undefined;
    if (queried !== undefined) return answerText(res, queried, bytes);
    // Sent unsigned by design (Slack's ssl_check): answered, nothing of it read or kept.
    if (provider.unsignedCheck?.(rawBody, req.headers)) return answer(res, { status: 200, result: 'challenge', bytes }, {});
    try {
      provider.verify(rawBody, req.headers, options.secrets, verifyOptionsOf(req));
    } catch (err) {
      if (!(err instanceof SignatureError)) throw err;
      return answer(
        res,
        { status: 401, result: 'rejected', reason: err.message, code: err.code, bytes },
        { error: err.code, message: err.message },
        () => ({
          method: req.method ?? 'POST',
          path: req.url ?? '/',
          headers: keptHeaders(req),
          // A refused body may still hold the secret in its other items: kept without it too.
          body: withoutSecret(provider, rawBody),
          arrivedAtMs: Date.now(),
          url: requestUrl(req),
        }),
      );
    }

    // A provider checking the endpoint (Slack's url_verification) gets its answer; nothing is stored.
    // Answered with the secret that verified it, never simply the first: Zoom's answer is an HMAC
    // of the token, so during a rotation a retired secret answering would stay an oracle for it.
    const challenge =
      provider.challengeAnswer?.(rawBody) === undefined
        ? undefined
        : provider.challengeAnswer(rawBody, [verifyingSecret(provider, rawBody, req, options.secrets, verifyOptionsOf(req))]);
    if (challenge !== undefined && provider.handshake?.answer === 'text') {
      // The value alone, as text/plain: Twitch enables the subscription only on the raw challenge (JSON around it fails).
      return answerText(res, String((challenge as { challenge: string }).challenge), bytes);
    }
    if (challenge !== undefined) return answer(res, { status: 200, result: 'challenge', bytes }, challenge);
    // A handshake completed by a visit (SNS's SubscriptionConfirmation: a GET of SubscribeURL), made
    // now that it is verified; nothing is stored. Not made: 502, so the sender tries again.
    if (provider.completeHandshake && provider.handshakeVisit?.(rawBody)) {
      try {
        await provider.completeHandshake(rawBody);
      } catch (err) {
        return answer(
          res,
          { status: 502, result: 'error', reason: (err as Error).message, bytes },
          { error: 'handshake', message: (err as Error).message },
        );
      }
      return answer(res, { status: 200, result: 'challenge', bytes }, { ok: true, confirmed: true });
    }

    // Several events in one body (LINE, SendGrid, HubSpot): each stored under its own id, and the
    // body answered only once all are durable. A body that repeats some and adds others stores the
    // new ones; one of no events (LINE's Verify) is an endpoint check, answered and not stored.
    // Kept without a secret the body carries as it is (Graph's clientState): the inbox is printed
    // by inspect and the inspector; a forward writes it back (providers/kept-body.ts).
    const kept = withoutSecret(provider, rawBody);
    // A part the batch's type path leaves untyped (Graph's lifecycle notification: no changeType) is
    // typed as the provider types that event alone (its lifecycleEvent), as a one-event body would be.
    const all = splitBatch(provider.contract, kept, (body) => serialized(provider, body))?.map((p) =>
      p.eventType === undefined ? { ...p, eventType: provider.eventTypeOf(req.headers, p.body) } : p,
    );
    if (all?.length === 0) return answer(res, { status: 200, result: 'challenge', bytes }, { ok: true, events: 0 });
    const keep = options.keep;
    const parts = all && keep ? all.filter((p) => keep(p.eventType)) : all;
    if (all && parts?.length === 0)
      return answer(res, { status: 200, result: 'filtered', bytes }, { ok: true, events: all.length, filtered: all.length });
    // A batch some of whose events the filter left out is stored as parts, even when one is left.
    if (parts && (parts.length > 1 || parts !== all)) return storeBatch(parts, rawBody, req, res);

    // A body too broken to hold its id (Stripe's and Slack's live in the body) is keyed by its hash,
    // so the sender's retries of the same bytes still dedupe.
    const deliveryId = provider.deliveryId(req.headers, kept) ?? `sha256:${createHash('sha256').update(kept).digest('hex')}`;
    const eventType = provider.eventTypeOf(req.headers, kept);
    const base = { deliveryId, ...(eventType ? { eventType } : {}), bytes };
    // Verified, and not wanted here: acknowledged, so the sender does not retry it, and not kept.
    if (options.keep && !options.keep(eventType))
      return answer(res, { status: 200, result: 'filtered', ...base }, { ok: true, deliveryId, filtered: true });
    let inserted: boolean;
    try {
      ({ inserted } = await withinDeadline(
        inbox.put({
          source: provider.name,
          deliveryId,
          eventType,
          body: kept,
          headers: keptHeaders(req),
          receivedAt: Date.now(),
          ...(options.routeOf ? { route: options.routeOf(eventType) } : {}),
        }),
        storeDeadlineMs,
      ));
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      return answer(res, { status: 503, result: 'store_failed', reason, ...base }, { error: 'store_failed' });
    }
    // A provider that needs a body back gets its deferred form (Discord: "thinking…", the work
    // done later through its API; Slack's commands: an empty 200), never {"ok": true}, which
    // Discord takes for a failed interaction.
    const reply = provider.deferredAnswer?.(rawBody) ?? { ok: true, deliveryId, duplicate: !inserted };
    answer(res, { status: 200, result: inserted ? 'stored' : 'duplicate', ...base }, reply);
  }

  /** A handshake's value alone as the body, text/plain (nosniff: it is the caller's text, echoed). */
  function answerText(res: ServerResponse, text: string, bytes: number): void {
    res.writeHead(200, {
      'content-type': 'text/plain; charset=utf-8',
      'content-length': Buffer.byteLength(text),
      'x-content-type-options': 'nosniff',
    });
    res.end(text);
    const t0 = arrived.get(res);
    options.onRequest?.({
      status: 200,
      result: 'challenge',
      bytes,
      ...(t0 !== undefined ? { ms: performance.now() - t0 } : {}),
    });
  }

  async function storeBatch(parts: BatchPart[], rawBody: Buffer, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const bytes = rawBody.length;
    const headers = keptHeaders(req);
    const receivedAt = Date.now();
    const base = { deliveryId: `${(parts[0] as BatchPart).deliveryId} and ${parts.length - 1} more`, bytes };
    let fresh: number;
    try {
      const results = await withinDeadline(
        Promise.all(
          parts.map((p, i) =>
            inbox.put({
              source: provider.name,
              deliveryId: p.deliveryId,
              eventType: p.eventType,
              body: p.body,
              // Its body is the event alone, not what was signed: forwards are signed anew.
              headers: { ...headers, [BATCH_HEADER]: `${i + 1}/${parts.length}` },
              receivedAt,
              ...(options.routeOf ? { route: options.routeOf(p.eventType) } : {}),
            }),
          ),
        ),
        storeDeadlineMs,
      );
      fresh = results.filter((r) => r.inserted).length;
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      return answer(res, { status: 503, result: 'store_failed', reason, ...base }, { error: 'store_failed' });
    }
    answer(
      res,
      { status: 200, result: fresh > 0 ? 'stored' : 'duplicate', ...base },
      { ok: true, events: parts.length, stored: fresh, duplicates: parts.length - fresh },
    );
  }
}

/** Marks a row split from a batch body (i/n): its body is one event, not the bytes the provider signed. */
export const BATCH_HEADER = 'x-hookdrill-batch';

/**
 * The store's answer, or a failure once the deadline passes. The write is not cancelled: if it
 * commits later the delivery is stored but unacknowledged, and the sender's retry is a duplicate.
 */
function withinDeadline<T>(write: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`the inbox did not commit within ${ms / 1000} s (the store is locked, stalled or unreachable)`)),
      ms,
    );
    write.then(
      (v) => {
        clearTimeout(timer);
        resolve(v);
      },
      (err: unknown) => {
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/** How much of an oversized body is read and thrown away, and for how long, before the connection is cut. */
const DISCARD_CAP_BYTES = 64 * 1024 * 1024;
const DISCARD_DEADLINE_MS = 10_000;
/**
 * After a refusal on the headers (or a full budget): enough that a sender's ordinary request
 * still reads its 401 or 503 rather than a reset (a reset loses an answer not yet read), and a
 * flood's 30 MiB bodies are cut after 64 KiB: draining a MiB each held valid deliveries to half
 * their acks/s under a flood (npm run bench, bench/flood.ts).
 */
const REFUSED_DISCARD_BYTES = 64 * 1024;

/**
 * After a 413, keep reading (and discarding) what the client still sends. Closing at once is what
 * a body limit seems to call for, but a client that writes its whole body before it reads (Node's
 * http client, many senders) then gets a TCP reset instead of the 413 — and a sender that sees a
 * reset retries the same oversized body forever. Past a cap or a deadline the connection is cut.
 */
function discardRest(req: IncomingMessage, alreadyRead: number, capBytes = DISCARD_CAP_BYTES): void {
  let read = alreadyRead;
  const cut = () => req.socket.destroy();
  const timer = setTimeout(cut, DISCARD_DEADLINE_MS);
  timer.unref();
  req.on('data', (chunk: Buffer) => {
    read += chunk.length;
    if (read > capBytes) cut();
  });
  req.once('end', () => clearTimeout(timer));
  req.once('close', () => clearTimeout(timer));
  req.resume();
}

function keptHeaders(req: IncomingMessage): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    // Credentials and hop-by-hop headers are not the event's: never stored, never replayed.
    if (value === undefined) continue;
    const joined = Array.isArray(value) ? value.join(', ') : value;
    // A credential by its value too (X-Auth: Bearer …), not only by the names on a list.
    if (!isStoredHeader(name, joined)) continue;
    out[name] = joined;
  }
  return out;
}

/**
 * A health problem as anyone who can reach the port may read it: what is wrong, without where
 * the inbox is — its path, or its URL's user, host, database and schema (listen's log has those).
 */
export function publicProblem(problem: string, location: string): string {
  return problem
    .replaceAll(`inbox ${location}`, 'the inbox')
    .replaceAll(location, 'the inbox')
    .replace(/\b[a-z][a-z0-9+.-]*:\/\/\S+/gi, '<url>')
    .replace(/\b[\w.-]+@[\w.-]+(:\d+)?/g, '<host>')
    .replace(/\b\d{1,3}(\.\d{1,3}){3}(:\d+)?\b/g, '<host>');
}

/** Which of the secrets verifies this request (it has verified with one of them). */
function verifyingSecret(
  provider: Provider,
  rawBody: Buffer,
  req: IncomingMessage,
  secrets: readonly string[],
  opts: { toleranceSec?: number; url?: string },
): string {
  const found = secrets.find((s) => {
    try {
      provider.verify(rawBody, req.headers, [s], opts);
      return true;
    } catch {
      return false;
    }
  });
  if (found === undefined) throw new Error('the request verified, but with none of the secrets alone');
  return found;
}

/**
 * The URL a request was sent to: with trustProxy, the X-Forwarded-Proto and -Host the proxy in
 * front added — the right-most value of each, since a client may send its own and a proxy
 * appends — else this socket's scheme and the Host header. Every part of it but the proxy's is
 * the client's choice: only a receiver told to trust a proxy verifies a URL-bound signature over it.
 */
export function requestUrl(
  req: Pick<IncomingMessage, 'headers' | 'url'> & { socket?: IncomingMessage['socket'] },
  o: { trustProxy?: boolean } = {},
): string {
  const last = (name: string) => {
    if (!o.trustProxy) return undefined;
    const v = req.headers[name];
    const all = (Array.isArray(v) ? v.join(',') : v)?.split(',') ?? [];
    return all[all.length - 1]?.trim() || undefined;
  };
  const encrypted = (req.socket as { encrypted?: boolean } | undefined)?.encrypted === true;
  const proto = last('x-forwarded-proto') ?? (encrypted ? 'https' : 'http');
  const host = last('x-forwarded-host') ?? req.headers.host ?? 'localhost';
  return `${proto}://${host}${req.url ?? '/'}`;
}

/**
 * The public URL as the sender signed it: where the sender adds a parameter of its own to the URL
 * it was given (Twilio's bodySHA256, for a JSON body), that parameter as this request carries it,
 * added to the public URL as the sender adds it. Only that parameter: the rest of the URL stays the
 * one configured, so a delivery signed for another endpoint still does not verify here.
 */
export function withSignedQuery(provider: Provider, publicUrl: string, path: string): string {
  const param = provider.queryPlaced?.param;
  if (param === undefined) return publicUrl;
  const query = path.includes('?') ? (path.slice(path.indexOf('?') + 1).split('#')[0] ?? '') : '';
  const given = query.split('&').find((pair) => pair.startsWith(`${param}=`));
  const configured = new URL(publicUrl).searchParams.has(param);
  return given === undefined || configured ? publicUrl : withQuery(publicUrl, given);
}
