import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A stand-in for GitHub's webhook deliveries API, serving the documented shapes over real HTTP:
 * - GET /repos/{owner}/{repo}/hooks/{id}/deliveries, /orgs/{org}/hooks/{id}/deliveries and
 *   /app/hook/deliveries: per_page (max 100), cursor, status=success|failure; newest first; a JSON
 *   array of { id, guid, delivered_at, redelivery, duration, status, status_code, event, action,
 *   installation_id, repository_id }; the next page in a Link header (rel="next", ?cursor=)
 *   (https://docs.github.com/en/rest/webhooks/repo-deliveries#list-deliveries-for-a-repository-webhook,
 *   https://docs.github.com/en/rest/using-the-rest-api/using-pagination-in-the-rest-api);
 * - GET …/deliveries/{delivery_id}: the same fields plus request { headers, payload } and
 *   response { headers, payload } (…#get-a-delivery-for-a-repository-webhook);
 * - Authorization: Bearer <token>, else 401 { message: 'Bad credentials', documentation_url };
 * - a primary rate limit on the requests named in `rateLimitOn`: 403 with x-ratelimit-remaining: 0
 *   and x-ratelimit-reset (epoch seconds); a secondary one on those in `secondaryOn`: 403 with
 *   Retry-After and requests still remaining (https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api);
 * - 404 for the delivery of a guid in `gone` (past GitHub's retention since it was listed).
 */
export interface GithubDelivery {
  guid: string;
  event: string;
  action: string | null;
  /** Unix seconds. */
  at: number;
  statusCode: number;
  payload: unknown;
}

export async function startGithubApi(o: {
  token: string;
  /** Whose hook: the path prefix served, e.g. /repos/acme/shop/hooks/7. */
  hookPath: string;
  /** Every attempt, in any order (a redelivery is another entry with the same guid). */
  deliveries: GithubDelivery[];
  rateLimitOn?: number[];
  secondaryOn?: number[];
  gone?: string[];
  /** Checks the bearer token instead of comparing it (the app hook takes a JWT). */
  acceptToken?: (token: string) => boolean;
  /** The fault for request number n (1-based): a 503, a dropped connection, no answer, a Link back to the same page. */
  fault?: (n: number) => 'unavailable' | 'drop' | 'hang' | 'loop' | undefined;
}) {
  let requests = 0;
  const rateLimited: number[] = [];
  const detailFetches: number[] = [];
  // Attempt ids grow with time, as GitHub's do: those given at the start are numbered oldest first.
  let nextId = 1_000_000;
  const entries = [...o.deliveries]
    .sort((a, b) => a.at - b.at)
    .map((d) => ({ ...d, redelivery: false, id: nextId++ }))
    .sort((a, b) => b.at - a.at || b.id - a.id);
  const appearedAt = new Map<string, number>();
  const sockets = new Set<import('node:net').Socket>();
  const server = createServer((req, res) => {
    requests++;
    // Every answer carries the credential's budget, as GitHub's do.
    const budget = {
      'x-ratelimit-limit': '5000',
      'x-ratelimit-remaining': String(Math.max(0, 5000 - requests)),
      'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 3600),
    };
    const send = (status: number, body: unknown, headers: Record<string, string> = {}) => {
      res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...budget, ...headers });
      res.end(JSON.stringify(body));
    };
    const fault = o.fault?.(requests);
    if (fault === 'unavailable') return send(503, { message: 'Service Unavailable' });
    if (fault === 'drop') return req.socket.destroy();
    if (fault === 'hang') return;
    const token = String(req.headers.authorization ?? '').replace(/^Bearer /, '');
    if (!(o.acceptToken ? o.acceptToken(token) : token === o.token))
      return send(401, { message: 'Bad credentials', documentation_url: 'https://docs.github.com/rest', status: '401' });
    if (o.rateLimitOn?.includes(requests)) {
      rateLimited.push(requests);
      return send(
        403,
        {
          message: 'API rate limit exceeded for user ID 1.',
          documentation_url: 'https://docs.github.com/rest/overview/rate-limits-for-the-rest-api',
        },
        { 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(Math.floor(Date.now() / 1000) + 1) },
      );
    }
    if (o.secondaryOn?.includes(requests)) {
      rateLimited.push(requests);
      return send(
        403,
        { message: 'You have exceeded a secondary rate limit. Please wait a few minutes before you try again.' },
        { 'retry-after': '1', 'x-ratelimit-remaining': '4321' },
      );
    }
    const url = new URL(req.url ?? '/', 'http://x');
    const list = `${o.hookPath}/deliveries`;
    const item = (e: (typeof entries)[number]) => ({
      id: e.id,
      guid: e.guid,
      delivered_at: new Date(e.at * 1000).toISOString().replace('.000Z', 'Z'),
      redelivery: e.redelivery,
      duration: 0.12,
      status:
        e.statusCode >= 200 && e.statusCode < 300
          ? 'OK'
          : e.statusCode === 0
            ? 'failed to connect'
            : `Invalid HTTP Response: ${e.statusCode}`,
      status_code: e.statusCode,
      event: e.event,
      action: e.action,
      installation_id: null,
      repository_id: 42,
    });
    if (url.pathname === list) {
      const perPage = Math.min(100, Number(url.searchParams.get('per_page') ?? 30));
      const status = url.searchParams.get('status');
      let rows = entries.filter((e) =>
        status === 'failure'
          ? !(e.statusCode >= 200 && e.statusCode < 400)
          : status === 'success'
            ? e.statusCode >= 200 && e.statusCode < 400
            : true,
      );
      const cursor = url.searchParams.get('cursor');
      if (cursor) rows = rows.slice(rows.findIndex((e) => `v1_${e.id}` === cursor));
      const page = rows.slice(0, perPage);
      const next = fault === 'loop' ? (rows[0] ?? rows[perPage]) : rows[perPage];
      const headers: Record<string, string> = {};
      if (next)
        headers.link = `<http://api.github.test${list}?per_page=${perPage}${status ? `&status=${status}` : ''}&cursor=v1_${next.id}>; rel="next"`;
      return send(200, page.map(item), headers);
    }
    const m = new RegExp(`^${list.replace(/[/]/g, '\\/')}\\/(\\d+)$`).exec(url.pathname);
    const one = m ? entries.find((e) => e.id === Number(m[1])) : undefined;
    if (one && !o.gone?.includes(one.guid)) {
      detailFetches.push(one.id);
      return send(200, {
        ...item(one),
        url: `http://127.0.0.1/hook`,
        request: {
          headers: {
            Accept: '*/*',
            'X-GitHub-Delivery': one.guid,
            'X-GitHub-Event': one.event,
            'X-GitHub-Hook-ID': '7',
            'X-Hub-Signature': 'sha1=0000000000000000000000000000000000000000',
            'X-Hub-Signature-256': 'sha256=0000000000000000000000000000000000000000000000000000000000000000',
            'User-Agent': 'GitHub-Hookshot/abc1234',
            'content-type': 'application/json',
          },
          payload: one.payload,
        },
        response: { headers: {}, payload: null },
      });
    }
    send(404, { message: 'Not Found', documentation_url: 'https://docs.github.com/rest' });
  });
  server.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    rateLimited,
    detailFetches,
    appearedAt,
    /** New deliveries recorded now (ids after every earlier one); `redelivery` marks another attempt of a guid. */
    add(...more: (GithubDelivery & { redelivery?: boolean })[]) {
      const now = Date.now();
      for (const d of more) {
        entries.push({ ...d, redelivery: d.redelivery ?? false, id: nextId++ });
        appearedAt.set(d.guid, now);
      }
      entries.sort((a, b) => b.at - a.at || b.id - a.id);
    },
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
