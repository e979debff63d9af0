/** A request listen --ui refused, as the inspector's "why?" and `hookdrill verify --ui` are given it. */
import { explain } from '../verify/explain.js';
import { toRawHttp } from '../verify/request.js';
import type { RefusedLog } from './refused.js';
import type { RefusedDetail } from './server.js';

/** One refused request, held whole, as raw HTTP and explained (undefined once pushed out). */
export function explainRefused(
  log: RefusedLog,
  id: string,
  provider: string | undefined,
  secrets: readonly string[],
): RefusedDetail | undefined {
  const c = log.capture(id);
  if (!c) return undefined;
  const raw = toRawHttp(c.method, c.path, c.headers, c.body);
  const explanation = explain(
    { headers: c.headers, body: c.body, arrivedAtMs: c.arrivedAtMs, source: `refused request ${id}` },
    { ...(provider ? { provider } : {}), secrets },
  );
  return { id, at: c.arrivedAtMs, raw: raw.toString('base64'), explanation };
}
