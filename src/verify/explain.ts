/**
 * Whether one captured request is signed as its provider signs, and when it is not, why — as
 * exactly as the evidence allows. The provider's own library answers "no signatures found
 * matching the expected signature for payload" and stops; this tries what frameworks and proxies
 * do to a body on its way (line ends, whitespace, escapes, key order, a charset) and names the one
 * that makes the signature match, the secret it matches (by position), or the header's defect.
 */
import { allProviders, getProvider, SignatureError } from '../providers/index.js';
import type { JsonValue, Provider, ProviderName, SignatureFailure } from '../providers/index.js';
import { windowSec } from '../providers/util.js';
import { UsageError } from '../util/errors.js';
import { checkKeyMaterial } from '../providers/key-material.js';
import type { CapturedRequest } from './request.js';

export type VerifyCode = 'valid' | SignatureFailure | 'transformed' | 'truncated' | 'empty_body' | 'other_provider';

export interface VerifyResult {
  command: 'verify';
  /** The signature is valid for the body as captured, at the moment judged. */
  ok: boolean;
  code: VerifyCode;
  provider: string;
  source: string;
  deliveryId?: string;
  eventType?: string;
  /** The one-line verdict, then what backs it. */
  findings: string[];
  /** With several secrets: which one signed it (1-based), never the secret itself. */
  secret?: number;
  /** What was done to the body between signing and capture, where one of hookdrill's candidates matched. */
  transformation?: string;
  /** The signed timestamp's age at the moment judged, in seconds, where the provider signs one. */
  ageSec?: number;
  judgedAtMs: number;
}

export interface ExplainOptions {
  provider?: ProviderName | (string & {});
  secrets: readonly string[];
  /** Judge as of this moment (Unix ms); default: the capture's arrival time where it has one, else now. */
  atMs?: number;
  /**
   * The URL a URL-bound signature (Square, HubSpot) is checked over, as the receiver derives it
   * (its --public-url): then only it. Absent: the capture's own URL, either scheme, and as a proxy's
   * X-Forwarded-* would rebuild it — the one that verifies is named.
   */
  url?: string;
}

/** A very wide window: whether the bytes match, apart from whether the moment does. */
const ANY_TIME = { toleranceSec: 1e12 };

/** The provider whose signature header the request carries, or undefined when none does. */
function providerOfHeaders(headers: Record<string, string>): Provider | undefined {
  return allProviders().find((p) => headers[p.signatureHeader.toLowerCase()] !== undefined);
}

/**
 * A candidate for the body as it was signed, made from the body as captured: each undoes one
 * thing frameworks and proxies do. `said` is what was done, in the words of the finding.
 */
interface Candidate {
  said: string;
  make(body: Buffer, p: Provider): Buffer | undefined;
}

const parsed = (body: Buffer): JsonValue | undefined => {
  try {
    return JSON.parse(body.toString('utf8')) as JsonValue;
  } catch {
    return undefined;
  }
};
const isObj = (v: JsonValue | undefined): v is { [k: string]: JsonValue } => typeof v === 'object' && v !== null && !Array.isArray(v);
const differs = (a: Buffer, b: string | Buffer) => (typeof b === 'string' ? !a.equals(Buffer.from(b)) : !a.equals(b));
const orNone = (body: Buffer, out: string | Buffer | undefined) =>
  out === undefined || !differs(body, out) ? undefined : typeof out === 'string' ? Buffer.from(out) : out;

const CANDIDATES: readonly Candidate[] = [
  {
    said: 'its line ends were changed from \\n to \\r\\n (a text-mode write, a Windows tool, a proxy)',
    make: (b) => orNone(b, b.toString('utf8').replace(/\r\n/g, '\n')),
  },
  { said: 'its line ends were changed from \\r\\n to \\n', make: (b) => orNone(b, b.toString('utf8').replace(/\r?\n/g, '\r\n')) },
  // The smallest changes before re-serialisation, which would also explain them, less exactly.
  { said: 'a line end was added at its end', make: (b) => orNone(b, b.toString('utf8').replace(/\r?\n$/, '')) },
  { said: 'the line end at its end was removed', make: (b) => orNone(b, Buffer.concat([b, Buffer.from('\n')])) },
  {
    said: 'it was parsed and written again (express.json(), JSON.stringify(req.body), json.dumps): its whitespace, escapes or key order are no longer the ones the provider signed',
    make: (b, p) => {
      const v = parsed(b);
      return isObj(v) && p.serialize ? orNone(b, p.serialize(v)) : undefined;
    },
  },
  {
    said: 'its whitespace was removed (compact JSON written again from pretty-printed JSON)',
    make: (b) => {
      const v = parsed(b);
      return v === undefined ? undefined : orNone(b, JSON.stringify(v, null, 2));
    },
  },
  {
    said: 'it was pretty-printed (whitespace added) after it was signed',
    make: (b) => {
      const v = parsed(b);
      return v === undefined ? undefined : orNone(b, JSON.stringify(v));
    },
  },
  {
    said: 'its non-ASCII characters were written as \\u escapes (ensure_ascii, a JSON writer that escapes)',
    make: (b) =>
      orNone(
        b,
        b
          .toString('utf8')
          .replace(/\\u([0-9a-fA-F]{4})/g, (m, hex: string) =>
            Number.parseInt(hex, 16) >= 0x80 ? String.fromCharCode(Number.parseInt(hex, 16)) : m,
          ),
      ),
  },
  {
    said: 'its \\u escapes were written as the characters themselves',
    make: (b) =>
      orNone(
        b,
        b.toString('utf8').replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`),
      ),
  },
  {
    said: 'its non-ASCII text was re-encoded: read as Latin-1 and written as UTF-8 (é became Ã©)',
    make: (b) => {
      const back = Buffer.from(b.toString('utf8'), 'latin1');
      return Buffer.from(back.toString('latin1'), 'utf8').equals(b) ? orNone(b, back) : undefined;
    },
  },
];

function tryVerify(
  p: Provider,
  body: Buffer,
  headers: Record<string, string>,
  secrets: readonly string[],
  opts: object,
): SignatureError | undefined {
  try {
    p.verify(body, headers, secrets, opts);
    return undefined;
  } catch (err) {
    if (err instanceof SignatureError) return err;
    throw err;
  }
}

/** Which secret (1-based) signed these bytes, where one did. */
function whichSecret(p: Provider, body: Buffer, headers: Record<string, string>, secrets: readonly string[]): number | undefined {
  const i = secrets.findIndex((s) => tryVerify(p, body, headers, [s], ANY_TIME) === undefined);
  return i < 0 ? undefined : i + 1;
}

/** The last second a signed timestamp can be here: the largest whose milliseconds are still exact. */
const LAST_SEC = Math.floor(Number.MAX_SAFE_INTEGER / 1000);

/**
 * The signed timestamp's age in seconds at `nowMs`, as the provider's own verify reads it. Its
 * timestamp is a header or a part of the signature header (Stripe's t=, Paddle's ts=), in seconds
 * or in milliseconds (WorkOS, HubSpot); read again here, it was guessed (a WorkOS timestamp read as
 * seconds was 20772809 days in the future). So the headers are judged with no window at moments
 * found by bisection: the first second the provider calls them stale is the one after the signed one.
 */
function ageOf(p: Provider, headers: Record<string, string>, secrets: readonly string[], nowMs: number): number | undefined {
  if (!p.timestamped) return undefined;
  const staleAt = (sec: number) =>
    safe(() => tryVerify(p, Buffer.alloc(0), headers, secrets, { nowMs: sec * 1000, toleranceSec: 0, headersOnly: true }))?.code ===
    'stale_timestamp';
  // A clock in the body (Linear's), or no timestamp the provider can read: no age to state.
  if (staleAt(0) || !staleAt(LAST_SEC)) return undefined;
  let [fresh, stale] = [0, LAST_SEC];
  while (stale - fresh > 1) {
    const mid = Math.floor((fresh + stale) / 2);
    if (staleAt(mid)) stale = mid;
    else fresh = mid;
  }
  return Math.round(nowMs / 1000 - fresh);
}

function ago(sec: number): string {
  const a = Math.abs(sec);
  const text =
    a < 120
      ? `${a} s`
      : a < 7200
        ? `${Math.round(a / 60)} min`
        : a < 172_800
          ? `${Math.round(a / 3600)} h`
          : `${Math.round(a / 86_400)} days`;
  return sec >= 0 ? `${text} old` : `${text} in the future`;
}

/** Judge one captured request. Throws a UsageError for input that cannot be judged (no secret, an unknown provider). */
export function explain(req: CapturedRequest, o: ExplainOptions): VerifyResult {
  if (o.secrets.length === 0)
    throw new UsageError('give the signing secret: --secret (or HOOKDRILL_SECRET); give --secret twice to try two');
  const named = o.provider === undefined ? undefined : getProvider(o.provider);
  const carried = providerOfHeaders(req.headers);
  const p0 = named ?? carried;
  if (!p0)
    throw new UsageError(
      `${req.source}: no provider's signature header (${allProviders()
        .map((x) => x.signatureHeader)
        .join(', ')}): give --provider`,
    );
  for (const s of o.secrets) checkKeyMaterial(p0, s, 'verify');
  const urls = p0.urlBound ? urlsToTry(req, o.url) : [];
  if (p0.urlBound && urls.length === 0)
    throw new UsageError(
      `${p0.title} signs the URL it posts to, and ${req.source} does not say it: give --public-url (the URL set at ${p0.title})`,
    );
  // Which URL the signature covers, where it covers one: the first that verifies (any time), else the first.
  const url = urls.find((u) => tryVerify(atUrl(p0, u), req.body, req.headers, o.secrets, ANY_TIME) === undefined) ?? urls[0];
  const p = url === undefined ? p0 : atUrl(p0, url);
  const urlText = url === undefined ? '' : ` over ${url}`;
  const nowMs = o.atMs ?? req.arrivedAtMs ?? Date.now();
  const base = {
    command: 'verify' as const,
    provider: p.name,
    source: req.source,
    judgedAtMs: nowMs,
    ...(() => {
      const id = safe(() => p.deliveryId(req.headers, req.body));
      const type = safe(() => p.eventTypeOf(req.headers, req.body));
      return { ...(id ? { deliveryId: id } : {}), ...(type ? { eventType: type } : {}) };
    })(),
  };
  const age = ageOf(p, req.headers, o.secrets, nowMs);
  const tolerance = `the tolerance is ${windowSec(p)} s`;
  const withAge = age === undefined ? {} : { ageSec: age };
  const many = o.secrets.length > 1;
  const secretText = (n: number) => (many ? ` with secret ${n} of ${o.secrets.length}${n > 1 ? ' (not the first)' : ''}` : '');
  const at = o.atMs !== undefined || req.arrivedAtMs !== undefined ? 'when it arrived' : 'now';

  const err = tryVerify(p, req.body, req.headers, o.secrets, { nowMs });
  if (!err) {
    const n = whichSecret(p, req.body, req.headers, o.secrets) ?? 1;
    return {
      ...base,
      ...withAge,
      ok: true,
      code: 'valid',
      secret: n,
      findings: [
        `signed as ${p.title} signs${urlText}${secretText(n)}${age !== undefined ? `, ${ago(age)} ${at} (${tolerance})` : ''}`,
        ...(url !== undefined && o.url === undefined && url !== urls[0]
          ? [`over ${url}, not ${urls[0]} as the capture says it arrived: a receiver behind a proxy must verify over the public URL`]
          : []),
        ...(many && n > 1 ? ['a receiver holding only the first secret refuses it: give it every live secret while one is rolled'] : []),
      ],
    };
  }
  const fail = (code: VerifyCode, findings: string[], more: Partial<VerifyResult> = {}): VerifyResult => ({
    ...base,
    ...withAge,
    ok: false,
    code,
    findings,
    ...more,
  });

  if (err.code === 'missing_header') {
    if (carried && carried !== p)
      return fail('other_provider', [
        `not ${p.title}'s: it carries ${carried.signatureHeader}, not ${p.signatureHeader} — it is ${carried.title}'s (give --provider ${carried.name})`,
      ]);
    return fail('missing_header', [`${err.message} — the request is not signed as ${p.title} signs, or a proxy dropped the header`]);
  }
  if (err.code === 'malformed_header') return fail('malformed_header', [`the signature header is malformed: ${err.message}`]);

  // The bytes, apart from the moment: does any secret sign them at all?
  const anyTime = tryVerify(p, req.body, req.headers, o.secrets, ANY_TIME);
  if (!anyTime && (err.code === 'stale_timestamp' || err.code === 'future_timestamp')) {
    const n = whichSecret(p, req.body, req.headers, o.secrets) ?? 1;
    return fail(
      err.code,
      [
        `stale ${at}: the signature matches the body${secretText(n)}, but the timestamp is ${age === undefined ? 'outside the window' : ago(age)} (${tolerance})`,
        at === 'now'
          ? 'a capture judged later than it arrived is always stale: give --at with the moment it arrived to judge it then'
          : age !== undefined && age > 0
            ? "it was held back on its way (a queue, a retry), or the receiver's clock runs ahead of the sender's"
            : "the receiver's clock runs behind the sender's: sync it (NTP)",
      ],
      { secret: n },
    );
  }

  if (req.body.length === 0)
    return fail('empty_body', [
      `the body is empty${req.declaredLength ? ` (Content-Length said ${req.declaredLength})` : ''} — the body was read before the signature check by something else (a body parser), or never forwarded`,
    ]);
  if (req.declaredLength !== undefined && req.declaredLength !== req.body.length)
    return fail('truncated', [
      `the body is ${req.body.length} bytes but Content-Length says ${req.declaredLength} — it was ${req.body.length < req.declaredLength ? 'cut short (read before it all arrived, or a size limit)' : 'given more bytes than declared'}`,
    ]);

  for (const c of CANDIDATES) {
    const candidate = c.make(req.body, p);
    if (!candidate) continue;
    if (tryVerify(p, candidate, req.headers, o.secrets, ANY_TIME)) continue;
    const n = whichSecret(p, candidate, req.headers, o.secrets) ?? 1;
    return fail(
      'transformed',
      [
        `the body was changed after ${p.title} signed it — ${c.said}`,
        `the signature is valid${secretText(n)} for the body as it was before that: verify the raw bytes as they arrive, before any framework or proxy touches them`,
      ],
      { transformation: c.said, secret: n },
    );
  }
  if (p0.urlBound && o.url !== undefined) {
    // Told the URL, and it does not verify over it: does it over the capture's own?
    const other = urlsToTry(req, undefined).find((u) => tryVerify(atUrl(p0, u), req.body, req.headers, o.secrets, ANY_TIME) === undefined);
    if (other !== undefined)
      return fail('no_match', [
        `signed for ${other}, not for ${o.url}: ${p.title} signs the URL it posts to, so the receiver must verify over the URL set at ${p.title}`,
      ]);
  }
  return fail('no_match', [
    `no signature in ${p.signatureHeader} matches this body${urlText} for ${many ? `any of the ${o.secrets.length} secrets` : 'the secret'}, and none of ${CANDIDATES.length} usual changes to a body (line ends, whitespace, escapes, charset, key order) makes it match`,
    `what is left: the secret is not the one that signed it (${p.name === 'stripe' ? 'each Stripe endpoint has its own whsec_, and test mode and live mode differ' : `is it this endpoint's ${p.title} secret, exactly?`}), ${p.urlBound ? `it was signed for another URL than ${url} (another endpoint, or a proxy in between: give --public-url), ` : ''}or the body was changed in a way hookdrill does not know`,
  ]);
}

function safe<T>(f: () => T): T | undefined {
  try {
    return f();
  } catch {
    return undefined;
  }
}

/** A provider whose verify checks a URL-bound signature over this URL. */
function atUrl(p: Provider, url: string): Provider {
  return { ...p, verify: (body, headers, secrets, opts = {}) => p.verify(body, headers, secrets, { ...opts, url }) };
}

/**
 * The URLs a URL-bound signature may cover: the one given alone; else the capture's own, with the
 * other scheme (a raw capture does not say which), and as the right-most X-Forwarded-Proto/-Host
 * a proxy in front would have set.
 */
function urlsToTry(req: CapturedRequest, given: string | undefined): string[] {
  if (given !== undefined) return [given];
  if (req.url === undefined || !URL.canParse(req.url)) return [];
  const own = new URL(req.url);
  const out = [own.href];
  const flipped = new URL(own.href);
  flipped.protocol = own.protocol === 'https:' ? 'http:' : 'https:';
  out.push(flipped.href);
  const last = (name: string) => req.headers[name]?.split(',').at(-1)?.trim() || undefined;
  const proto = last('x-forwarded-proto');
  const host = last('x-forwarded-host');
  if (proto || host) out.push(`${proto ?? own.protocol.replace(':', '')}://${host ?? own.host}${own.pathname}${own.search}`);
  return [...new Set(out)];
}
