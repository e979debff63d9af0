import { createHash, timingSafeEqual } from 'node:crypto';
import { UsageError } from '../util/errors.js';
import { headerValueProblem } from '../util/http-headers.js';
import type { CheckedDeclaration, TokenSignature } from './declaration.js';
import { signatureHeaderOf } from './declaration.js';
import { declaredDelivery, declaredIdentity, placeHeaders, withExtras } from './declared-common.js';
import type { DeclaredExtras } from './declared-common.js';
import type { Provider, ProviderName } from './types.js';
import { SignatureError } from './types.js';
import { otherStringSecret, requireHeader, requireSecrets } from './util.js';

/**
 * A declared scheme that sends a shared secret as it is, not a MAC (providers/declaration.ts's
 * TokenSignature): GitLab's `X-Gitlab-Token`, Postmark's Basic credentials, Okta's static
 * `Authorization` header. The receiver compares what arrives with what it holds, in constant time
 * (here: the SHA-256 digests of both, so not even the length leaks). Nothing of the request is
 * covered — not the body, not a time, not an id — so the provider says `tokenOnly`, and check
 * skips what only a signature can be held to (a changed body, a re-serialised one, the timestamp
 * window, rotation) and says why.
 */
export function tokenProvider(d: CheckedDeclaration, sig: TokenSignature, extras: DeclaredExtras = {}): Provider {
  const name = signatureHeaderOf(sig);
  const identity = declaredIdentity(d);
  const { idHeader, typeHeader, typePath } = identity;
  const title = d.title ?? d.name;

  /** The header's value for a secret, as the scheme writes it. */
  const headerValue = (secret: string) =>
    sig.scheme === 'bearer'
      ? `Bearer ${secret}`
      : sig.scheme === 'basic'
        ? `Basic ${Buffer.from(secret, 'utf8').toString('base64')}`
        : secret;

  /** The secret a header's value carries, or why it carries none (a malformed header). */
  const secretIn = (v: string): string => {
    if (sig.scheme === 'token') return v;
    // The auth-scheme is case-insensitive (RFC 9110 §11.1); one space or more before the credentials.
    const m = /^(\S+)\s+(\S+)$/.exec(v.trim());
    const scheme = sig.scheme === 'bearer' ? 'Bearer' : 'Basic';
    if (!m || (m[1] as string).toLowerCase() !== scheme.toLowerCase())
      throw new SignatureError('malformed_header', `${name} is not "${scheme} <credentials>"`);
    const credentials = m[2] as string;
    if (sig.scheme === 'bearer') return credentials;
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(credentials) || credentials.length % 4 !== 0)
      throw new SignatureError('malformed_header', `${name}'s Basic credentials are not base64`);
    const decoded = Buffer.from(credentials, 'base64').toString('utf8');
    if (!decoded.includes(':')) throw new SignatureError('malformed_header', `${name}'s Basic credentials hold no "user:password"`);
    return decoded;
  };

  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
  const provider: Provider = {
    ...identity.members,
    // A declared name is registered at run time (providers/index.ts) and passes as a known one.
    name: d.name as ProviderName,
    title,
    signatureHeader: name,
    signedHeaders: [name],
    timestamped: false,
    rotation: false,
    tokenOnly: sig.scheme,
    ...declaredDelivery(d, title),
    verifier: {
      official: `the ${d.name} declaration in ${d.file}`,
      futureTimestamp: 'refused', // no timestamp: the cases do not apply
      parsesJson: false,
      editSignatures: (v, edit) => {
        if (sig.scheme === 'token') return edit(v);
        const m = /^(\S+\s+)(\S+)$/.exec(v);
        return m ? `${m[1]}${edit(m[2] as string)}` : edit(v);
      },
      unknownType: typePath ? { path: typePath, value: 'hookdrill.unknown_event_type' } : { eventName: 'hookdrill.unknown_event_type' },
    },

    checkSecret(secret) {
      // Sent as it is in a header: what no request can carry, or what a header would lose (the
      // spaces around it), is no token a sender can send.
      const problem = headerValueProblem(headerValue(secret));
      if (problem || /[\r\n]/.test(secret))
        throw new UsageError(`${d.name}: the secret holds ${problem ?? 'a line break'}: no header can carry it`);
      if (secret.trim() !== secret) throw new UsageError(`${d.name}: the secret starts or ends with a space, which a header drops`);
      if (sig.scheme === 'bearer' && /\s/.test(secret)) throw new UsageError(`${d.name}: a Bearer token holds no space`);
      if (sig.scheme === 'basic' && !secret.includes(':'))
        throw new UsageError(`${d.name}: Basic credentials are "user:password" (as ${d.file} declares a Basic scheme)`);
    },

    sign(_rawBody, secrets, ctx) {
      const value = headerValue(secrets[0] ?? '');
      const placed = { signature: value, id: ctx.deliveryId, event: ctx.eventType };
      return placeHeaders(d, placed, [
        ['Content-Type', d.contentType ?? 'application/json'],
        [name, value],
        [idHeader, ctx.deliveryId],
        [typeHeader, ctx.eventType],
      ]);
    },

    verify(_rawBody, headers, secrets) {
      requireSecrets(secrets);
      const given = secretIn(requireHeader(headers, name));
      // The whole comparison is the headers': a wrong token is refused before a body is read.
      const got = digest(given);
      for (const secret of secrets) if (timingSafeEqual(got, digest(secret))) return;
      throw new SignatureError('no_match', `${name} does not hold the ${sig.scheme === 'basic' ? 'credentials' : 'token'} for any secret`);
    },

    otherSecret(secret) {
      if (sig.scheme !== 'basic') return otherStringSecret(secret);
      const user = secret.slice(0, secret.indexOf(':'));
      return `${user}:${otherStringSecret(secret.slice(secret.indexOf(':') + 1))}`;
    },
  };
  return withExtras(provider, extras);
}
