import { createSecretKey } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { formatDelays, formatDuration } from '../util/duration.js';
import { UsageError } from '../util/errors.js';
import type { CheckedDeclaration } from './declaration.js';
import type { JsonObject, JsonValue, OutgoingHeaders, Provider, TimingProfile } from './types.js';
import { header, parseJson, randomAlnum } from './util.js';

/**
 * What every declared scheme shares, whether it signs with a MAC (providers/declared.ts) or sends
 * a token (providers/declared-token.ts): its profile, where its headers go, the paths into its
 * body, and what a built-in provider on the engine says beyond its declaration.
 */

/**
 * What a built-in provider on this engine says beyond its declaration: its own profiles, the rules
 * its official verifier keeps, its fresh fields; `futureAccepted` where that verifier's window is
 * one-sided (a timestamp from the future passes), so hookdrill's own verify is no stricter.
 */
export interface DeclaredExtras {
  futureAccepted?: boolean;
  profiles?: Provider['profiles'];
  defaultProfile?: string;
  verifier?: Partial<Provider['verifier']>;
  freshFields?: Provider['freshFields'];
  otherSecret?: Provider['otherSecret'];
  newDeliveryId?: Provider['newDeliveryId'];
  retryHeaders?: Provider['retryHeaders'];
  serialize?: Provider['serialize'];
  contract?: Provider['contract'];
  /** Where every retry carries its first attempt's signature, the source that says so (Mailgun's). */
  signedOnce?: Provider['signedOnce'];
  /** The URL as the provider signs it, where it normalises it first (HubSpot v3 decodes some escapes). */
  signedUrl?: (url: string) => string;
}

/**
 * What a declaration says of its platform's delivery, whatever its scheme: one event a request,
 * re-sent as its retries say, a 2xx its answer, and its one timing profile.
 */
export function declaredDelivery(d: CheckedDeclaration, title: string): Pick<Provider, 'contract' | 'profiles' | 'defaultProfile'> {
  return {
    contract: {
      batching: { events: 'one', source: `the ${d.name} declaration in ${d.file}` },
      resends: { events: d.retryDelaysMs.length ? 'on-failure' : 'never', source: `its retries, in ${d.file}` },
      endpointChecks: [],
      answer: { kind: 'status', source: `the ${d.name} declaration in ${d.file}` },
    },
    profiles: { [d.name]: declaredProfile(d, title) },
    defaultProfile: d.name,
  };
}

/**
 * The HMAC key of each secret a declared MAC scheme signs or verifies with, made once per secret
 * (listen verifies every request with it; secrets are few): its UTF-8 bytes, base64, or `whsec_` +
 * base64 (Standard Webhooks).
 */
export function hmacKeys(d: CheckedDeclaration, encoding: 'utf8' | 'base64' | 'whsec' | undefined): (secret: string) => KeyObject {
  const keys = new Map<string, KeyObject>();
  return (secret) => {
    let key = keys.get(secret);
    if (!key) {
      const bytes =
        encoding === 'whsec'
          ? Buffer.from(secret.replace(/^whsec_/, ''), 'base64')
          : Buffer.from(secret, encoding === 'base64' ? 'base64' : 'utf8');
      // An empty key is one anyone can compute a MAC with: never signed or verified with
      // (checkKeyMaterial refuses it first; this holds for a library caller who skipped that).
      if (bytes.length === 0) throw new UsageError(`${d.name}: the secret is empty`);
      key = createSecretKey(bytes);
      if (keys.size > 64) keys.clear();
      keys.set(secret, key);
    }
    return key;
  };
}

/** The declaration's one timing profile: its timeout and retries, as its file states them. */
export function declaredProfile(d: CheckedDeclaration, title: string): TimingProfile {
  return {
    name: d.name,
    summary: `${title} (declared in ${d.file}): ${formatDuration(d.timeoutMs)} timeout; ${
      d.retryDelaysMs.length ? `retries after ${formatDelays(d.retryDelaysMs)}` : 'no retries'
    }`,
    published: true,
    timeoutMs: d.timeoutMs,
    retryDelaysMs: d.retryDelaysMs,
    maxRedirects: 0,
    retryAfterStatuses: [],
    stopStatuses: [],
  };
}

/**
 * The headers of one signing in the declared order: those `headers` names first (a `{part}` value
 * filled from `placed`), then what the declaration names but did not place, in the order `rest` gives.
 */
export function placeHeaders(
  d: CheckedDeclaration,
  placed: Readonly<Record<string, string | undefined>>,
  rest: readonly (readonly [string | undefined, string | undefined])[],
): OutgoingHeaders {
  const out: OutgoingHeaders = {};
  for (const [name, v] of Object.entries(d.headers ?? {})) {
    const place = /^\{(\w+)\}$/.exec(v)?.[1];
    const filled = place === undefined ? v : placed[place];
    if (filled !== undefined) out[name] = filled;
  }
  const has = (name: string) => Object.keys(out).some((k) => k.toLowerCase() === name.toLowerCase());
  for (const [name, v] of rest) if (name !== undefined && v !== undefined && !has(name)) out[name] = v;
  return out;
}

/** The provider with what a built-in one says beyond its declaration put over the declaration's own. */
export function withExtras(provider: Provider, extras: DeclaredExtras): Provider {
  if (extras.profiles) provider.profiles = extras.profiles;
  if (extras.defaultProfile) provider.defaultProfile = extras.defaultProfile;
  if (extras.verifier) provider.verifier = { ...provider.verifier, ...extras.verifier };
  if (extras.freshFields) provider.freshFields = extras.freshFields;
  if (extras.otherSecret) provider.otherSecret = extras.otherSecret;
  if (extras.newDeliveryId) provider.newDeliveryId = extras.newDeliveryId;
  if (extras.retryHeaders) provider.retryHeaders = extras.retryHeaders;
  if (extras.serialize) provider.serialize = extras.serialize;
  if (extras.contract) provider.contract = extras.contract;
  if (extras.signedOnce) provider.signedOnce = extras.signedOnce;
  return provider;
}

/** A dotted path's value; a number indexes a list (LINE's `events.0.webhookEventId`). */
export function at(value: JsonValue | undefined, path: readonly string[]): JsonValue | undefined {
  let v = value;
  for (const key of path) {
    if (Array.isArray(v) && /^\d+$/.test(key)) v = v[Number(key)];
    else if (typeof v !== 'object' || v === null || Array.isArray(v)) return undefined;
    else v = v[key];
  }
  return v;
}

/**
 * Where a declaration finds a delivery's id and its type (a header, or a path in the body), and
 * the members of a provider that follow from it alone — the same for every scheme, HMAC or token.
 */
export function declaredIdentity(d: CheckedDeclaration) {
  const idHeader = d.id && 'header' in d.id ? d.id.header : undefined;
  const idPath = d.id && 'body' in d.id ? d.id.body.split('.') : undefined;
  const typeHeader = d.eventType && 'header' in d.eventType ? d.eventType.header : undefined;
  const typePath = d.eventType && 'body' in d.eventType ? d.eventType.body.split('.') : undefined;
  const bodyField = (rawBody: Buffer, path: readonly string[] | undefined): string | undefined => {
    if (!path) return undefined;
    const v = at(parseJson(rawBody), path);
    return typeof v === 'string' || typeof v === 'number' ? String(v) : undefined;
  };
  const members: Pick<Provider, 'deliveryId' | 'eventTypeOf' | 'freshFields' | 'describe' | 'newDeliveryId'> = {
    deliveryId(headers, rawBody) {
      return idHeader ? header(headers, idHeader) || undefined : bodyField(rawBody, idPath);
    },
    eventTypeOf(headers, rawBody) {
      return typeHeader ? header(headers, typeHeader) || undefined : bodyField(rawBody, typePath);
    },
    freshFields(body: JsonObject) {
      // A body-held id is made new for every event, in the shape it has (its prefix kept).
      const held = idPath ? at(body, idPath) : undefined;
      if (!idPath || typeof held !== 'string') return [];
      const prefix = /^[A-Za-z]+_/.exec(held)?.[0] ?? '';
      return [{ path: idPath, make: () => `${prefix}${randomAlnum(24)}` }];
    },
    describe(body: JsonValue, fixtureName: string) {
      const type = typePath ? at(body, typePath) : undefined;
      const id = idPath ? at(body, idPath) : undefined;
      return { eventType: typeof type === 'string' ? type : fixtureName, ...(typeof id === 'string' ? { deliveryId: id } : {}) };
    },
    newDeliveryId() {
      return `${d.id && 'header' in d.id ? (d.id.prefix ?? '') : ''}${randomAlnum(24)}`;
    },
  };
  return { idHeader, idPath, typeHeader, typePath, members };
}
