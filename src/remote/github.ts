import { jsonText } from '../util/json-text.js';
import { createSign } from 'node:crypto';
import { UsageError } from '../util/errors.js';
import { PageGuard, apiGet, apiUrl } from './client.js';
import type { ApiRequest, RequestLimits } from './client.js';
import type { FetchedEvent, SenderRecord, SentEvent } from './types.js';

/** Whose webhook: a repository's, an organization's (each with its hook id), or the GitHub App's own. */
export type GithubHook = { repo: string; hookId: number } | { org: string; hookId: number } | { app: true };

export interface GithubListOptions extends GithubApiOptions {
  /** Unix seconds, inclusive. */
  since: number;
  until: number;
  /** Only deliveries GitHub saw fail (status=failure: a status code of 400–599, or none). */
  onlyFailed?: boolean;
  /** Only these events (`issues`, or `issues.opened`): GitHub's list has no such filter, so it is applied here. */
  types?: readonly string[];
}

/** GitHub keeps webhook deliveries for three days; before that, its record is empty. */
export const GITHUB_RETENTION_SECONDS = 3 * 24 * 3600;

/** One delivery in GitHub's list (https://docs.github.com/en/rest/webhooks/repo-deliveries). */
export interface HookDelivery {
  id: number;
  guid: string;
  delivered_at: string;
  redelivery: boolean;
  status: string;
  status_code: number;
  event: string;
  action: string | null;
}

/** The path of a hook's deliveries: repos/{owner}/{repo}/hooks/{id}, orgs/{org}/hooks/{id}, or app/hook. */
export function deliveriesPath(hook: GithubHook): string {
  if ('app' in hook) return '/app/hook/deliveries';
  if ('org' in hook) return `/orgs/${encodeURIComponent(hook.org)}/hooks/${hook.hookId}/deliveries`;
  const [owner, repo] = hook.repo.split('/') as [string, string];
  return `/repos/${encodeURIComponent(owner)}/${encodeURIComponent(repo)}/hooks/${hook.hookId}/deliveries`;
}

export interface GithubApiOptions extends RequestLimits {
  apiBase: string;
  /** A token (repository and organization hooks) or, for the app hook, a JWT — made anew for each request when a function. */
  token: string | (() => string);
  hook: GithubHook;
}

export interface GithubPage {
  deliveries: HookDelivery[];
  /** The cursor of the next (older) page, from the Link header. */
  next?: string;
  headers: Headers;
}

function githubRequest(o: GithubApiOptions): ApiRequest {
  // An app's JWT lives 10 minutes at most: a long run (many pages, rate-limit waits) makes one per request.
  const token = typeof o.token === 'function' ? o.token() : o.token;
  const { apiBase: _b, token: _t, hook: _h, ...limits } = o;
  return {
    ...limits,
    name: 'the GitHub API',
    headers: {
      authorization: `Bearer ${token}`,
      accept: 'application/vnd.github+json',
      'x-github-api-version': '2022-11-28',
      'user-agent': 'hookdrill',
    },
    secret: token,
  };
}

/** One page of a hook's deliveries, newest first (per_page 100; `cursor` from the previous page's Link). */
export async function githubDeliveriesPage(o: GithubApiOptions, q: { cursor?: string; onlyFailed?: boolean }): Promise<GithubPage> {
  const url = apiUrl(o.apiBase, deliveriesPath(o.hook));
  url.searchParams.set('per_page', '100');
  if (q.onlyFailed) url.searchParams.set('status', 'failure');
  if (q.cursor) url.searchParams.set('cursor', q.cursor);
  const { body, headers } = await apiGet(url, githubRequest(o));
  if (!Array.isArray(body) || body.some((d) => !isDelivery(d)))
    throw new UsageError(`the GitHub API at ${url.origin} answered something that is not a list of deliveries`);
  const next = nextCursor(headers.get('link'));
  return { deliveries: body as HookDelivery[], ...(next ? { next } : {}), headers };
}

function isDelivery(d: unknown): boolean {
  const v = d as Partial<HookDelivery> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.id === 'number' &&
    typeof v.guid === 'string' &&
    typeof v.event === 'string' &&
    typeof v.delivered_at === 'string' &&
    !Number.isNaN(Date.parse(v.delivered_at))
  );
}

/** One delivery's request as GitHub sent it: `GET …/deliveries/{id}` → request.headers and request.payload. */
export async function githubDeliveryRequest(o: GithubApiOptions, id: number, guid: string): Promise<FetchedEvent> {
  const { body } = await apiGet(apiUrl(o.apiBase, `${deliveriesPath(o.hook)}/${id}`), githubRequest(o));
  const req = (body as { request?: { headers?: Record<string, string>; payload?: unknown } }).request;
  if (!req || req.payload === undefined || req.payload === null)
    throw new UsageError(`the GitHub API gave no payload for delivery ${guid}`);
  return { body: Buffer.from(jsonText(req.payload, `GitHub delivery ${guid}`)), headers: keptHeaders(req.headers ?? {}) };
}

/** The type hookdrill names a delivery by: `issues.opened`, or `push` for an event with no action. */
export function deliveryType(d: HookDelivery): string {
  return d.action ? `${d.event}.${d.action}` : d.event;
}

/** What GitHub's rate-limit headers say is left of this credential's hour (undefined where it did not say). */
export function rateBudget(headers: Headers): { remaining: number; limit: number; resetAt: number } | undefined {
  const remaining = Number(headers.get('x-ratelimit-remaining') ?? Number.NaN);
  const limit = Number(headers.get('x-ratelimit-limit') ?? Number.NaN);
  const reset = Number(headers.get('x-ratelimit-reset') ?? Number.NaN);
  if (!Number.isFinite(remaining) || !Number.isFinite(limit)) return undefined;
  return { remaining, limit, resetAt: Number.isFinite(reset) ? reset * 1000 : 0 };
}

/**
 * GitHub's record of a hook's deliveries, newest first, paged by the cursor in the Link header
 * (`rel="next"`, per_page up to 100) until the deliveries are older than `since` — the API has no
 * time filter (https://docs.github.com/en/rest/webhooks/repo-deliveries,
 * …/orgs/webhooks#list-deliveries-for-an-organization-webhook, …/apps/webhooks#list-deliveries-for-an-app-webhook,
 * https://docs.github.com/en/rest/using-the-rest-api/using-pagination-in-the-rest-api). A
 * redelivery keeps its guid (the X-GitHub-Delivery the receiver keys by), so one event is one guid
 * however many attempts it had; its status is its newest attempt's. The payload and headers come
 * from `GET …/deliveries/{id}` when asked for (`request.headers`, `request.payload`).
 */
export function githubRecord(o: GithubListOptions): SenderRecord {
  const attemptOf = new Map<string, number>();
  const { since, until, onlyFailed, types, ...api } = o;
  const wanted = (type: string) => !types?.length || types.some((t) => t === type || t === type.split('.')[0]);
  return {
    provider: 'github',
    async *list(onListed) {
      const seen = new Map<string, SentEvent>();
      const guard = new PageGuard('the GitHub API');
      let read = 0;
      let cursor: string | undefined;
      for (;;) {
        guard.next(cursor);
        const page = await githubDeliveriesPage(api, { ...(cursor ? { cursor } : {}), ...(onlyFailed ? { onlyFailed } : {}) });
        let older = false;
        read += page.deliveries.length;
        onListed?.(read);
        for (const d of page.deliveries) {
          const at = Math.floor(Date.parse(d.delivered_at) / 1000);
          if (at < since) {
            older = true;
            continue;
          }
          if (at > until) continue;
          const type = deliveryType(d);
          if (!wanted(type)) continue;
          const known = seen.get(d.guid);
          // Newest first: the first attempt seen has the status that stands; the last seen, the time it was first sent.
          if (known) known.created = Math.min(known.created, at);
          else {
            seen.set(d.guid, { id: d.guid, type, created: at, status: d.status });
            attemptOf.set(d.guid, d.id);
          }
        }
        cursor = older ? undefined : page.next;
        if (!cursor) break;
      }
      yield* seen.values();
    },
    async fetch(e: SentEvent): Promise<FetchedEvent> {
      const id = attemptOf.get(e.id);
      if (id === undefined) throw new UsageError(`delivery ${e.id} was not in GitHub's list`);
      return githubDeliveryRequest(api, id, e.id);
    },
  };
}

/** The cursor of the Link header's rel="next" URL: `<…?per_page=100&cursor=v1_123>; rel="next"`. */
export function nextCursor(link: string | null): string | undefined {
  for (const part of (link ?? '').split(',')) {
    const m = /<([^>]+)>\s*;\s*rel="?next"?/.exec(part);
    if (m?.[1]) return new URL(m[1], 'http://x').searchParams.get('cursor') ?? undefined;
  }
  return undefined;
}

/** What says what the delivery is; never its signatures (they are for the secret GitHub holds). */
function keptHeaders(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = { 'content-type': 'application/json' };
  for (const [name, value] of Object.entries(headers)) {
    const n = name.toLowerCase();
    if (n.startsWith('x-github-') || n === 'user-agent') out[n] = String(value);
  }
  return out;
}

/**
 * A GitHub App's JWT (RS256; iat 60 s in the past for clock drift, 9 minutes' life), made from its
 * id and private key — what the app hook's deliveries API takes
 * (https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-json-web-token-jwt-for-a-github-app).
 */
export function appJwt(appId: string, privateKeyPem: string, now = Date.now()): string {
  const b64 = (v: object | Buffer) => (Buffer.isBuffer(v) ? v : Buffer.from(JSON.stringify(v))).toString('base64url');
  const iat = Math.floor(now / 1000) - 60;
  const unsigned = `${b64({ alg: 'RS256', typ: 'JWT' })}.${b64({ iat, exp: iat + 600, iss: appId })}`;
  let signature: Buffer;
  try {
    signature = createSign('RSA-SHA256').update(unsigned).sign(privateKeyPem);
  } catch {
    throw new UsageError('the GitHub App private key could not sign a JWT: give the PEM of the app (-----BEGIN RSA PRIVATE KEY-----)');
  }
  return `${unsigned}.${b64(signature)}`;
}
