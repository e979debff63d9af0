import { createHash, timingSafeEqual } from 'node:crypto';
import { UsageError } from '../util/errors.js';
import type { CheckedDeclaration, FieldSignature } from './declaration.js';
import { fieldPaths } from './declaration-field.js';
import { at, declaredDelivery, declaredIdentity, placeHeaders, withExtras } from './declared-common.js';
import type { DeclaredExtras } from './declared-common.js';
import type { JsonObject, JsonValue, Provider, ProviderName } from './types.js';
import { SignatureError } from './types.js';
import { isObject, otherStringSecret, parseJson, requireSecrets } from './util.js';

/**
 * A declared scheme whose secret is a field of the body, sent as it is (providers/
 * declaration-field.ts's FieldSignature): Microsoft Graph's `clientState` in each change
 * notification of `{"value": [...]}`. Nothing is signed, so the provider says `tokenOnly: 'field'`
 * and check skips what only a signature can be held to, as for a header token. The secret is
 * carried by `sign` under the field's path, as if a header (bodySignature, as Mailgun's signature
 * is): check's cases take it away, edit it or make it with another secret by that name, and
 * asSent (providers/body-placed.ts) writes it into each item as the request leaves.
 *
 * A body is authentic when every item holds one of the secrets: an item without one fails the
 * whole request here (listen refuses it); a receiver that keeps the others and drops that one, as
 * Graph's docs ask, is right too — check judges it by what it stored (the contract's `refusal`).
 */
export function fieldProvider(d: CheckedDeclaration, sig: FieldSignature, extras: DeclaredExtras = {}): Provider {
  const identity = declaredIdentity(d);
  const { idHeader, typeHeader } = identity;
  const title = d.title ?? d.name;
  const { list, within } = fieldPaths(sig);
  const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();

  /** The objects holding the field: each item of the list, or the body itself. */
  const holders = (body: JsonValue | undefined): JsonValue[] => {
    if (!list) return [body ?? null];
    const items = list.length ? at(body, list) : body;
    return Array.isArray(items) ? items : [];
  };

  const contract = declaredDelivery(d, title).contract;
  const provider: Provider = {
    ...identity.members,
    name: d.name as ProviderName,
    title,
    signatureHeader: sig.field,
    signedHeaders: [sig.field],
    timestamped: false,
    rotation: false,
    tokenOnly: 'field',
    bodySignature: {
      carrier: sig.field,
      place(rawBody, carried) {
        const body = parseJson(rawBody);
        if (!isObject(body) && !Array.isArray(body)) return rawBody;
        for (const item of holders(body)) if (isObject(item)) put(item, within, carried);
        return Buffer.from(JSON.stringify(body));
      },
      covers: `nothing: ${sig.field} is the shared secret itself`,
    },
    ...declaredDelivery(d, title),
    ...(sig.forged === 'discard'
      ? {
          contract: {
            ...contract,
            refusal: {
              kind: 'discard' as const,
              what: `an item whose ${within.join('.')} is not the secret is dropped, and the request still answered 2xx`,
              source: `the ${d.name} declaration in ${d.file} (signature.forged: discard)`,
            },
          },
        }
      : {}),
    verifier: {
      official: `the ${d.name} declaration in ${d.file}`,
      futureTimestamp: 'refused', // no timestamp: the cases do not apply
      // The secret is a field of the body: a receiver parses it to find it.
      parsesJson: true,
      editSignatures: (v, edit) => edit(v),
      unknownType: identity.typePath
        ? { path: identity.typePath, value: 'hookdrill.unknown_event_type' }
        : { eventName: 'hookdrill.unknown_event_type' },
    },

    checkSecret(secret) {
      // A JSON string holds any text, but one the receiver compares as it is: no spaces around it to lose.
      if (secret.trim() !== secret) throw new UsageError(`${d.name}: the secret starts or ends with a space`);
    },

    sign(_rawBody, secrets, ctx) {
      return placeHeaders(d, { id: ctx.deliveryId, event: ctx.eventType }, [
        ['Content-Type', d.contentType ?? 'application/json'],
        [idHeader, ctx.deliveryId],
        [typeHeader, ctx.eventType],
        [sig.field, secrets[0] ?? ''],
      ]);
    },

    verify(rawBody, _headers, secrets, opts = {}) {
      requireSecrets(secrets);
      // Nothing of the secret is in the headers: the body is the whole of it.
      if (opts.headersOnly) return;
      const body = parseJson(rawBody);
      if (!isObject(body) && !Array.isArray(body))
        throw new SignatureError('missing_header', `the body is not JSON, so it holds no ${sig.field}`);
      const items = holders(body);
      if (items.length === 0) throw new SignatureError('missing_header', `the body holds no item at ${sig.field}`);
      const held = secrets.map(digest);
      for (const [i, item] of items.entries()) {
        const given = at(item, within);
        const where = list ? `item ${i}'s ${within.join('.')}` : sig.field;
        if (given === undefined || given === null) throw new SignatureError('missing_header', `${where} is missing`);
        if (typeof given !== 'string') throw new SignatureError('malformed_header', `${where} is not a string`);
        const got = digest(given);
        if (!held.some((h) => timingSafeEqual(got, h))) throw new SignatureError('no_match', `${where} is not the secret`);
      }
    },

    otherSecret: otherStringSecret,
  };
  return withExtras(provider, extras);
}

/** Sets (or, for undefined, removes) a path's value in an item, making the objects on the way. */
function put(item: JsonObject, path: readonly string[], value: string | undefined): void {
  let o = item;
  for (const key of path.slice(0, -1)) {
    if (!isObject(o[key])) {
      if (value === undefined) return;
      o[key] = {};
    }
    o = o[key] as JsonObject;
  }
  const last = path[path.length - 1] as string;
  if (value === undefined) delete o[last];
  else o[last] = value;
}
