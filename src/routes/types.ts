/**
 * Routes: which local service each stored delivery goes to. A rule names a provider (or any), the
 * event types it takes (patterns), and a target; rules are tried in order and the first that
 * matches wins; a delivery no rule takes goes to the default (`--forward-to`, or nowhere).
 */

/** Where a route sends its rows: a service, nowhere (stored and marked done), or nowhere yet (held until requeued). */
export type RouteTarget = { kind: 'url'; url: URL } | { kind: 'drop' } | { kind: 'hold' };

export interface Route {
  /** What rows record and `requeue --route` selects by. */
  name: string;
  /** A provider's name, or `*` for every provider listen receives. */
  provider: string;
  /** Event-type patterns: `invoice.paid`, `invoice.*`, `issues` (also `issues.opened`), `*`. */
  events: readonly string[];
  target: RouteTarget;
}

/** The route a delivery no rule takes goes to. */
export const DEFAULT_ROUTE = 'default';
