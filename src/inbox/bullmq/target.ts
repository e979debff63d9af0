import { InboxOpenError } from '../types.js';

/**
 * A BullMQ inbox target: `redis://[user:password@]host[:port]/QUEUE`, or with a database number
 * `redis://host:port/DB/QUEUE`; `rediss://` is the same over TLS. `?prefix=NAME` names BullMQ's key
 * prefix (default `bull`). Parsing imports no driver: `--help` and flag checks stay cheap.
 */
export interface RedisTarget {
  host: string;
  port: number;
  db: number;
  username: string | undefined;
  password: string | undefined;
  tls: boolean;
  queue: string;
  prefix: string;
  /** For messages and reports: the password never shown. */
  display: string;
  /** host:port, as messages name the server. */
  server: string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

export function isRedisTarget(target: string): boolean {
  return /^rediss?:\/\//i.test(target);
}

export function parseRedisTarget(target: string): RedisTarget {
  const bad = (why: string) => new InboxOpenError(`--inbox ${maskRedisPassword(target)}: ${why}`);
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw bad('not a valid redis:// URL (redis://host:port/QUEUE)');
  }
  const tls = url.protocol.toLowerCase() === 'rediss:';
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  if (!host) throw bad('no host (redis://host:port/QUEUE)');
  const port = url.port ? Number(url.port) : 6379;
  const segments = url.pathname
    .split('/')
    .filter((s) => s !== '')
    .map((s) => {
      try {
        return decodeURIComponent(s);
      } catch {
        throw bad(`${JSON.stringify(s)} is not a valid path segment`);
      }
    });
  let db = 0;
  let queue: string | undefined;
  if (segments.length === 1) {
    queue = segments[0];
    if (/^\d+$/.test(queue ?? '')) throw bad(`a queue name is needed after the database number (redis://host:port/${queue}/QUEUE)`);
  } else if (segments.length === 2) {
    if (!/^\d{1,5}$/.test(segments[0] ?? ''))
      throw bad('with two path parts the first is the database number (redis://host:port/DB/QUEUE)');
    db = Number(segments[0]);
    queue = segments[1];
  } else if (segments.length === 0) {
    throw bad('no queue name (redis://host:port/QUEUE)');
  } else {
    throw bad('too many path parts (redis://host:port/QUEUE or redis://host:port/DB/QUEUE)');
  }
  if (!queue || !NAME.test(queue))
    throw bad(`queue name ${JSON.stringify(queue ?? '')}: letters, digits, '.', '_' and '-' only (BullMQ refuses ':'), up to 128`);
  let prefix = 'bull';
  for (const [key, value] of url.searchParams) {
    if (key !== 'prefix') throw bad(`unknown parameter ?${key}= (only ?prefix= is understood)`);
    if (!NAME.test(value)) throw bad(`prefix ${JSON.stringify(value)}: letters, digits, '.', '_' and '-' only`);
    prefix = value;
  }
  const username = url.username ? decodeURIComponent(url.username) : undefined;
  const password = url.password ? decodeURIComponent(url.password) : undefined;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  const server = `${hostPart}:${port}`;
  const auth = password !== undefined ? `${username ?? ''}:***@` : username ? `${username}@` : '';
  const display = `${tls ? 'rediss' : 'redis'}://${auth}${server}/${segments.length === 2 ? `${db}/` : ''}${queue}${
    prefix !== 'bull' ? `?prefix=${prefix}` : ''
  }`;
  return { host, port, db, username: username || undefined, password, tls, queue, prefix, display, server };
}

/** A Redis URL as it may be shown; one that does not parse shows with anything password-like masked. */
export function displayRedis(target: string): string {
  try {
    return parseRedisTarget(target).display;
  } catch {
    return maskRedisPassword(target);
  }
}

/** Passwords out of free text: the userinfo of any redis:// or rediss:// URL, up to its last @. */
export function maskRedisPassword(text: string): string {
  return text.replace(/(rediss?:\/\/[^:/@\s]*:)\S*@/gi, '$1***@');
}
