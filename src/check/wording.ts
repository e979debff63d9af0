import type { Provider } from '../providers/index.js';
import { formatDuration } from '../util/duration.js';

/**
 * Provider facts as check's messages state them, each read from the provider's own description
 * (its default profile's retries): a sentence written for Stripe ("the sender retries it for
 * days") was wrong for Discord, which never sends an interaction again.
 */

/** How long the provider keeps retrying a delivery (its default profile), or undefined when it never sends one again. */
export function retrySpan(p: Provider): string | undefined {
  const delays = p.profiles[p.defaultProfile]?.retryDelaysMs ?? [];
  return delays.length > 0 ? formatDuration(delays.reduce((a, b) => a + b, 0)) : undefined;
}

/** What the provider does with a delivery that failed: "Stripe retries it for 2d20h", or "Discord does not retry it". */
export function afterFailure(p: Provider): string {
  const span = retrySpan(p);
  return span ? `${p.title} retries it for ${span}` : `${p.title} does not retry it`;
}

/** After its timeout: "then it retries" or "then it gives up", as the profile says. */
export function afterTimeout(p: Provider): string {
  return retrySpan(p) ? 'then it retries' : 'then it gives up: it does not retry';
}

/**
 * How to take the raw body in the receiver's own language, told from the command that starts it
 * (--receiver); with none known, the rule alone and examples of several.
 */
const RAW_BODY: readonly { test: RegExp; how: string }[] = [
  { test: /(^|[\s/])go(\s|$)|\.go\b/, how: 'in Go, io.ReadAll(r.Body) and verify those bytes before any json.Unmarshal' },
  {
    test: /python|flask|django|gunicorn|uvicorn|\.py\b/,
    how: 'Flask: request.get_data(); Django: request.body; FastAPI/Starlette: await request.body()',
  },
  {
    test: /(^|[\s/])(node|npm|npx|tsx|bun|deno)(\s|$)|\.[cm]?[jt]s\b/,
    how: 'express.raw() on the webhook route, before any express.json()',
  },
  { test: /ruby|rails|rackup|puma|\.rb\b/, how: 'Rails: request.raw_post; Rack: request.body.read' },
  { test: /php/, how: "PHP: file_get_contents('php://input')" },
  { test: /java|\.jar\b|gradle|mvn|kotlin/, how: 'Spring: a @RequestBody byte[] (or String), not an object' },
];

export function rawBytesFix(receiver: string | undefined): string {
  const known = receiver ? RAW_BODY.find((r) => r.test.test(receiver)) : undefined;
  if (known) return `verify the raw bytes as they arrived (${known.how})`;
  return receiver
    ? 'verify the raw bytes as they arrived: read the request body as bytes, before any JSON parsing, and verify those'
    : 'verify the raw bytes as they arrived (e.g. express.raw() before any express.json(); Flask: request.get_data(); Go: io.ReadAll(r.Body))';
}
