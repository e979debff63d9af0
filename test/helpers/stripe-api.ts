import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for Stripe's List Events endpoint, serving the documented shapes over real HTTP:
 * - GET /v1/events with created[gte] / created[lte], limit (max 100), starting_after, and
 *   delivery_success and types[]; newest first; { object: 'list', data, has_more, url }
 *   (https://docs.stripe.com/api/events/list, https://docs.stripe.com/api/pagination);
 * - Authorization: Bearer <key>, else 401 with an invalid_request_error whose message shows the
 *   key's last four characters, as Stripe's does (https://docs.stripe.com/api/errors);
 * - a 429 with Retry-After on the requests named in `rateLimitOn` (https://docs.stripe.com/rate-limits).
 */
export interface StripeEvent {
  id: string;
  type: string;
  created: number;
  delivered: boolean;
}

export async function startStripeApi(o: { key: string; events: StripeEvent[]; rateLimitOn?: number[] }) {
  let requests = 0;
  const rateLimited: number[] = [];
  const server = createServer((req, res) => {
    requests++;
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
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname !== '/v1/events') return send(404, { error: { type: 'invalid_request_error', message: 'Unrecognized request URL' } });
    const gte = Number(url.searchParams.get('created[gte]') ?? 0);
    const lte = Number(url.searchParams.get('created[lte]') ?? Number.MAX_SAFE_INTEGER);
    const limit = Math.min(100, Number(url.searchParams.get('limit') ?? 10));
    const onlyFailed = url.searchParams.get('delivery_success') === 'false';
    // types[]: exact names, or a prefix with a trailing * (invoice.*).
    const types = url.searchParams.getAll('types[]');
    const typed = (t: string) => !types.length || types.some((p) => (p.endsWith('*') ? t.startsWith(p.slice(0, -1)) : t === p));
    let list = o.events
      .filter((e) => e.created >= gte && e.created <= lte && (!onlyFailed || !e.delivered) && typed(e.type))
      .sort((a, b) => b.created - a.created || (a.id < b.id ? 1 : -1));
    const after = url.searchParams.get('starting_after');
    if (after) list = list.slice(list.findIndex((e) => e.id === after) + 1);
    const data = list.slice(0, limit).map((e) => ({ id: e.id, object: 'event', type: e.type, created: e.created, data: { object: {} } }));
    send(200, { object: 'list', data, has_more: list.length > limit, url: '/v1/events' });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    rateLimited,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}
