/** A request listen --ui refused, as the inspector's "why?" and `hookdrill verify --ui` are given it. */
import type { RefusedCapture } from '../receiver/index.js';
import { requestUrl } from '../receiver/index.js';
import { explain } from '../verify/explain.js';
import { toRawHttp } from '../verify/request.js';
import type { RefusedDetail } from './server.js';

/**
 * What "why?" judges a refused request with: listen's provider, every secret it verifies with,
 * and how it derives the URL a URL-bound signature covers (its --public-url, or the request's own
 * as the trusted proxy gives it) — so the verdict is the one listen reached.
 */
export interface ExplainWith {
  provider?: string;
  secrets: string[];
  publicUrl?: string;
  trustProxy?: boolean;
}

/**
 * One refused request as raw HTTP, explained. Run on the inspector's thread: a client asking
 * "why?" again and again costs that thread, never the receiver's acknowledgements.
 */
export function explainRefused(c: RefusedCapture, id: string, w: ExplainWith): RefusedDetail {
  // Across a thread the body arrives as a Uint8Array.
  const body = Buffer.from(c.body);
  // Its Host as it arrived, so the raw request read again (verify --ui) knows where it was posted.
  const raw = toRawHttp(c.method, c.path, c.url && URL.canParse(c.url) ? { host: new URL(c.url).host, ...c.headers } : c.headers, body);
  const url = w.publicUrl ?? (w.trustProxy ? requestUrl({ headers: c.headers, url: c.path }, { trustProxy: true }) : undefined);
  const explanation = explain(
    {
      headers: c.headers,
      body,
      arrivedAtMs: c.arrivedAtMs,
      source: `refused request ${id}`,
      // As it arrived at listen: what the diagnosis compares the URL listen verified over with.
      ...(c.url ? { url: c.url } : {}),
    },
    // Listen's own URL, exactly: the verdict is the one listen reached.
    { ...(w.provider ? { provider: w.provider } : {}), secrets: w.secrets, ...(url ? { url } : {}) },
  );
  return { id, at: c.arrivedAtMs, raw: raw.toString('base64'), explanation };
}
