import type { Claimed } from '../inbox/index.js';
import { routeFor } from '../routes/match.js';
import type { Route, RouteTarget } from '../routes/types.js';
import { DEFAULT_ROUTE } from '../routes/types.js';
import type { Handler } from './index.js';
import { PermanentError } from './index.js';

/** The route a row takes, and where that sends it. */
export interface Routed {
  name: string;
  target: RouteTarget;
}

/**
 * Which route a claimed row takes: the one recorded with it when it still exists (a change of
 * routes applies to new deliveries), else the first rule that matches it now, else the default.
 */
export function resolveRoute(
  routes: readonly Route[],
  fallback: RouteTarget,
  row: Pick<Claimed, 'source' | 'eventType'> & { route?: string | undefined },
): Routed {
  if (row.route !== undefined) {
    if (row.route === DEFAULT_ROUTE) return { name: DEFAULT_ROUTE, target: fallback };
    const kept = routes.find((r) => r.name === row.route);
    if (kept) return { name: kept.name, target: kept.target };
  }
  const r = routeFor(routes, row.source, row.eventType);
  return r ? { name: r.name, target: r.target } : { name: DEFAULT_ROUTE, target: fallback };
}

/**
 * A handler that sends each row where its route says: a service (through that provider's
 * forwarder), nowhere (`drop`: done, nothing sent), or nowhere yet (`hold`: buried at once with a
 * reason that says so; `requeue --route NAME` sends it on, routed again).
 */
export function routingHandler(o: {
  routes: readonly Route[];
  fallback: RouteTarget;
  forwarder: (provider: string, url: URL) => Handler;
}): Handler {
  const forwarders = new Map<string, Handler>();
  return async (item) => {
    const { name, target } = resolveRoute(o.routes, o.fallback, item);
    if (target.kind === 'drop') return;
    if (target.kind === 'hold') throw new PermanentError(`held by route ${name}: requeue it to send it on`);
    const key = `${item.source} ${target.url.href}`;
    let forward = forwarders.get(key);
    if (!forward) {
      forward = o.forwarder(item.source, target.url);
      forwarders.set(key, forward);
    }
    await forward(item);
  };
}
