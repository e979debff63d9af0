import { providers } from '../../src/providers/index.js';
import { spawnHookdrill } from './spawned.js';
import type { Spawned } from './spawned.js';

/** A Stripe invoice.paid event with this id, signed with the secret, POSTed to url. */
export function postSignedStripe(url: string, id: string, secret: string): Promise<Response> {
  const body = Buffer.from(JSON.stringify({ id, object: 'event', type: 'invoice.paid', data: { object: {} } }));
  const headers = providers.stripe.sign(body, [secret], { nowMs: Date.now(), deliveryId: id, eventType: 'invoice.paid' });
  return fetch(url, { method: 'POST', body, headers });
}

/** `hookdrill listen --json` for Stripe on a free port, once it says it is ready. */
export function startListen(
  inbox: string,
  secret: string,
  ...more: string[]
): Promise<{ p: Spawned; url: string; ready: Record<string, unknown> }> {
  return startListenFor('stripe', inbox, secret, ...more);
}

/** `hookdrill listen --json` for any provider on a free port, once it says it is ready (the ready line too). */
export async function startListenFor(
  provider: string,
  inbox: string,
  secret: string,
  ...more: string[]
): Promise<{ p: Spawned; url: string; ready: Record<string, unknown> }> {
  const p = spawnHookdrill(['listen', '--json', '--port', '0', '--provider', provider, '--secret', secret, '--inbox', inbox, ...more]);
  const ready = await p.waitFor((l) => l.event === 'ready', 15_000);
  return { p, url: String(ready.url), ready };
}

/** SIGTERM each, and wait until all have exited. */
export async function stopAll(...ps: Spawned[]): Promise<void> {
  for (const p of ps) p.child.kill('SIGTERM');
  await Promise.all(ps.map((p) => p.exit));
}
