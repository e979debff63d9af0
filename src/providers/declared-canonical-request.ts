import { createHmac } from 'node:crypto';
import { escape as escapeQuery } from 'node:querystring';
import type { CanonicalSignature, CheckedDeclaration } from './declaration.js';
import { declaredDelivery, declaredIdentity, hmacKeys, placeHeaders, withExtras } from './declared-common.js';
import type { DeclaredExtras } from './declared-common.js';
import type { IncomingHeaders, Provider, ProviderName } from './types.js';
import { SignatureError } from './types.js';
import { otherStringSecret, requireHeader, requireSecrets, safeEqual } from './util.js';

/**
 * A declared canonical scheme in its request form (declaration-canonical-request.ts): the MAC of
 * the method, the path posted to, the headers a header of its own lists, and the body's bytes —
 * Contentful's X-Contentful-Signature. The path is signed, so a receiver behind a proxy that
 * rewrites it must verify over the path the sender posted to; the timestamp's header is signed
 * among the headers and held to the declared window.
 */
export function requestProvider(d: CheckedDeclaration, sig: CanonicalSignature, extras: DeclaredExtras = {}): Provider {
  const identity = declaredIdentity(d);
  const { idHeader, typeHeader } = identity;
  const title = d.title ?? d.name;
  const listHeader = (sig.signedHeaders as string).toLowerCase();
  const tsHeader = d.timestamp?.header;
  const ms = d.timestamp?.unit === 'ms';
  const pair = sig.headerPair ?? '{name}:{value}';
  const join = sig.headerJoin ?? ';';
  const [before, after] = sig.content.split('{body}') as [string, string];
  const bytes = { sha1: 20, sha256: 32, sha512: 64 }[sig.algorithm];
  const form =
    sig.encoding === 'hex' ? new RegExp(`^[0-9a-fA-F]{${bytes * 2}}$`) : new RegExp(`^[A-Za-z0-9+/]{${Math.ceil((bytes * 4) / 3)}}={0,2}$`);
  const keyOf = hmacKeys(d, sig.key);

  /** The signed headers' text: each "name:value", sorted by name, joined (lower-case names, trimmed values). */
  const headerText = (signed: Map<string, string>) =>
    [...signed.entries()]
      .sort(([a], [b]) => (a > b ? 1 : -1))
      .map(([name, value]) => pair.replace('{name}', name).replace('{value}', value))
      .join(join);
  const mac = (secret: string, method: string, path: string, signed: Map<string, string>, body: Buffer) => {
    const fill = (t: string) => t.replace('{method}', method).replace('{path}', path).replace('{headers}', headerText(signed));
    return createHmac(sig.algorithm, keyOf(secret))
      .update(fill(before), 'utf8')
      .update(body)
      .update(fill(after), 'utf8')
      .digest(sig.encoding);
  };

  const provider: Provider = {
    ...identity.members,
    name: d.name as ProviderName,
    title,
    signatureHeader: sig.header,
    signedHeaders: [sig.header, sig.signedHeaders as string, ...(tsHeader ? [tsHeader] : [])],
    timestamped: d.timestamp !== undefined,
    ...(d.timestamp ? { toleranceSec: d.toleranceSec } : {}),
    ...(extras.futureAccepted ? { futureAccepted: true as const } : {}),
    // The path is signed: a proxy that rewrites it is the URL-bound case (--public-url).
    urlBound: true as const,
    rotation: false,
    ...declaredDelivery(d, title),
    verifier: {
      official: `the ${d.name} declaration in ${d.file}`,
      futureTimestamp: 'refused',
      parsesJson: false,
      editSignatures: (v, edit) => edit(v),
      unknownType: identity.typePath
        ? { path: identity.typePath, value: 'hookdrill.unknown_event_type' }
        : { eventName: 'hookdrill.unknown_event_type' },
    },

    checkSecret() {},

    sign(rawBody, secrets, ctx) {
      const ts = String(ms ? Math.floor(ctx.nowMs) : Math.floor(ctx.nowMs / 1000));
      // What is signed beside the list and the time: the id and the event type where headers carry them.
      const named = new Map<string, string>();
      if (tsHeader) named.set(tsHeader.toLowerCase(), ts);
      if (idHeader) named.set(idHeader.toLowerCase(), ctx.deliveryId);
      if (typeHeader) named.set(typeHeader.toLowerCase(), ctx.eventType);
      const list = [...named.keys(), listHeader].sort().join(',');
      named.set(listHeader, list);
      const signature = mac(secrets[0] ?? '', 'POST', signedPath(ctx.url ?? '/'), named, rawBody);
      const placed = { signature, timestamp: ts, id: ctx.deliveryId, event: ctx.eventType };
      return placeHeaders(d, placed, [
        ['Content-Type', d.contentType ?? 'application/json'],
        [sig.header, signature],
        [sig.signedHeaders, list],
        [tsHeader, ts],
        [idHeader, ctx.deliveryId],
        [typeHeader, ctx.eventType],
      ]);
    },

    verify(rawBody, headers, secrets, opts = {}) {
      requireSecrets(secrets);
      const given = requireHeader(headers, sig.header).trim();
      if (!form.test(given))
        throw new SignatureError('malformed_header', `${sig.header} is not a ${sig.encoding} HMAC-${sig.algorithm.toUpperCase()}`);
      const listed = requireHeader(headers, sig.signedHeaders as string).split(',');
      const lower = lowerHeaders(headers);
      if (tsHeader) {
        const text = requireHeader(headers, tsHeader).trim();
        if (!/^\d{1,15}$/.test(text))
          throw new SignatureError('malformed_header', `${tsHeader} "${text}" is not Unix ${ms ? 'milliseconds' : 'seconds'}`);
        const at = ms ? Number(text) : Number(text) * 1000;
        const skew = Math.floor(((opts.nowMs ?? Date.now()) - at) / 1000);
        const tolerance = opts.toleranceSec ?? d.toleranceSec;
        if (skew >= tolerance) throw new SignatureError('stale_timestamp', `timestamp is ${skew}s old, beyond the ${tolerance}s tolerance`);
        if (-skew > tolerance && !extras.futureAccepted)
          throw new SignatureError('future_timestamp', `timestamp is ${-skew}s in the future, beyond the ${tolerance}s tolerance`);
      }
      if (opts.headersOnly) return;
      if (opts.url === undefined)
        throw new SignatureError('no_match', `${sig.header} covers the path posted to, and no URL was given to verify it with`);
      // As @contentful/node-apps-toolkit's verifyRequest: the listed headers present, exactly as
      // named (lower case); the list and the time always signed, the list as the sorted names found.
      const signed = new Map<string, string>();
      for (const name of listed) {
        const value = lower.get(name);
        if (value !== undefined) signed.set(name, value);
      }
      for (const always of [listHeader, tsHeader?.toLowerCase()])
        if (always !== undefined && !signed.has(always)) signed.set(always, lower.get(always) ?? '');
      signed.set(listHeader, [...signed.keys()].sort().join(','));
      const path = signedPath(opts.url);
      for (const secret of secrets) if (safeEqual(given, mac(secret, 'POST', path, signed, rawBody))) return;
      throw new SignatureError(
        'no_match',
        `${sig.header} does not match the method, the path, the signed headers and the body for any secret`,
      );
    },

    otherSecret: (secret) => otherStringSecret(secret),
  };
  return withExtras(provider, extras);
}

/** The request's headers by lower-case name, values trimmed (the first, where one came twice). */
function lowerHeaders(headers: IncomingHeaders): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(headers)) {
    const value = Array.isArray(v) ? v[0] : v;
    if (value !== undefined && !out.has(k.toLowerCase())) out.set(k.toLowerCase(), value.trim());
  }
  return out;
}

/**
 * The path and query of a URL as the request form signs them: as @contentful/node-apps-toolkit
 * normalises them (lib/requests utils, getNormalizedEncodedURI): the query escaped as a whole
 * (querystring.escape), then the path and query through encodeURI. A path of plain characters and
 * no query is itself.
 */
export function signedPath(url: string): string {
  // A whole URL is read as it goes on the wire (new URL escapes a space in it as %20); a path alone is taken as it is.
  let raw = url.split('#')[0] as string;
  try {
    const u = new URL(url);
    raw = u.pathname + u.search;
  } catch {}
  const [pathname, search] = raw.split('?') as [string, string | undefined];
  const escaped = search ? escapeQuery(search) : '';
  return encodeURI(escaped ? `${pathname}?${escaped}` : pathname);
}
