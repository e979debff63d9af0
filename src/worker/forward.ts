import { request } from 'undici';
import { endToEnd } from '../http-headers.js';
import { basicAuth } from '../options.js';
import type { Handler } from './index.js';


/**
 * A handler that POSTs each stored delivery to the user's app: the raw body and the original
 * headers (signature included, for apps that verify; its timestamp may be old by the time a retry
 * gets through), plus X-Hookdrill-* headers saying which delivery and attempt this is.
 * A 2xx means done; anything else throws, and the worker retries with backoff, then buries it.
 */
export function forwardHandler(target: URL, options: { timeoutMs: number }): Handler {
  return async (item) => {
    const headers = endToEnd(item.headers);
    headers['x-hookdrill-source'] = item.source;
    headers['x-hookdrill-delivery-id'] = item.deliveryId;
    headers['x-hookdrill-attempt'] = String(item.attempt);
    const auth = basicAuth(target);
    if (auth) headers.authorization = auth;
    const res = await request(target, {
      method: 'POST',
      headers,
      body: item.body ?? '',
      // One deadline for the whole exchange: undici's own timeouts reset with every chunk, so an
      // app that dribbles its answer could otherwise hold the row past its lease.
      signal: AbortSignal.timeout(options.timeoutMs),
    }).catch((err: unknown) => {
      const e = err as { code?: string; message?: string };
      throw new Error(`forward to ${target.origin} failed: ${e.code ?? e.message ?? String(err)}`);
    });
    const text = (
      await res.body.text().catch(() => {
        throw new Error(`forward target did not finish its answer within ${options.timeoutMs} ms`);
      })
    )
      .slice(0, 200)
      .replace(/\s+/g, ' ')
      .trim();
    if (res.statusCode < 200 || res.statusCode >= 300) {
      throw new Error(`forward target answered ${res.statusCode}${text ? `: ${text}` : ''}`);
    }
  };
}
