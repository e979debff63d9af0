import type { Provider } from './types.js';

/**
 * A URL with a query parameter added, written as the sender adds it: `&name=value` after a query,
 * `?name=value` where there is none, before any fragment. The same text is signed (sign's
 * `withQuery(ctx.url, …)`) and posted to (placeQuery), so a receiver that rebuilds the URL it was
 * requested at sees exactly what was signed.
 */
export function withQuery(url: string, param: string): string {
  const hash = url.indexOf('#');
  const [base, fragment] = hash === -1 ? [url, ''] : [url.slice(0, hash), url.slice(hash)];
  const q = base.indexOf('?');
  const sep = q === -1 ? '?' : base.endsWith('?') || base.endsWith('&') ? '' : '&';
  return `${base}${sep}${param}${fragment}`;
}

/**
 * The URL a request goes to and the headers it carries, where the provider's signing added to the
 * URL (Provider.queryPlaced: Twilio's bodySHA256): the carrier header taken out, what it held
 * appended to the query. Anything else: the URL and headers as they are.
 */
export function placeQuery(provider: Provider, url: URL, headers: Record<string, string>): { url: URL; headers: Record<string, string> } {
  const carrier = provider.queryPlaced?.carrier.toLowerCase();
  if (!carrier) return { url, headers };
  let carried: string | undefined;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === carrier) carried = value;
    else out[name] = value;
  }
  if (carried === undefined) return { url, headers: out };
  return { url: new URL(withQuery(url.href, carried)), headers: out };
}
