import type { Provider } from './types.js';

/**
 * A body whose secret travels in it as it is (a field scheme: Microsoft Graph's `clientState` in
 * each notification) is kept without it. The inbox is read by `inspect`, the inspector, exports
 * and backups, and a secret kept in every row would be printed by each of them; nothing signs the
 * bytes (the secret is the whole of the proof), so a body rewritten without it loses nothing a
 * receiver could verify. A forward, requeue or replay writes the secret back (withSecret), as the
 * sender would have sent it, with the secret the forwarder holds now.
 */
function secretField(provider: Provider): NonNullable<Provider['bodySignature']> | undefined {
  return provider.tokenOnly === 'field' ? provider.bodySignature : undefined;
}

/** The body as the inbox keeps it: the secret field taken out of every item, where the scheme carries one. */
export function withoutSecret(provider: Provider, body: Buffer): Buffer {
  const field = secretField(provider);
  return field ? field.place(body, undefined) : body;
}

/** A kept body as the sender sends it: the secret written back into every item (the first of `secrets`, the current one). */
export function withSecret(provider: Provider, body: Buffer, secrets: readonly string[]): Buffer {
  const field = secretField(provider);
  return field && secrets[0] !== undefined ? field.place(body, secrets[0]) : body;
}
