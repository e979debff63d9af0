import type { Provider } from './types.js';

/**
 * A request as it leaves: where the provider writes its signature into the body (Provider.bodySignature),
 * the signed fields `sign` carried as a header are written into the body and the carrier goes; for
 * every other provider, the request as it is. send, check and scenario pass every request through here.
 */
export function asSent(
  provider: Provider,
  body: Buffer,
  headers: Record<string, string>,
): { body: Buffer; headers: Record<string, string> } {
  const b = provider.bodySignature;
  if (!b) return { body, headers };
  const carrier = b.carrier.toLowerCase();
  const out: Record<string, string> = {};
  let carried: string | undefined;
  for (const [name, value] of Object.entries(headers)) {
    if (name.toLowerCase() === carrier) carried = value;
    else out[name] = value;
  }
  return { body: b.place(body, carried), headers: out };
}
