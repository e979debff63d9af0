import { UsageError } from '../util/errors.js';
import { knownProviderNames } from '../providers/names.js';
import { displayUrl, parseUrl } from '../util/options.js';
import type { EventFilter } from './match.js';
import type { Route, RouteTarget } from './types.js';
import { DEFAULT_ROUTE } from './types.js';

/**
 * Routes as given: `--route [NAME=]PROVIDER:PATTERN[,PATTERN]=TARGET` on the command line, or the
 * project file's `routes` list. Every fault is one line naming what is wrong.
 */

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

/** `invoice.paid`, `invoice.*`, `issues`, `*`: a star only alone or as the last part, after a dot. */
export function checkPattern(pattern: string, where: string): string {
  const p = pattern.trim();
  if (p === '') throw new UsageError(`${where}: an empty event-type pattern`);
  if (/[\s=,:]/.test(p)) throw new UsageError(`${where}: event-type pattern "${p}" holds a space, =, , or :`);
  const star = p.indexOf('*');
  if (star !== -1 && !(p === '*' || (p.endsWith('.*') && star === p.length - 1 && p.length > 2)))
    throw new UsageError(`${where}: pattern "${p}": * stands alone (*) or ends one after a dot (invoice.*), nowhere else`);
  return p;
}

function checkProvider(provider: string, where: string): string {
  const p = provider.trim();
  if (p === '*') return p;
  const known = knownProviderNames();
  if (!known.includes(p)) throw new UsageError(`${where}: no provider "${p}" (one of: ${known.join(', ')}, or * for any)`);
  return p;
}

/** A target: `drop`, `hold`, or an http(s) URL. */
export function parseTarget(text: string, where: string): RouteTarget {
  const t = text.trim();
  if (t === 'drop') return { kind: 'drop' };
  if (t === 'hold') return { kind: 'hold' };
  return { kind: 'url', url: parseUrl(t, `${where}: target`) };
}

function checkName(name: string, where: string): string {
  if (!NAME.test(name))
    throw new UsageError(`${where}: route name "${name}": letters, digits, _ . - (at most 64), starting with a letter or digit`);
  if (name === DEFAULT_ROUTE)
    throw new UsageError(`${where}: "${DEFAULT_ROUTE}" is the name of the route nothing else takes: choose another`);
  return name;
}

/** One `--route` value. Its name, unless given, is its match: `stripe:invoice.*`. */
export function parseRouteFlag(text: string): Route {
  // The value is quoted back without a URL's password: a target may carry one.
  const shown = text.replace(/\/\/[^/]*@/, '//***@');
  const where = `--route ${shown}`;
  const eq = text.indexOf('=');
  if (eq === -1) throw new UsageError(`${where}: expected PROVIDER:PATTERN=TARGET (stripe:invoice.*=http://127.0.0.1:4000/billing)`);
  let name: string | undefined;
  let rest = text;
  // A match always holds a colon before its =; a name never does.
  if (!text.slice(0, eq).includes(':')) {
    name = checkName(text.slice(0, eq).trim(), where);
    rest = text.slice(eq + 1);
  }
  const eq2 = rest.indexOf('=');
  const colon = rest.indexOf(':');
  if (eq2 === -1 || colon === -1 || colon > eq2)
    throw new UsageError(`${where}: expected [NAME=]PROVIDER:PATTERN=TARGET (billing=stripe:invoice.*=http://127.0.0.1:4000/billing)`);
  const provider = checkProvider(rest.slice(0, colon), where);
  const events = rest
    .slice(colon + 1, eq2)
    .split(',')
    .map((p) => checkPattern(p, where));
  const target = parseTarget(rest.slice(eq2 + 1), where);
  return { name: name ?? `${provider}:${events.join(',')}`, provider, events, target };
}

/** The project file's `routes`: a list of `{name?, provider?, events?, to}`. */
export function parseRouteList(value: unknown, where: string): Route[] {
  if (!Array.isArray(value)) throw new UsageError(`${where}: "routes" must be a list of {name, provider, events, to}`);
  return value.map((item, i) => {
    const at = `${where}: routes[${i}]`;
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      throw new UsageError(`${at}: expected an object {name, provider, events, to}`);
    const r = item as Record<string, unknown>;
    for (const key of Object.keys(r))
      if (!['name', 'provider', 'events', 'to'].includes(key))
        throw new UsageError(`${at}: unknown key "${key}" (known: name, provider, events, to)`);
    if (typeof r.to !== 'string' || r.to === '') throw new UsageError(`${at}: "to" must be a URL, "drop" or "hold"`);
    if (/^[a-z][a-z0-9+.-]*:\/\/[^/@\s]*:[^@\s]+@/i.test(r.to))
      throw new UsageError(`${at}: "to" holds a password in the URL; leave it out (the file is shared)`);
    if (r.provider !== undefined && (typeof r.provider !== 'string' || r.provider === ''))
      throw new UsageError(`${at}: "provider" must be a provider's name, or * for any`);
    const events = r.events === undefined ? ['*'] : typeof r.events === 'string' ? [r.events] : r.events;
    if (!Array.isArray(events) || events.length === 0 || !events.every((e) => typeof e === 'string'))
      throw new UsageError(`${at}: "events" must be a pattern (invoice.*) or a list of them`);
    const provider = checkProvider(typeof r.provider === 'string' ? r.provider : '*', at);
    const patterns = (events as string[]).map((e) => checkPattern(e, at));
    if (r.name !== undefined && typeof r.name !== 'string') throw new UsageError(`${at}: "name" must be a string`);
    const name = r.name !== undefined ? checkName(r.name, at) : `${provider}:${patterns.join(',')}`;
    return { name, provider, events: patterns, target: parseTarget(r.to, at) };
  });
}

/** Two routes of one name could not be told apart in a row, nor selected apart by `requeue --route`. */
export function checkUniqueNames(routes: readonly Route[], where: string): void {
  const seen = new Set<string>();
  for (const r of routes) {
    if (seen.has(r.name)) throw new UsageError(`${where}: two routes are named "${r.name}": give each its own name`);
    seen.add(r.name);
  }
}

/**
 * `listen --events invoice.paid,github:issues`: as the Stripe CLI's `listen --events`, a list
 * of event types to keep (patterns here too); `*` keeps all.
 */
export function parseEventsFlag(texts: readonly string[]): EventFilter {
  const entries = texts
    .flatMap((t) => t.split(','))
    .map((t) => t.trim())
    .filter((t) => t !== '')
    .map((t) => {
      const where = `--events ${t}`;
      const colon = t.indexOf(':');
      return colon === -1
        ? { provider: '*', pattern: checkPattern(t, where) }
        : { provider: checkProvider(t.slice(0, colon), where), pattern: checkPattern(t.slice(colon + 1), where) };
    });
  if (entries.length === 0)
    throw new UsageError('--events is empty: give event types (invoice.paid,invoice.payment_failed), or leave it out for all');
  return { entries };
}

/** A route as a person reads it (ready line, inspect): `billing: stripe invoice.*,customer.* → http://…`. */
export function describeTarget(target: RouteTarget): string {
  return target.kind === 'url' ? displayUrl(target.url) : target.kind;
}
