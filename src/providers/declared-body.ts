import { createHash, createHmac } from 'node:crypto';
import { UsageError } from '../util/errors.js';
import type { BodySignature, CheckedDeclaration } from './declaration.js';
import { namedFields } from './declaration-body.js';
import { at, declaredDelivery, declaredIdentity, hmacKeys, placeHeaders, withExtras } from './declared-common.js';
import type { DeclaredExtras } from './declared-common.js';
import type { JsonObject, JsonValue, Provider, ProviderName } from './types.js';
import { SignatureError } from './types.js';
import { isObject, otherStringSecret, parseJson, requireSecrets, safeEqual } from './util.js';

/**
 * A declared scheme whose signature is written into the body (providers/declaration-body.ts's
 * BodySignature): Mailgun's `signature: {timestamp, token, signature}`, the hex HMAC-SHA256 of
 * timestamp + token. What is signed is named fields of the body, never the rest of it: a body
 * changed in transit under a right signature is accepted by the documented check — a property of
 * the scheme, which check says (flipped-byte and reserialized skipped) rather than demands.
 *
 * The sender writes the timestamp and the token at signing. Both are the delivery's, not the
 * attempt's: the timestamp is its first attempt's second and the token is made from its id, so
 * every retry carries the first attempt's signature, as Mailgun's do (Provider.signedOnce).
 *
 * `sign` hands the fields it writes to the request as one carried value under the signature
 * field's path (`signature.signature`), as if a header — check's cases take it away, edit it or
 * make it with another secret by that name — and asSent (providers/body-placed.ts) writes them
 * into the body as the request leaves.
 */
export function bodyProvider(d: CheckedDeclaration, sig: BodySignature, extras: DeclaredExtras = {}): Provider {
  const identity = declaredIdentity(d);
  const { idHeader, typeHeader, typePath } = identity;
  const title = d.title ?? d.name;
  const carrier = sig.field;
  const fieldPath = sig.field.split('.');
  const named = namedFields(sig.content);
  const tokenLength = sig.tokenLength ?? 50;
  const bytes = { sha1: 20, sha256: 32, sha512: 64 }[sig.algorithm];
  const sigForm =
    sig.encoding === 'hex'
      ? new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`)
      : new RegExp(`^[A-Za-z0-9+/]{${Math.ceil(bytes / 3) * 4 - ((3 - (bytes % 3)) % 3)}}={0,2}$`);

  const keyOf = hmacKeys(d, sig.key);
  /** The signed text: each named field's value as text, the template's own text between them. */
  const content = (value: (path: string) => string | undefined): string | undefined => {
    let missing = false;
    const text = sig.content.replace(/\{body\.([^{}]+)\}/g, (_all, p: string) => {
      const v = value(p);
      if (v === undefined) missing = true;
      return v ?? '';
    });
    return missing ? undefined : text;
  };
  const mac = (secret: string, text: string) => createHmac(sig.algorithm, keyOf(secret)).update(text, 'utf8').digest(sig.encoding);

  /** The token of a delivery: made from its id, so every attempt of it carries the same one. */
  const tokenOf = (deliveryId: string): string => {
    let out = '';
    for (let i = 0; out.length < tokenLength; i++) out += createHash('sha256').update(`hookdrill-token:${deliveryId}:${i}`).digest('hex');
    return out.slice(0, tokenLength);
  };

  const textAt = (body: JsonValue | undefined, p: string): string | undefined => {
    const v = at(body, p.split('.'));
    return typeof v === 'string' || typeof v === 'number' ? String(v) : undefined;
  };

  const provider: Provider = {
    ...identity.members,
    name: d.name as ProviderName,
    title,
    signatureHeader: carrier,
    signedHeaders: [carrier],
    timestamped: false,
    rotation: false,
    bodySignature: {
      carrier,
      place(rawBody, carried) {
        const body = parseJson(rawBody);
        if (!isObject(body)) return rawBody;
        if (carried === undefined) {
          remove(body, fieldPath);
          return Buffer.from(JSON.stringify(body));
        }
        let fields: JsonValue | undefined;
        try {
          fields = JSON.parse(carried) as JsonValue;
        } catch {
          fields = undefined;
        }
        // What no signing wrote (check's malformed-signature): the text itself, where the signature goes.
        if (!isObject(fields)) setAt(body, fieldPath, carried);
        else for (const [p, v] of Object.entries(fields)) setAt(body, p.split('.'), v);
        return Buffer.from(JSON.stringify(body));
      },
      covers: `${named.join(' and ')}, not the rest of the body`,
    },
    signedOnce: { source: `the ${d.name} declaration in ${d.file}: a body scheme's timestamp and token are the delivery's` },
    ...declaredDelivery(d, title),
    verifier: {
      official: `the ${d.name} declaration in ${d.file}`,
      futureTimestamp: 'refused', // no window: the timestamp cases do not apply
      // The signature is a field of the body: a receiver parses it to find it.
      parsesJson: true,
      editSignatures: (v, edit) => {
        let fields: JsonValue | undefined;
        try {
          fields = JSON.parse(v) as JsonValue;
        } catch {
          return edit(v);
        }
        const s = isObject(fields) ? fields[carrier] : undefined;
        if (!isObject(fields) || typeof s !== 'string') return edit(v);
        return JSON.stringify({ ...fields, [carrier]: edit(s) });
      },
      unknownType: typePath ? { path: typePath, value: 'hookdrill.unknown_event_type' } : { eventName: 'hookdrill.unknown_event_type' },
    },

    checkSecret(secret) {
      if (sig.key !== 'base64') return;
      if (!/^[A-Za-z0-9+/]+={0,2}$/.test(secret) || secret.length % 4 !== 0)
        throw new UsageError(`${d.name}: the secret must be base64 (the key bytes, as ${d.file} declares)`);
    },

    sign(rawBody, secrets, ctx) {
      const written: Record<string, string> = {};
      if (sig.timestamp) written[sig.timestamp] = String(Math.floor((ctx.firstAttemptMs ?? ctx.nowMs) / 1000));
      if (sig.token) written[sig.token] = tokenOf(ctx.deliveryId);
      const body = parseJson(rawBody);
      const text = content((p) => written[p] ?? textAt(body, p)) ?? '';
      written[sig.field] = mac(secrets[0] ?? '', text);
      const carried = JSON.stringify(written);
      return placeHeaders(d, { id: ctx.deliveryId, event: ctx.eventType }, [
        ['Content-Type', d.contentType ?? 'application/json'],
        [idHeader, ctx.deliveryId],
        [typeHeader, ctx.eventType],
        [carrier, carried],
      ]);
    },

    verify(rawBody, _headers, secrets, opts = {}) {
      requireSecrets(secrets);
      // Nothing of the signature is in the headers: the body is the whole of it.
      if (opts.headersOnly) return;
      const body = parseJson(rawBody);
      if (!isObject(body)) throw new SignatureError('missing_header', `the body is not a JSON object, so it holds no ${sig.field}`);
      const given = at(body, fieldPath);
      if (given === undefined || given === null) throw new SignatureError('missing_header', `the body holds no ${sig.field}`);
      if (typeof given !== 'string' || !sigForm.test(given))
        throw new SignatureError('malformed_header', `${sig.field} is not a ${sig.encoding} ${sig.algorithm.toUpperCase()} HMAC`);
      const text = content((p) => textAt(body, p));
      if (text === undefined)
        throw new SignatureError('malformed_header', `the body lacks a field the signature covers (${named.join(', ')})`);
      for (const secret of secrets) if (safeEqual(given, mac(secret, text))) return;
      throw new SignatureError('no_match', `${sig.field} does not match ${named.join(' + ')} for any secret`);
    },

    otherSecret(secret) {
      if (sig.key === 'utf8') return otherStringSecret(secret);
      const a = Buffer.from("not the receiver's key, hookdrill").toString('base64');
      return secret === a ? Buffer.from('another key, hookdrill').toString('base64') : a;
    },

    // A receiver keyed on the token holds every retry of a delivery (it is the same on each).
    ...(sig.token ? { otherIds: (deliveryId: string) => [tokenOf(deliveryId)] } : {}),
  };
  return withExtras(provider, extras);
}

/** Sets a dotted path's value, making the objects on the way where absent. */
function setAt(body: JsonObject, path: readonly string[], value: JsonValue): void {
  let o = body;
  for (const key of path.slice(0, -1)) {
    const next = o[key];
    if (!isObject(next)) o[key] = {};
    o = o[key] as JsonObject;
  }
  o[path[path.length - 1] as string] = value;
}

function remove(body: JsonObject, path: readonly string[]): void {
  const parent = at(body, path.slice(0, -1));
  if (isObject(parent)) delete parent[path[path.length - 1] as string];
}
