import { createHash, createHmac } from 'node:crypto';
import { UsageError } from '../util/errors.js';
import type { CanonicalSignature, CheckedDeclaration } from './declaration.js';
import { at, declaredDelivery, declaredIdentity, hmacKeys, placeHeaders, withExtras } from './declared-common.js';
import type { DeclaredExtras } from './declared-common.js';
import { requestProvider } from './declared-canonical-request.js';
import { withQuery } from './query-placed.js';
import type { JsonObject, JsonValue, Provider, ProviderName } from './types.js';
import { SignatureError } from './types.js';
import { header, otherStringSecret, randomAlnum, requireHeader, requireSecrets, safeEqual } from './util.js';

/** A fixture whose body is a form: `{ "hookdrill_form": { fields } }` (fixtures/index.ts's FORM_KEY). */
const FORM_KEY = 'hookdrill_form';

/**
 * A declared scheme whose MAC covers a canonical string rebuilt from the request
 * (providers/declaration-canonical.ts): the URL posted to and the form's parameters sorted by
 * name, each written as its name and value — Twilio's X-Twilio-Signature. The body's bytes are
 * not signed, the parameters are: a receiver parses the form first, then sorts it, and a
 * parameter changed, added or dropped in transit breaks the signature as a changed byte would.
 * Where the declaration says `{ body: "Field" }` for its id or event type, that is a field of the
 * form (a form body has no JSON to look into).
 */
export function canonicalProvider(d: CheckedDeclaration, sig: CanonicalSignature, extras: DeclaredExtras = {}): Provider {
  if (sig.signedHeaders !== undefined) return requestProvider(d, sig, extras);
  const identity = declaredIdentity(d);
  const { idHeader, typeHeader } = identity;
  const idField = d.id && 'body' in d.id ? d.id.body : undefined;
  const typeField = d.eventType && 'body' in d.eventType ? d.eventType.body : undefined;
  const title = d.title ?? d.name;
  const urlBound = sig.content.includes('{url}');
  const urlOf = (url: string) => extras.signedUrl?.(url) ?? url;
  const [before, after] = sig.content.split('{params}') as [string, string];
  // A signature is its digest's length in its encoding: "garbage" is malformed, not a mismatch.
  const bytes = { sha1: 20, sha256: 32, sha512: 64 }[sig.algorithm];
  const form =
    sig.encoding === 'hex' ? new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`) : new RegExp(`^[A-Za-z0-9+/]{${Math.ceil((bytes * 4) / 3)}}={0,2}$`);

  const keyOf = hmacKeys(d, sig.key);
  const mac = (secret: string, url: string, params: string) =>
    createHmac(sig.algorithm, keyOf(secret))
      .update(before.replace('{url}', url), 'utf8')
      .update(params, 'utf8')
      .update(after.replace('{url}', url), 'utf8')
      .digest(sig.encoding);
  const paramText = (rawBody: Buffer) => canonicalParams(rawBody, sig.param ?? '{name}{value}');

  const provider: Provider = {
    ...identity.members,
    name: d.name as ProviderName,
    title,
    signatureHeader: sig.header,
    signedHeaders: [sig.header],
    timestamped: false,
    ...(urlBound ? { urlBound: true as const } : {}),
    ...(sig.bodyHash !== undefined ? { queryPlaced: { carrier: BODY_HASH_CARRIER, param: sig.bodyHash } } : {}),
    rotation: false,
    ...declaredDelivery(d, title),
    verifier: {
      official: `the ${d.name} declaration in ${d.file}`,
      futureTimestamp: 'refused', // no timestamp: the cases do not apply
      parsesJson: false,
      signsParsedForm: true,
      editSignatures: (v, edit) => edit(v),
      unknownType: typeField
        ? { path: [FORM_KEY, typeField], value: 'hookdrill.unknown_event_type' }
        : { eventName: 'hookdrill.unknown_event_type' },
    },

    checkSecret(secret) {
      if (sig.key !== 'base64') return;
      if (!/^[A-Za-z0-9+/]+={0,2}$/.test(secret) || secret.length % 4 !== 0)
        throw new UsageError(`${d.name}: the secret must be base64 (the key bytes, as ${d.file} declares)`);
    },

    sign(rawBody, secrets, ctx) {
      // A JSON body where the URL carries its hash (Twilio's bodySHA256): the hash is added to the
      // URL, the signature covers that URL and no parameters, and the request goes to it
      // (queryPlaced: the carrier header is the query's, moved into the URL as the request leaves).
      const hashed = sig.bodyHash !== undefined && isJsonText(rawBody) ? `${sig.bodyHash}=${sha256Hex(rawBody)}` : undefined;
      const url = urlOf(ctx.url ?? '');
      const signature = hashed ? mac(secrets[0] ?? '', withQuery(url, hashed), '') : mac(secrets[0] ?? '', url, paramText(rawBody));
      const placed = { signature, id: ctx.deliveryId, event: ctx.eventType };
      const headers = placeHeaders(d, placed, [
        ['Content-Type', hashed ? 'application/json' : (d.contentType ?? 'application/x-www-form-urlencoded')],
        [sig.header, signature],
        [idHeader, ctx.deliveryId],
        [typeHeader, ctx.eventType],
      ]);
      if (!hashed) return headers;
      // The declaration's Content-Type is its form's: a JSON body is sent as JSON.
      for (const name of Object.keys(headers)) if (name.toLowerCase() === 'content-type') headers[name] = 'application/json';
      headers[BODY_HASH_CARRIER] = hashed;
      return headers;
    },

    verify(rawBody, headers, secrets, opts = {}) {
      requireSecrets(secrets);
      const given = requireHeader(headers, sig.header).trim();
      if (!form.test(given))
        throw new SignatureError('malformed_header', `${sig.header} is not a ${sig.encoding} HMAC-${sig.algorithm.toUpperCase()}`);
      if (opts.headersOnly) return;
      const type = header(headers, 'content-type');
      const isForm = type === undefined || /^application\/x-www-form-urlencoded\b/i.test(type);
      // The parameters are a form's: another body (JSON) carries none, so nothing of it is signed
      // unless the URL carries its hash (bodyHash: Twilio's bodySHA256).
      if (!isForm && !sig.bodyHash)
        throw new SignatureError('no_match', `${sig.header} covers a form's parameters, and the body is ${type}`);
      let urls = [''];
      if (urlBound) {
        if (opts.url === undefined)
          throw new SignatureError('no_match', `${sig.header} covers the URL posted to, and no URL was given to verify it with`);
        urls = portForms(urlOf(opts.url));
      }
      if (!isForm) {
        const hash = hashInUrl(opts.url ?? '', sig.bodyHash as string);
        if (hash === undefined)
          throw new SignatureError('no_match', `a ${type} body is signed through the URL's ${sig.bodyHash}, and the URL carries none`);
        if (!safeEqual(hash, sha256Hex(rawBody)))
          throw new SignatureError('no_match', `the body's SHA-256 is not the URL's ${sig.bodyHash}: the body is not the one signed`);
      }
      const params = isForm ? paramText(rawBody) : '';
      for (const secret of secrets) for (const url of urls) if (safeEqual(given, mac(secret, url, params))) return;
      throw new SignatureError('no_match', `${sig.header} does not match the URL and the parameters for any secret`);
    },

    deliveryId(headers, rawBody) {
      return idHeader ? header(headers, idHeader) || undefined : idField ? formField(rawBody, idField) : undefined;
    },
    eventTypeOf(headers, rawBody) {
      return typeHeader ? header(headers, typeHeader) || undefined : typeField ? formField(rawBody, typeField) : undefined;
    },
    freshFields(body: JsonObject) {
      // A form-held id is made new for every event in the shape it has: its prefix and length
      // kept, and lower-case hex where it is (Twilio's SM + 32 hex digits).
      const held = idField ? at(body, [FORM_KEY, idField]) : undefined;
      if (!idField || typeof held !== 'string') return [];
      const prefix = /^[A-Z]+/.exec(held)?.[0] ?? '';
      const rest = held.slice(prefix.length);
      const alphabet = /^[0-9a-f]+$/.test(rest) ? '0123456789abcdef' : undefined;
      return [{ path: [FORM_KEY, idField], make: () => `${prefix}${randomAlnum(Math.max(rest.length, 8), alphabet)}` }];
    },
    describe(body: JsonValue, fixtureName: string) {
      const type = typeField ? at(body, [FORM_KEY, typeField]) : undefined;
      const id = idField ? at(body, [FORM_KEY, idField]) : undefined;
      return { eventType: typeof type === 'string' ? type : fixtureName, ...(typeof id === 'string' ? { deliveryId: id } : {}) };
    },

    otherSecret(secret) {
      if (sig.key !== 'base64') return otherStringSecret(secret);
      const a = Buffer.from("not the receiver's key, hookdrill").toString('base64');
      return secret === a ? Buffer.from('another key, hookdrill').toString('base64') : a;
    },
  };
  return withExtras(provider, extras);
}

/**
 * The form's parameters as the canonical string writes them: sorted by name (UTF-16 order, as
 * JavaScript's sort and twilio-node's), a name sent twice written once for each of its distinct
 * values, those sorted too.
 */
export function canonicalParams(rawBody: Buffer, param = '{name}{value}'): string {
  const byName = new Map<string, Set<string>>();
  for (const [name, value] of new URLSearchParams(rawBody.toString('utf8'))) {
    const values = byName.get(name) ?? new Set<string>();
    values.add(value);
    byName.set(name, values);
  }
  let out = '';
  for (const name of [...byName.keys()].sort())
    for (const value of [...(byName.get(name) as Set<string>)].sort()) out += param.replace('{name}', name).replace('{value}', value);
  return out;
}

/**
 * The header a signing writes the body's hash into, as `bodySHA256=<hex>`, for the query of the URL
 * posted to (Provider.queryPlaced): never sent, moved into the URL as the request leaves.
 */
export const BODY_HASH_CARRIER = 'X-Hookdrill-Signed-Query';

/** A body that is JSON (an object or a list), not a form: its first byte past white space. */
export function isJsonText(rawBody: Buffer): boolean {
  for (const byte of rawBody) {
    if (byte === 0x20 || byte === 0x09 || byte === 0x0a || byte === 0x0d) continue;
    return byte === 0x5b || byte === 0x7b; // [ or {
  }
  return false;
}

const sha256Hex = (rawBody: Buffer) => createHash('sha256').update(rawBody).digest('hex');

/** A query parameter's value in a URL (Twilio's bodySHA256), or undefined. */
function hashInUrl(url: string, name: string): string | undefined {
  try {
    return new URL(url).searchParams.get(name) ?? undefined;
  } catch {
    return undefined;
  }
}

/** A field of a form body, where it has one. */
export function formField(rawBody: Buffer, name: string): string | undefined {
  return new URLSearchParams(rawBody.toString('utf8')).get(name) ?? undefined;
}

/**
 * The URL as given, and with its scheme's default port written or left out: the same URL to
 * the sender, and twilio-node's validateRequest tries both (a proxy may add :443 or drop it).
 */
export function portForms(url: string): string[] {
  const m = /^(https?:\/\/)([^/?#]*)(.*)$/i.exec(url);
  if (!m) return [url];
  const [, scheme, authority, rest] = m as unknown as [string, string, string, string];
  const port = scheme.toLowerCase() === 'https://' ? ':443' : ':80';
  const at = authority.lastIndexOf('@') + 1;
  const hostPort = authority.slice(at);
  const colon = hostPort.indexOf(':', hostPort.lastIndexOf(']') + 1);
  const host = colon === -1 ? hostPort : hostPort.slice(0, colon);
  const user = authority.slice(0, at);
  return [...new Set([url, `${scheme}${user}${host}${rest}`, `${scheme}${user}${host}${port}${rest}`])];
}
