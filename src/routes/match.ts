import type { Route } from './types.js';

/**
 * Whether an event type matches a pattern. `*` matches every type, even none (a body too broken
 * to name one); `invoice.*` every type under `invoice.` (`invoice.paid`, `invoice.payment.failed`);
 * a name itself and its actions: GitHub names the event in X-GitHub-Event and the action in the
 * body, and hookdrill's type is both (`issues.opened`), so `issues` takes every issues event.
 * Exact otherwise: `invoice.paid` is not `invoice.paid_out`.
 */
export function typeMatches(pattern: string, type: string | undefined): boolean {
  if (pattern === '*') return true;
  if (type === undefined) return false;
  if (pattern.endsWith('.*')) return type.startsWith(pattern.slice(0, -1));
  return type === pattern || type.startsWith(`${pattern}.`);
}

/** The first rule that takes this provider's event, or undefined (the default's). */
export function routeFor(routes: readonly Route[], provider: string, type: string | undefined): Route | undefined {
  return routes.find((r) => (r.provider === '*' || r.provider === provider) && r.events.some((p) => typeMatches(p, type)));
}

/** `listen --events`: entries `invoice.paid` (any provider) or `github:issues` (that provider's only). */
export interface EventFilter {
  entries: readonly { provider: string; pattern: string }[];
}

/** Whether listen keeps a delivery: with no filter, every one. */
export function passesFilter(filter: EventFilter | undefined, provider: string, type: string | undefined): boolean {
  if (!filter) return true;
  return filter.entries.some((e) => (e.provider === '*' || e.provider === provider) && typeMatches(e.pattern, type));
}
