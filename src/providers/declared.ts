import { createHmac } from 'node:crypto';
import { UsageError } from '../util/errors.js';
import type { CheckedDeclaration } from './declaration.js';
import { isBodyScheme, isCanonicalScheme, isFieldScheme, isTokenScheme } from './declaration.js';
import { bodyProvider } from './declared-body.js';
import { fieldProvider } from './declared-field.js';
import { canonicalProvider } from './declared-canonical.js';
import { declaredDelivery, declaredIdentity, hmacKeys, placeHeaders, withExtras } from './declared-common.js';
import type { DeclaredExtras } from './declared-common.js';
import { tokenProvider } from './declared-token.js';
import { withDeclaredHandshake } from './handshake.js';
import { isJwtScheme } from './declaration-jwt.js';
import { jwtProvider } from './declared-jwt.js';
import { isCertificateScheme } from './declaration-certificate.js';
import { certificateProvider } from './declared-certificate.js';
import type { Provider, ProviderName } from './types.js';
import { SignatureError } from './types.js';
import { otherStringSecret, requireHeader, requireSecrets, safeEqual } from './util.js';

/**
 * A provider from its declaration (providers/declaration.ts): one scheme engine for every HMAC
 * scheme a team can state — what is signed around the body, how the key is read, how the
 * signature is written and where the id, timestamp and event type travel. test/declared.test.ts
 * declares Standard Webhooks and Slack's Events API this way and holds them to the built-in ones,
 * byte for byte.
 */
export type { DeclaredExtras } from './declared-common.js';

export function declaredProvider(d: CheckedDeclaration, extras: DeclaredExtras = {}): Provider {
  if (isTokenScheme(d.signature)) return withDeclaredHandshake(d, tokenProvider(d, d.signature, extras));
  if (isBodyScheme(d.signature)) return withDeclaredHandshake(d, bodyProvider(d, d.signature, extras));
  if (isCanonicalScheme(d.signature)) return withDeclaredHandshake(d, canonicalProvider(d, d.signature, extras));
  if (isJwtScheme(d.signature)) return withDeclaredHandshake(d, jwtProvider(d, d.signature, extras));
  if (isCertificateScheme(d.signature)) return withDeclaredHandshake(d, certificateProvider(d, d.signature, extras));
  if (isFieldScheme(d.signature)) return withDeclaredHandshake(d, fieldProvider(d, d.signature, extras));
  const sig = d.signature;
  const value = sig.value ?? '{signature}';
  const many = value.includes('{signatures}');
  const [before, after] = sig.content.split('{body}') as [string, string];
  const tsHeader = d.timestamp?.header;
  const ms = d.timestamp?.unit === 'ms';
  const rfc3339 = d.timestamp?.unit === 'rfc3339';
  const identity = declaredIdentity(d);
  const { idHeader, typeHeader, typePath } = identity;
  const title = d.title ?? d.name;
  // One-sided where the declaration says its sender's library is (timestamp.future) or a built-in provider's extras do.
  const futureAccepted = extras.futureAccepted === true || d.timestamp?.future === 'accepted';
  const urlOf = (url: string) => extras.signedUrl?.(url) ?? url;
  const urlBound = sig.content.includes('{url}');
  // A signature is its digest's length in its encoding, nothing else: "garbage" is malformed, not a mismatch.
  const bytes = { sha1: 20, sha256: 32, sha512: 64 }[sig.algorithm];
  const sigPattern =
    sig.encoding === 'hex' ? `[0-9a-fA-F]{${bytes * 2}}` : `[A-Za-z0-9+/]{${Math.ceil(bytes / 3) * 4 - ((3 - (bytes % 3)) % 3)}}={0,2}`;
  const valueForm = new RegExp(`^${pattern(value, sigPattern)}$`);
  const entryForm = many ? new RegExp(`^${pattern(sig.each as string, sigPattern)}$`) : undefined;

  const keyOf = hmacKeys(d, sig.key);
  const fill = (template: string, parts: Record<string, string>) => template.replace(/\{(\w+)\}/g, (all, k: string) => parts[k] ?? all);
  const mac = (secret: string, body: Buffer, parts: Record<string, string>) =>
    createHmac(sig.algorithm, keyOf(secret)).update(fill(before, parts)).update(body).update(fill(after, parts)).digest(sig.encoding);

  const provider: Provider = {
    ...identity.members,
    // A declared name is registered at run time (providers/index.ts) and passes as a known one.
    name: d.name as ProviderName,
    title,
    signatureHeader: sig.header,
    signedHeaders: [sig.header, ...(tsHeader ? [tsHeader] : [])],
    timestamped: d.timestamp !== undefined,
    ...(d.timestamp ? { toleranceSec: d.toleranceSec } : {}),
    ...(futureAccepted ? { futureAccepted: true as const } : {}),
    ...(urlBound ? { urlBound: true as const } : {}),
    rotation: many,
    ...declaredDelivery(d, title),
    verifier: {
      official: `the ${d.name} declaration in ${d.file}`,
      // A declaration's tolerance is a window either way, unless it says its sender's is one-sided (timestamp.future).
      futureTimestamp: futureAccepted ? 'accepted' : 'refused',
      parsesJson: false,
      ...(many
        ? {
            firstSignatureOnly: (v: string) => {
              const groups = valueForm.exec(v)?.groups;
              const first = groups?.signatures?.split(sig.join as string).find(Boolean);
              return first === undefined ? v : fill(value, { ...groups, signatures: first });
            },
          }
        : {}),
      editSignatures: (v, edit) => {
        const m = valueForm.exec(v);
        if (!m?.groups) return v;
        if (!many) return v.replace(m.groups.signature as string, edit(m.groups.signature as string));
        const edited = entries(v).map((e) => {
          const s = entryForm?.exec(e)?.groups?.signature;
          return s === undefined ? e : e.replace(s, edit(s));
        });
        return fill(value, { ...m.groups, signatures: edited.join(sig.join as string) });
      },
      unknownType: typePath ? { path: typePath, value: 'hookdrill.unknown_event_type' } : { eventName: 'hookdrill.unknown_event_type' },
    },

    checkSecret(secret) {
      if (sig.key === 'utf8') return;
      const b64 = sig.key === 'whsec' ? secret.replace(/^whsec_/, '') : secret;
      if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64) || b64.length % 4 !== 0)
        throw new UsageError(
          `${d.name}: the secret must be ${sig.key === 'whsec' ? '"whsec_" followed by ' : ''}base64 (the key bytes, as ${d.file} declares)`,
        );
    },

    sign(rawBody, secrets, ctx) {
      const ts = rfc3339
        ? new Date(Math.floor(ctx.nowMs)).toISOString()
        : String(ms ? Math.floor(ctx.nowMs) : Math.floor(ctx.nowMs / 1000));
      const parts = { id: ctx.deliveryId, timestamp: ts, url: urlOf(ctx.url ?? '') };
      const macs = secrets.map((s) => mac(s, rawBody, parts));
      const signature = many
        ? fill(value, {
            ...parts,
            signatures: macs.map((m) => fill(sig.each as string, { ...parts, signature: m })).join(sig.join as string),
          })
        : fill(value, { ...parts, signature: macs[0] ?? '' });
      const placed = { signature, timestamp: ts, id: ctx.deliveryId, event: ctx.eventType };
      // What the declaration names but did not place is sent after it, in this order.
      return placeHeaders(d, placed, [
        ['Content-Type', d.contentType ?? 'application/json'],
        [sig.header, signature],
        [tsHeader, ts],
        [idHeader, ctx.deliveryId],
        [typeHeader, ctx.eventType],
      ]);
    },

    verify(rawBody, headers, secrets, opts = {}) {
      requireSecrets(secrets);
      const v = requireHeader(headers, sig.header);
      const m = valueForm.exec(v);
      if (!m?.groups) throw new SignatureError('malformed_header', `${sig.header} is not of the form ${value}`);
      const candidates = many ? entries(v).flatMap((e) => entryForm?.exec(e)?.groups?.signature ?? []) : [m.groups.signature as string];
      if (candidates.length === 0) throw new SignatureError('malformed_header', `${sig.header} has no entry of the form ${sig.each}`);
      const parts: Record<string, string> = {};
      if (d.timestamp) {
        const text = tsHeader ? requireHeader(headers, tsHeader) : (m.groups.timestamp ?? '');
        const name = tsHeader ?? sig.header;
        const at = rfc3339 ? rfc3339Ms(text) : /^\d{1,15}$/.test(text) ? (ms ? Number(text) : Number(text) * 1000) : undefined;
        if (at === undefined)
          throw new SignatureError(
            'malformed_header',
            `${name} timestamp "${text}" is not ${rfc3339 ? 'an RFC 3339 date-time' : `Unix ${ms ? 'milliseconds' : 'seconds'}`}`,
          );
        const skew = Math.floor(((opts.nowMs ?? Date.now()) - at) / 1000);
        const tolerance = opts.toleranceSec ?? d.toleranceSec;
        if (skew > tolerance) throw new SignatureError('stale_timestamp', `timestamp is ${skew}s old, beyond the ${tolerance}s tolerance`);
        if (-skew > tolerance && !futureAccepted)
          throw new SignatureError('future_timestamp', `timestamp is ${-skew}s in the future, beyond the ${tolerance}s tolerance`);
        parts.timestamp = text;
      }
      if (sig.content.includes('{id}')) parts.id = requireHeader(headers, idHeader as string);
      // The headers alone judge what the headers say; a missing URL is a mismatch, which needs the body to tell.
      if (opts.headersOnly) return;
      if (urlBound) {
        if (opts.url === undefined)
          throw new SignatureError('no_match', `${sig.header} covers the URL posted to, and no URL was given to verify it with`);
        parts.url = urlOf(opts.url);
      }
      for (const secret of secrets) {
        const expected = mac(secret, rawBody, parts);
        if (candidates.some((c) => safeEqual(c, expected))) return;
      }
      throw new SignatureError('no_match', `${sig.header} does not match the body for any secret`);
    },

    otherSecret(secret) {
      if (sig.key === 'utf8') return otherStringSecret(secret);
      const a = Buffer.from("not the receiver's key, hookdrill").toString('base64');
      const other = sig.key === 'whsec' ? `whsec_${a}` : a;
      return secret === other ? other.replace(a, Buffer.from('another key, hookdrill').toString('base64')) : other;
    },
  };
  return withDeclaredHandshake(d, withExtras(provider, extras));

  function entries(v: string): string[] {
    const all = valueForm.exec(v)?.groups?.signatures;
    return all === undefined ? [] : all.split(sig.join as string).filter(Boolean);
  }
}

/** A template as a regular expression: its text literal, each {part} a named group. */
function pattern(template: string, signature: string): string {
  const groups: Record<string, string> = {
    timestamp: '(?<timestamp>\\d+)',
    id: '(?<id>.+?)',
    signature: `(?<signature>${signature})`,
    signatures: '(?<signatures>.+)',
  };
  return template
    .split(/(\{\w+\})/)
    .map((piece) => {
      const name = /^\{(\w+)\}$/.exec(piece)?.[1];
      return name !== undefined && groups[name] ? groups[name] : piece.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
}

/**
 * An RFC 3339 date-time in Unix ms, or undefined: any number of fraction digits (Twitch sends
 * nanoseconds, "…24.637747359Z", and milliseconds, "…55.813Z"), read to the millisecond.
 */
export function rfc3339Ms(text: string): number | undefined {
  const m = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$/.exec(text);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}T${m[2]}.${(m[3] ?? '').padEnd(3, '0').slice(0, 3)}${m[4] === 'z' ? 'Z' : m[4]}`);
  return Number.isNaN(ms) ? undefined : ms;
}
