import { UsageError } from '../util/errors.js';
import { parseDuration, toleranceProblem } from '../util/duration.js';
import { headerValueProblem } from '../util/http-headers.js';
import { checkHandshake } from './handshake.js';
import type { HandshakeDeclaration } from './handshake.js';
import type { BodySignature } from './declaration-body.js';
import { checkBodySignature } from './declaration-body.js';

export type { BodySignature } from './declaration-body.js';
import { checkCanonicalSignature } from './declaration-canonical.js';
import type { CanonicalSignature } from './declaration-canonical.js';

export type { CanonicalSignature } from './declaration-canonical.js';
import { checkJwtSignature, isJwtScheme } from './declaration-jwt.js';
import type { JwtSignature } from './declaration-jwt.js';
export type { JwtSignature } from './declaration-jwt.js';
import { checkCertificateSignature, isCertificateScheme } from './declaration-certificate.js';
import type { CertificateSignature } from './declaration-certificate.js';
export type { CertificateSignature } from './declaration-certificate.js';
import { checkFieldSignature } from './declaration-field.js';
import type { FieldSignature } from './declaration-field.js';
export type { FieldSignature } from './declaration-field.js';

/**
 * A provider of a team's own, declared in the project file (`providers` in hookdrill.config.json):
 * the signing scheme of a platform that sends webhooks, as its docs would state it. hookdrill
 * sends, verifies, checks and chaos-tests it as it does its built-in providers
 * (providers/declared.ts). Only data: reading a declaration costs no provider code, so the CLI
 * can know the names before it loads anything.
 *
 * Templates name the parts of a delivery in braces: `{id}`, `{timestamp}`, `{url}` and `{body}`
 * (the signed content only: `{url}` is the URL the sender posts to, as a receiver behind a proxy
 * must rebuild it), `{signature}` or `{signatures}` (the signature header's value only), `{event}`
 * (a header's value only).
 */
export interface ProviderDeclaration {
  /** For messages: "Acme Payments". Default: the name. */
  title?: string;
  signature: HmacSignature | TokenSignature | BodySignature | CanonicalSignature | JwtSignature | CertificateSignature | FieldSignature;
  /**
   * Where the signed timestamp is sent: in its own header, or in the signature's value (no header).
   * `unit`: Unix seconds (`s`, the default), milliseconds (`ms`), or an RFC 3339 date-time
   * (`rfc3339`, Twitch's "2021-03-19T23:51:24.637747359Z"), signed as the text sent; an RFC 3339
   * timestamp goes in a header of its own.
   */
  timestamp?: {
    header?: string;
    unit?: 's' | 'ms' | 'rfc3339';
    tolerance?: string;
    /**
     * A timestamp ahead of the clock by more than the tolerance: `refused` (the default, a window
     * both ways) or `accepted`, where the sender's own library only refuses an old one
     * (@mux/mux-node's verifySignature: `timestampAge > 300`, as Stripe's).
     */
    future?: 'refused' | 'accepted';
  };
  /** Where the delivery id a receiver dedupes on is: a header (sent fresh, `prefix` + 24 random characters) or a body field (a dotted path). */
  id?: { header: string; prefix?: string } | { body: string };
  /** Where the event type is: a header or a body field (a dotted path). */
  eventType?: { header: string } | { body: string };
  /** Other headers, in the order sent; a value may be `{id}`, `{timestamp}`, `{signature}` or `{event}` to place those headers among them. */
  headers?: Record<string, string>;
  /** Default application/json. */
  contentType?: string;
  /** How long the sender waits for an answer ("10s"). */
  timeout: string;
  /** The delays before each retry ("1m", "5m", …); none: it does not retry. */
  retries?: string[];
  /** A folder of `<event>.json` fixtures, from the project file's folder. */
  fixtures?: string;
  /** The fixture sent when none is named (a file in `fixtures`, without .json). */
  fixture?: string;
  /** A challenge the receiver must echo before any event (providers/handshake.ts): Twitch's webhook_callback_verification. */
  handshake?: HandshakeDeclaration;
}

/**
 * Verification by a shared secret sent as it is, not a MAC (GitLab's X-Gitlab-Token, Postmark's
 * Basic credentials, Okta's static Authorization header): the receiver compares what arrives with
 * what it holds, in constant time. Nothing in the request is signed: the body, the time and the
 * id are not covered, so a body changed in transit under the right token is still accepted — a
 * property of the scheme (TLS is what protects the body), which check says rather than demands.
 *   - `token`: the secret itself in `header` (`X-Gitlab-Token: <secret>`);
 *   - `bearer`: `Authorization: Bearer <secret>` (or another header, where the sender names one);
 *   - `basic`: `Authorization: Basic base64(<user>:<password>)`, the secret being `user:password`.
 */
export interface TokenSignature {
  scheme: 'token' | 'bearer' | 'basic';
  /** Required for `token`; `Authorization` by default for `bearer` and `basic`. */
  header?: string;
}

/** The header holding the scheme's secret or signature: a token scheme's Authorization by default. */
export function signatureHeaderOf(sig: { header?: string }): string {
  return sig.header ?? 'Authorization';
}

/** Whether a declared signature is written into the body (BodySignature), not sent in a header. */
export function isBodyScheme(sig: ProviderDeclaration['signature']): sig is BodySignature {
  return sig.scheme === 'body';
}

/** Whether a declared signature is a shared token or credentials (no MAC, nothing of the request covered). */
export function isTokenScheme(sig: ProviderDeclaration['signature']): sig is TokenSignature {
  return sig.scheme === 'token' || sig.scheme === 'bearer' || sig.scheme === 'basic';
}

/** Whether a declared secret is a field of the body's each item, sent as it is (Microsoft Graph's clientState). */
export function isFieldScheme(sig: ProviderDeclaration['signature']): sig is FieldSignature {
  return sig.scheme === 'field';
}

/** Whether a declared signature is a canonical string of the form's parameters (Twilio's), not of the body's bytes. */
export function isCanonicalScheme(sig: ProviderDeclaration['signature']): sig is CanonicalSignature {
  return sig.scheme === 'canonical';
}

/** An HMAC over the body and what the content template puts around it. */
export interface HmacSignature {
  /** Absent or `hmac`: a MAC of the content (the other schemes are TokenSignature's). */
  scheme?: 'hmac';
  /** The header the signature is sent in. */
  header: string;
  algorithm: 'sha1' | 'sha256' | 'sha512';
  encoding: 'hex' | 'base64';
  /** How the secret becomes the HMAC key: its UTF-8 bytes (default), base64, or `whsec_` + base64 (Standard Webhooks). */
  key?: 'utf8' | 'base64' | 'whsec';
  /** What is signed: `{body}` once, with `{id}`, `{timestamp}` and `{url}` around it ("{id}.{timestamp}.{body}", "{url}{body}"). */
  content: string;
  /** The header's value: "{signature}" (the default), "t={timestamp},v1={signature}", or with `{signatures}` one entry per secret. */
  value?: string;
  /** With `{signatures}`: each secret's entry ("v1,{signature}") … */
  each?: string;
  /** … and what stands between two entries (" "). */
  join?: string;
}

/** A declaration checked, with what it means worked out once. */
export interface CheckedDeclaration extends ProviderDeclaration {
  name: string;
  /** The project file it came from (for messages) and the folder its paths are relative to. */
  file: string;
  dir: string;
  timeoutMs: number;
  retryDelaysMs: number[];
  toleranceSec: number;
}

const FIELDS = [
  'title',
  'signature',
  'timestamp',
  'id',
  'eventType',
  'headers',
  'contentType',
  'timeout',
  'retries',
  'fixtures',
  'fixture',
  'handshake',
];
const PLACES = ['{id}', '{timestamp}', '{url}', '{body}', '{signature}', '{signatures}', '{event}'];

/** A provider name of a team's own: a word a flag and a file name can carry. */
export const DECLARED_NAME = /^[a-z][a-z0-9-]{0,39}$/;

/** Every fault is one line naming the field (`providers.acme.signature.algorithm`). */
export function checkDeclaration(name: string, declared: unknown, file: string, dir: string): CheckedDeclaration {
  const where = `${file}: providers.${name}`;
  const bad = (field: string, what: string) => new UsageError(`${where}${field ? `.${field}` : ''}: ${what}`);
  if (!DECLARED_NAME.test(name)) throw bad('', 'a provider name is lowercase letters, digits and -, starting with a letter');
  const d = object(declared, () => bad('', 'expected an object declaring the scheme (signature, timeout, …)'));
  /** A field no one reads is refused by name, not ignored: a misspelt `retry` must not mean "no retries". */
  const onlyKnown = (o: Record<string, unknown>, known: readonly string[], prefix: string) => {
    for (const k of Object.keys(o)) if (!known.includes(k)) throw bad(`${prefix}${k}`, `unknown field (known: ${known.join(', ')})`);
  };
  onlyKnown(d, FIELDS, '');
  const str = (v: unknown, field: string) => {
    if (typeof v !== 'string' || v === '') throw bad(field, 'must be a non-empty string');
    return v;
  };
  const oneOf = <T extends string>(v: unknown, field: string, choices: readonly T[]): T => {
    if (!choices.includes(v as T)) throw bad(field, `must be one of ${choices.join(', ')}`);
    return v as T;
  };
  const headerName = (v: unknown, field: string) => {
    const h = str(v, field);
    if (!/^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/.test(h)) throw bad(field, `"${h}" is not a header name`);
    return h;
  };
  const places = (text: string) => PLACES.filter((p) => text.includes(p));
  /** Text sent in a header: what no request can carry (a NUL, an escape, CR or LF) is refused here, not on the wire. */
  const headerText = (v: unknown, field: string) => {
    const text = str(v, field);
    if (/[\r\n]/.test(text)) throw bad(field, 'a header value cannot hold a line break');
    const problem = headerValueProblem(text);
    if (problem) throw bad(field, `holds ${problem}: no request can carry it`);
    return text;
  };
  /** Each part once: the header is read back by a pattern with one group per part. */
  const once = (text: string, field: string) => {
    const twice = PLACES.find((p) => text.split(p).length > 2);
    if (twice) throw bad(field, `names ${twice} twice; each part is sent once`);
  };

  const s = object(d.signature, () => bad('signature', 'expected { header, algorithm, encoding, content }'));
  if (s.scheme === 'body') return checkBodyDeclaration();
  if (s.scheme === 'canonical') {
    const canonical = checkCanonicalSignature(s, { bad, str, oneOf, headerName, headerText, onlyKnown });
    if (canonical.signedHeaders !== undefined) {
      // The request form signs headers, the timestamp's among them (declaration-canonical-request.ts).
      const { timestamp, toleranceSec } = readTimestamp('');
      if (timestamp?.unit === 'rfc3339') throw bad('timestamp.unit', 'a signed header of the request form is Unix s or ms');
      return common(canonical, timestamp, toleranceSec);
    }
    if (d.timestamp !== undefined)
      throw bad(
        'timestamp',
        'a canonical scheme signs the URL and the parameters, no time: a window on an unsigned timestamp holds nothing',
      );
    if (d.contentType !== undefined && !/^application\/x-www-form-urlencoded\b/i.test(String(d.contentType)))
      throw bad('contentType', "a canonical scheme signs a form's parameters: its body is application/x-www-form-urlencoded");
    return common(canonical, undefined, 300);
  }
  if (s.scheme === 'jwt') return checkJwtDeclaration();
  if (s.scheme === 'certificate') return checkCertificateDeclaration();
  if (s.scheme === 'field') return checkFieldDeclaration();
  if (s.scheme !== undefined && s.scheme !== 'hmac') return checkTokenDeclaration();
  const signature: HmacSignature = {
    header: headerName(s.header, 'signature.header'),
    algorithm: oneOf(s.algorithm, 'signature.algorithm', ['sha1', 'sha256', 'sha512'] as const),
    encoding: oneOf(s.encoding, 'signature.encoding', ['hex', 'base64'] as const),
    key: s.key === undefined ? 'utf8' : oneOf(s.key, 'signature.key', ['utf8', 'base64', 'whsec'] as const),
    content: str(s.content, 'signature.content'),
    value: s.value === undefined ? '{signature}' : headerText(s.value, 'signature.value'),
  };
  onlyKnown(s, ['scheme', 'header', 'algorithm', 'encoding', 'key', 'content', 'value', 'each', 'join'], 'signature.');
  if (signature.content.split('{body}').length !== 2) throw bad('signature.content', 'must hold {body} exactly once');
  const stray = places(signature.content).filter((p) => !['{id}', '{timestamp}', '{url}', '{body}'].includes(p));
  if (stray.length) throw bad('signature.content', `may name {id}, {timestamp}, {url} and {body} only, not ${stray.join(', ')}`);
  const value = signature.value as string;
  once(value, 'signature.value');
  const many = value.includes('{signatures}');
  if (many === value.includes('{signature}') || value.split(many ? '{signatures}' : '{signature}').length !== 2)
    throw bad('signature.value', 'must hold {signature} (or {signatures}, with each and join) exactly once');
  if (many) {
    signature.each = headerText(s.each, 'signature.each');
    signature.join = headerText(s.join, 'signature.join');
    if (signature.each.split('{signature}').length !== 2) throw bad('signature.each', 'must hold {signature} exactly once');
    // Only the value's own parts are read back (the timestamp from the value): another in an entry would be sent and never read.
    const other = places(signature.each).find((p) => p !== '{signature}');
    if (other) throw bad('signature.each', `may name {signature} only, not ${other}`);
  } else if (s.each !== undefined || s.join !== undefined) throw bad('signature.value', 'each and join go with {signatures} in the value');

  const { timestamp, toleranceSec } = readTimestamp(value);
  const signsTime = signature.content.includes('{timestamp}');
  if (signsTime && !timestamp)
    throw bad('signature.content', 'signs {timestamp}: declare where it is sent (timestamp: { header } or in signature.value)');
  if (timestamp && !signsTime)
    throw bad('timestamp', 'is declared but not signed: put {timestamp} in signature.content, or a replayed delivery stays valid forever');

  return common(signature, timestamp, toleranceSec);

  /** The declared timestamp and its window (300 s unless said): where it is sent, its unit. */
  function readTimestamp(value: string): { timestamp: ProviderDeclaration['timestamp']; toleranceSec: number } {
    let timestamp: ProviderDeclaration['timestamp'];
    let toleranceSec = 300;
    if (d.timestamp === undefined) return { timestamp, toleranceSec };
    const t = object(d.timestamp, () => bad('timestamp', 'expected { header, unit, tolerance, future }'));
    onlyKnown(t, ['header', 'unit', 'tolerance', 'future'], 'timestamp.');
    timestamp = {
      ...(t.header !== undefined ? { header: headerName(t.header, 'timestamp.header') } : {}),
      unit: t.unit === undefined ? 's' : oneOf(t.unit, 'timestamp.unit', ['s', 'ms', 'rfc3339'] as const),
      ...(t.tolerance !== undefined ? { tolerance: str(t.tolerance, 'timestamp.tolerance') } : {}),
      ...(t.future !== undefined ? { future: oneOf(t.future, 'timestamp.future', ['refused', 'accepted'] as const) } : {}),
    };
    if (timestamp.tolerance !== undefined) {
      const ms = durationOf(timestamp.tolerance, 'timestamp.tolerance', bad);
      const problem = toleranceProblem(ms);
      if (problem) throw bad('timestamp.tolerance', `${timestamp.tolerance} is ${problem}`);
      toleranceSec = ms / 1000;
    }
    if (!timestamp.header && !value.includes('{timestamp}'))
      throw bad('timestamp', 'give it a header, or send it in signature.value ({timestamp})');
    // A date-time holds ',', ':' and '.': read back from a value of other parts it would be ambiguous.
    if (timestamp.unit === 'rfc3339' && !timestamp.header)
      throw bad('timestamp.unit', 'rfc3339 goes with a header of its own (timestamp.header)');
    return { timestamp, toleranceSec };
  }

  /**
   * A token or credentials (TokenSignature): no MAC, so nothing of the request is covered — no
   * content to sign, and no timestamp (a window on a value no secret binds would hold nothing).
   */
  function checkTokenDeclaration(): CheckedDeclaration {
    const scheme = oneOf(s.scheme, 'signature.scheme', [
      'hmac',
      'token',
      'bearer',
      'basic',
      'body',
      'canonical',
      'jwt',
      'certificate',
      'field',
    ] as const) as TokenSignature['scheme'];
    const hmacOnly = ['algorithm', 'encoding', 'key', 'content', 'value', 'each', 'join'].find((k) => s[k] !== undefined);
    if (hmacOnly) throw bad(`signature.${hmacOnly}`, `goes with an HMAC; a ${scheme} scheme sends the secret itself, and signs nothing`);
    onlyKnown(s, ['scheme', 'header'], 'signature.');
    if (scheme === 'token' && s.header === undefined) throw bad('signature.header', 'a token scheme names the header its token is sent in');
    const signature: TokenSignature = { scheme, ...(s.header !== undefined ? { header: headerName(s.header, 'signature.header') } : {}) };
    if (d.timestamp !== undefined)
      throw bad('timestamp', `a ${scheme} scheme signs nothing: no timestamp can be held to a window (a replayed delivery stays valid)`);
    return common(signature, undefined, 300);
  }

  /**
   * A signature written into the body (declaration-body.ts): its timestamp, if any, is a body
   * field named in the signature, so the top-level `timestamp` (a header's) is refused.
   */
  function checkBodyDeclaration(): CheckedDeclaration {
    const signature = checkBodySignature(s, bad, onlyKnown);
    if (d.timestamp !== undefined)
      throw bad('timestamp', 'a body scheme writes its timestamp into the body: name the field in signature.timestamp');
    const declared = common(signature, undefined, 300);
    const placed = Object.entries(declared.headers ?? {}).find(([, v]) => v === '{signature}');
    if (placed) throw bad(`headers.${placed[0]}`, 'a body scheme sends its signature in the body (signature.field), not in a header');
    const signed = [signature.field, signature.timestamp, signature.token].filter((p) => p !== undefined);
    if (declared.id && 'body' in declared.id && signed.includes(declared.id.body))
      throw bad('id.body', `is ${declared.id.body}, which the signing writes anew: name the event's own id`);
    return declared;
  }

  /** A signed JWT (declaration-jwt.ts): its own time is in the token (iat, exp), so no timestamp is declared beside it. */
  function checkJwtDeclaration(): CheckedDeclaration {
    const signature = checkJwtSignature(s, {
      bad,
      str,
      headerName,
      onlyKnown,
      durationMs: (text, field) => durationOf(text, field, bad),
    });
    if (d.timestamp !== undefined)
      throw bad('timestamp', 'a jwt carries its own time (iat, exp, held to its lifetime): declare signature.lifetime instead');
    return common(signature, undefined, 300);
  }

  /**
   * A signature by a key whose certificate the request names (declaration-certificate.ts): its
   * time, if any, is a fresh header it signs; the top-level timestamp (a window) is refused — the
   * senders of this scheme hold their receivers to none (PayPal's verification checks no window).
   */
  function checkCertificateDeclaration(): CheckedDeclaration {
    const signature = checkCertificateSignature(s, { bad, str, oneOf, headerName, headerText, onlyKnown });
    if (d.timestamp !== undefined)
      throw bad('timestamp', 'a certificate scheme writes its time as a fresh header it signs (signature.fresh: { <header>: "time" })');
    const declared = common(signature, undefined, 300);
    const own = [signature.header, signature.certificateHeader, ...Object.keys(signature.fresh ?? {})].map((h) => h.toLowerCase());
    const twice = Object.keys(declared.headers ?? {}).find((h) => own.includes(h.toLowerCase()));
    if (twice)
      throw bad(`headers.${twice}`, 'is a header the certificate scheme writes itself (its signature, its certificate URL or a fresh one)');
    return declared;
  }

  /** A secret in a body field (declaration-field.ts): sent as it is, so no timestamp (nothing binds one) and no header of its own. */
  function checkFieldDeclaration(): CheckedDeclaration {
    const signature = checkFieldSignature(s, bad, onlyKnown);
    if (d.timestamp !== undefined)
      throw bad('timestamp', 'a field scheme sends the secret itself, and signs nothing: no timestamp can be held to a window');
    const declared = common(signature, undefined, 300);
    const placed = Object.entries(declared.headers ?? {}).find(([, v]) => v === '{signature}');
    if (placed) throw bad(`headers.${placed[0]}`, 'a field scheme sends its secret in the body (signature.field), not in a header');
    return declared;
  }

  function common(
    signature: ProviderDeclaration['signature'],
    timestamp: ProviderDeclaration['timestamp'],
    toleranceSec: number,
  ): CheckedDeclaration {
    let id: ProviderDeclaration['id'];
    if (d.id !== undefined) {
      const i = object(d.id, () => bad('id', 'expected { header, prefix } or { body }'));
      if (i.header !== undefined && i.body === undefined)
        id = {
          header: headerName(i.header, 'id.header'),
          ...(i.prefix !== undefined ? { prefix: headerText(i.prefix, 'id.prefix') } : {}),
        };
      else if (i.body !== undefined && i.header === undefined && i.prefix === undefined) id = { body: str(i.body, 'id.body') };
      else throw bad('id', 'expected { header, prefix } or { body }, one of them');
    }
    if (
      !isTokenScheme(signature) &&
      !isBodyScheme(signature) &&
      !isJwtScheme(signature) &&
      !isCertificateScheme(signature) &&
      !isFieldScheme(signature) &&
      signature.content.includes('{id}') &&
      !(id && 'header' in id)
    )
      throw bad('signature.content', 'signs {id}: declare the header it is sent in (id: { header })');

    let eventType: ProviderDeclaration['eventType'];
    if (d.eventType !== undefined) {
      const e = object(d.eventType, () => bad('eventType', 'expected { header } or { body }'));
      if (e.header !== undefined && e.body === undefined) eventType = { header: headerName(e.header, 'eventType.header') };
      else if (e.body !== undefined && e.header === undefined) eventType = { body: str(e.body, 'eventType.body') };
      else throw bad('eventType', 'expected { header } or { body }, one of them');
    }

    let headers: Record<string, string> | undefined;
    if (d.headers !== undefined) {
      const h = object(d.headers, () => bad('headers', 'expected an object of header names and values'));
      headers = {};
      for (const [k, v] of Object.entries(h)) {
        headerName(k, `headers.${k}`);
        const text = headerText(v, `headers.${k}`);
        const p = places(text);
        if (p.length && (p.length > 1 || text !== p[0] || p[0] === '{body}' || p[0] === '{signatures}'))
          throw bad(`headers.${k}`, 'a value is literal text, or one of {id}, {timestamp}, {signature}, {event} alone');
        headers[k] = text;
      }
    }

    const timeoutMs = durationOf(str(d.timeout, 'timeout'), 'timeout', bad);
    if (timeoutMs <= 0) throw bad('timeout', 'must be longer than 0');
    let retryDelaysMs: number[] = [];
    if (d.retries !== undefined) {
      if (!Array.isArray(d.retries)) throw bad('retries', 'expected a list of delays ("1m", "5m", …)');
      retryDelaysMs = d.retries.map((r, i) => durationOf(str(r, `retries[${i}]`), `retries[${i}]`, bad));
    }
    const out: CheckedDeclaration = {
      name,
      file,
      dir,
      ...(d.title !== undefined ? { title: str(d.title, 'title') } : {}),
      signature,
      ...(timestamp ? { timestamp } : {}),
      ...(id ? { id } : {}),
      ...(eventType ? { eventType } : {}),
      ...(headers ? { headers } : {}),
      ...(d.contentType !== undefined ? { contentType: str(d.contentType, 'contentType') } : {}),
      timeout: d.timeout as string,
      retries: (d.retries as string[] | undefined) ?? [],
      ...(d.fixtures !== undefined ? { fixtures: str(d.fixtures, 'fixtures') } : {}),
      ...(d.fixture !== undefined ? { fixture: str(d.fixture, 'fixture') } : {}),
      timeoutMs,
      retryDelaysMs,
      toleranceSec,
    };
    if (out.fixture !== undefined && out.fixtures === undefined) throw bad('fixture', 'names a file in fixtures: declare the folder too');
    if (d.handshake !== undefined) out.handshake = checkHandshake(d.handshake, bad, str);
    return out;
  }
}

function object(v: unknown, fail: () => Error): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw fail();
  return v as Record<string, unknown>;
}

function durationOf(text: string, field: string, bad: (field: string, what: string) => Error): number {
  try {
    return parseDuration(text, field);
  } catch (err) {
    throw bad(field, err instanceof Error ? err.message.replace(/^.*?: /, '') : String(err));
  }
}
