import { InboxOpenError } from '../types.js';

/** Query parameters of a connection string that carry a credential: never shown. */
const SECRET_PARAMS = ['password', 'sslpassword', 'sslkey', 'sslcert', 'passfile'];

export interface PostgresTarget {
  /** The connection string as given, without hookdrill's own `schema` and `options` parameters. */
  connectionString: string;
  schema: string;
  /** `options` from the URL (-c settings), merged with hookdrill's own. */
  options: string | undefined;
  /** For messages and reports: no password, in any place a URL can hold one. */
  display: string;
}

export function isPostgresTarget(target: string): boolean {
  return /^postgres(ql)?:\/\//i.test(target);
}

/** `postgres://user:pass@host:port/db?schema=name`; the schema defaults to `hookdrill`. */
export function parseTarget(target: string, schema?: string): PostgresTarget {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new InboxOpenError(`--inbox ${maskPassword(target)}: not a valid postgres:// URL`);
  }
  const name = schema ?? url.searchParams.get('schema') ?? 'hookdrill';
  url.searchParams.delete('schema');
  const options = url.searchParams.get('options') ?? undefined;
  url.searchParams.delete('options');
  if (!/^[A-Za-z_][A-Za-z0-9_]{0,62}$/.test(name)) {
    throw new InboxOpenError(`schema ${JSON.stringify(name)}: letters, digits and _ only, starting with a letter or _`);
  }
  const shown = new URL(url.toString());
  if (shown.password) shown.password = '***';
  for (const p of SECRET_PARAMS) if (shown.searchParams.has(p)) shown.searchParams.set(p, '***');
  shown.searchParams.set('schema', name);
  return { connectionString: url.toString(), schema: name, options, display: decodeURIComponent(shown.toString()) };
}

/** A Postgres URL as it may be shown; a target that does not parse shows with anything password-like masked. */
export function displayPostgres(target: string): string {
  try {
    return parseTarget(target).display;
  } catch {
    return maskPassword(target);
  }
}

/**
 * Passwords out of free text (an error message that quotes a connection string): the userinfo of
 * any postgres:// URL up to its last @, and password-like query parameters.
 */
export function maskPassword(text: string): string {
  return text
    .replace(/(postgres(?:ql)?:\/\/[^:/@\s]*:)\S*@/gi, '$1***@')
    .replace(new RegExp(`([?&](?:${SECRET_PARAMS.join('|')})=)[^&\\s]*`, 'gi'), '$1***');
}
