import { createServer } from 'node:http';
import type { ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A stand-in for Stripe's List Events endpoint, serving the documented shapes over real HTTP:
 * - GET /v1/events with created[gte] / created[lte], limit (max 100), starting_after,
 *   ending_before, delivery_success and types[]; newest first (created, then id: events created in
 *   the same second sort by id, so a later one can sort behind an earlier one); { object: 'list',
 *   data, has_more, url }. With ending_before, data is the `limit` events just newer than that
 *   one, still newest first, and has_more says whether there are newer still
 *   (https://docs.stripe.com/api/events/list, https://docs.stripe.com/api/pagination);
 * - Authorization: Bearer <key>, else 401 with an invalid_request_error whose message shows the
 *   key's last four characters, as Stripe's does (https://docs.stripe.com/api/errors);
 * - a 429 with Retry-After on the requests named in `rateLimitOn` (https://docs.stripe.com/rate-limits);
 * - faults on chosen requests (`fault`): a 503, a dropped connection, no answer at all, a body
 *   that never ends, or a pagination loop (has_more for ever, the same page each time).
 */
export interface StripeEvent {
  id: string;
  type: string;
  created: number;
  delivered: boolean;
  /** data.object as raw JSON text (a payload too large or too deep to build as a value here). */
  objectJson?: string;
}

export type StripeFault = 'unavailable' | 'drop' | 'hang' | 'endless' | 'loop';

export async function startStripeApi(o: {
  key: string;
  events: StripeEvent[];
  rateLimitOn?: number[];
  /** The fault for request number n (1-based), if any. */
  fault?: (n: number) => StripeFault | undefined;
}) {
  let requests = 0;
  /** Each request's path and query, as sent: what a cursor turned into (created[gte]=…). */
  const urls: string[] = [];
  const rateLimited: number[] = [];
  const events = [...o.events];
  /** When each event became visible (ms), for the latency from appearing to being acknowledged. */
  const appearedAt = new Map<string, number>();
  const sockets = new Set<Socket>();
  const hung: ServerResponse[] = [];
  const server = createServer((req, res) => {
    requests++;
    urls.push(req.url ?? '');
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json', ...headers });
      res.end(JSON.stringify(body));
    };
    if (req.headers.authorization !== `Bearer ${o.key}`) {
      const given = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
      return send(401, {
        error: { type: 'invalid_request_error', message: `Invalid API Key provided: ${given.slice(0, 8)}****${given.slice(-4)}` },
      });
    }
    if (o.rateLimitOn?.includes(requests)) {
      rateLimited.push(requests);
      return send(429, { error: { type: 'rate_limit_error', message: 'Too many requests' } }, { 'retry-after': '1' });
    }
    const fault = o.fault?.(requests);
    if (fault === 'unavailable') return send(503, { error: { type: 'api_error', message: 'Service unavailable' } });
    if (fault === 'drop') return req.socket.destroy();
    if (fault === 'hang') return void hung.push(res);
    if (fault === 'endless') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"object":"list","data":[');
      const chunk = `${JSON.stringify({ id: 'evt_x', object: 'event', type: 'x', created: 1, data: { object: { pad: 'x'.repeat(60_000) } } })},`;
      const pump = () => {
        while (!res.destroyed && res.write(chunk));
        if (!res.destroyed) res.once('drain', pump);
      };
      return pump();
    }
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/v1/events') return send(404, { error: { type: 'invalid_request_error', message: 'Unrecognized request URL' } });
    const gte = Number(url.searchParams.get('created[gte]') ?? 0);
    const lte = Number(url.searchParams.get('created[lte]') ?? Number.MAX_SAFE_INTEGER);
    const limit = Math.min(100, Number(url.searchParams.get('limit') ?? 10));
    const onlyFailed = url.searchParams.get('delivery_success') === 'false';
    // types[]: exact names, or a prefix with a trailing * (invoice.*).
    const types = url.searchParams.getAll('types[]');
    const typed = (t: string) => !types.length || types.some((p) => (p.endsWith('*') ? t.startsWith(p.slice(0, -1)) : t === p));
    let list = events
      .filter((e) => e.created >= gte && e.created <= lte && (!onlyFailed || !e.delivered) && typed(e.type))
      .sort((a, b) => b.created - a.created || (a.id < b.id ? 1 : -1));
    const after = url.searchParams.get('starting_after');
    const before = url.searchParams.get('ending_before');
    let hasMore: boolean;
    if (before) {
      const at = list.findIndex((e) => e.id === before);
      if (at < 0) return send(404, { error: { type: 'invalid_request_error', message: `No such event: '${before}'` } });
      const newer = list.slice(0, at);
      hasMore = newer.length > limit;
      list = newer.slice(Math.max(0, newer.length - limit));
    } else {
      if (after && fault !== 'loop') list = list.slice(list.findIndex((e) => e.id === after) + 1);
      hasMore = list.length > limit;
    }
    const data = list.slice(0, limit).map((e) => ({
      id: e.id,
      object: 'event',
      api_version: '2025-09-30.clover',
      created: e.created,
      data: {
        object: e.objectJson !== undefined ? `\u0000raw:${e.id}` : { id: `in_${e.id.slice(4)}`, object: 'invoice', amount_paid: 2000 },
      },
      livemode: false,
      pending_webhooks: 1,
      request: { id: null, idempotency_key: null },
      type: e.type,
    }));
    const raw = list.slice(0, limit).filter((e) => e.objectJson !== undefined);
    if (raw.length === 0) return send(200, { object: 'list', data, has_more: fault === 'loop' ? true : hasMore, url: '/v1/events' });
    // Raw payloads spliced into the text, as a server with them stored as text would send them.
    let text = JSON.stringify({ object: 'list', data, has_more: hasMore, url: '/v1/events' });
    for (const e of raw) text = text.replace(JSON.stringify(`\u0000raw:${e.id}`), () => e.objectJson as string);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(text);
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    urls,
    rateLimited,
    appearedAt,
    /** New events become visible now. */
    add(...more: StripeEvent[]) {
      const now = Date.now();
      for (const e of more) {
        events.push(e);
        appearedAt.set(e.id, now);
      }
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
