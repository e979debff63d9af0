import { UsageError } from '../util/errors.js';
import type { Route } from '../routes/types.js';
import type { ReceiveEntry } from '../project/receive.js';
import type { ForwardedRoute } from './forwarded.js';

/**
 * `check --route NAME`: the route the project file names, as what check needs to judge its target
 * — the target URL, the provider whose forwards it gets, the secrets listen re-signs them with
 * (its `receive` entry's variables, or --secret for a single-provider listen), and the route's
 * event types. Every fault is one line; a secret is never quoted. Light: the CLI reads it in options().
 */
export function routeUnderCheck(o: {
  name: string;
  routes: readonly Route[] | undefined;
  receive: readonly ReceiveEntry[] | undefined;
  /** --provider, where given: needed only for a route of every provider (`"provider": "*"`). */
  provider: string | undefined;
  /** --secret and its sources: they win over the receive entry's variables. */
  secrets: readonly string[];
  env: NodeJS.ProcessEnv;
  file: string;
}): { url: string; provider: string; secrets: string[]; forward: ForwardedRoute } {
  const where = `check --route ${o.name}`;
  if (!o.routes?.length)
    throw new UsageError(
      `${where}: no routes to read — the project file (${o.file} in this directory) names none; listen's routes are read from there`,
    );
  const route = o.routes.find((r) => r.name === o.name);
  if (!route) throw new UsageError(`${where}: ${o.file} has no route of that name (routes: ${o.routes.map((r) => r.name).join(', ')})`);
  if (route.target.kind !== 'url')
    throw new UsageError(
      `${where}: the route ${route.target.kind === 'drop' ? 'drops its events' : 'holds its events until requeued'} ("to": "${route.target.kind}"): it forwards to no service, so there is none to check`,
    );
  let provider = route.provider;
  if (provider === '*') {
    if (!o.provider) throw new UsageError(`${where}: the route takes every provider's events: say whose forwards to judge with --provider`);
    provider = o.provider;
  } else if (o.provider !== undefined && o.provider !== provider) {
    throw new UsageError(`${where}: the route takes ${provider}'s events, not ${o.provider}'s: leave --provider out`);
  }
  const entry = o.receive?.find((e) => e.provider === provider);
  if (o.receive && !entry) throw new UsageError(`${where}: ${o.file}'s "receive" has no ${provider}: listen would not take its deliveries`);
  const secrets =
    o.secrets.length > 0
      ? [...o.secrets]
      : (entry?.secretEnv ?? []).map((name) => {
          const v = o.env[name];
          if (!v) throw new UsageError(`${o.file}: receive.${provider}.secretEnv names ${name}, which is not set (or give --secret)`);
          return v;
        });
  return { url: route.target.url.href, provider, secrets, forward: { name: route.name, events: route.events } };
}
