/**
 * Why a receiver refuses a valid delivery, found the way a doctor finds a cause: send variants of
 * the delivery that differ from it in one respect each, all signed as the provider signs, and see
 * which the receiver takes. "It takes the compact body but not the pretty-printed one" names a
 * re-serialised body; "it takes nothing" leaves the secret, the URL, or a proxy. The provider's
 * own library says only "no match"; this is the question its users ask most (stripe-node#1254).
 */
import { compileFixture } from '../fixtures/index.js';
import { formatDuration } from '../util/duration.js';
import type { PreparedEvent } from '../fixtures/index.js';
import type { JsonObject, JsonValue } from '../providers/index.js';
import type { AttemptOutcome } from '../delivery/attempt.js';
import { formPayloadOf, is2xx, likeBody, post, sigHeader, sign, signedUrl, windowWords } from './cases/common.js';
import { windowSec } from '../providers/util.js';
import { afterTimeout, rawBytesFix, retrySpan } from './wording.js';
import type { CheckContext } from './cases/common.js';
import { jwksUrl, keyServerPort } from '../delivery/key-server.js';

/** What the variants showed: the defect in a developer's words, and which variants were taken. */
export interface RefusalFinding {
  diagnosis: string;
  accepted: string[];
  refused: string[];
}

/** Each variant as a person reads it, in the observed line and the findings. */
export const IN_WORDS: Readonly<Record<string, string>> = {
  'one-signature': 'one signature entry',
  'other-content-type': 'the other content type',
  'older-timestamp': 'a 30 s old timestamp',
  'url-as-received': 'signed over the URL as it arrived',
  'url-other-scheme': 'signed over the URL with the other scheme',
  'sorted-params': "the form's parameters sent sorted by name",
  plain: 'plain ASCII text',
  compact: 'compact JSON',
  'no-line-ends': 'no line breaks',
  'python-dumps': "Python's json.dumps layout",
  'sorted-keys': 'sorted keys',
  multibyte: 'multi-byte text',
  escapes: 'escaped characters',
};

interface Variant {
  name: string;
  /** The request, or undefined where the variant would be the delivery itself (nothing to learn). */
  make(): { body: Buffer; headers: Record<string, string>; id: string } | undefined;
}

/** Text no JSON writer escapes or re-encodes in any way: a string of it is the same bytes everywhere. */
const UNTOUCHABLE = /[^\x20-\x7e]|[/\\"<>&'\u2028\u2029]/gu;

function plainValue(v: JsonValue): JsonValue {
  if (typeof v === 'string') return v.replace(UNTOUCHABLE, '_');
  if (Array.isArray(v)) return v.map(plainValue);
  if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, plainValue(x)]));
  return v;
}

/** JSON text with every string value made plain (plainValue), all else as written: keys, layout, numbers. */
function plainStrings(text: string): string {
  // Every literal, keys too, so the scan never starts inside one; a key (followed by `:`) stays as it is.
  const colon = /\s*:/y;
  return text.replace(/"(?:[^"\\]|\\.)*"/g, (literal, at: number) => {
    colon.lastIndex = at + literal.length;
    return colon.test(text) ? literal : JSON.stringify(plainValue(JSON.parse(literal) as string));
  });
}

function sortedValue(v: JsonValue): JsonValue {
  if (Array.isArray(v)) return v.map(sortedValue);
  if (v !== null && typeof v === 'object')
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .map((k) => [k, sortedValue(v[k] as JsonValue)]),
    );
  return v;
}

/** Python's json.dumps with its default separators (", " and ": "): Flask's and Django's users re-serialise with it. */
function pythonDumps(v: JsonValue): string {
  if (Array.isArray(v)) return `[${v.map(pythonDumps).join(', ')}]`;
  if (v !== null && typeof v === 'object')
    return `{${Object.entries(v)
      .map(([k, x]) => `${JSON.stringify(k)}: ${pythonDumps(x)}`)
      .join(', ')}}`;
  return JSON.stringify(v);
}

/** 2-, 3- and 4-byte UTF-8, as real events carry in names and messages. */
const MULTIBYTE = 'Zo\u00eb \u82b1\u5b50 \u{20BB7}\u7530 \u{1F41B}';
/** A terminal's colour code and a slash: GitHub writes \u001B, Slack \/, a re-serialiser neither. */
const ESCAPED = '\u001b[1mbold\u001b[0m a/b';

/**
 * Send every variant that applies, one at a time, and name the defect from which were taken.
 * `refused` is the answer the delivery itself got (a 4xx or a 5xx).
 */
export async function diagnoseRefusal(ctx: CheckContext, refused: AttemptOutcome): Promise<RefusalFinding> {
  const p = ctx.provider;
  // The older-timestamp variant's age: inside the provider's window (30 s of the usual 5 minutes, half of Paddle's 5 s).
  const olderMs = Math.min(30_000, (windowSec(p) * 1_000) / 2);
  // Written as the provider writes it, a list of events too (SendGrid's [{…},\r\n{…}]\r\n).
  const write = (e: PreparedEvent, v: JsonValue) =>
    likeBody(p, e.rawBody, p.serialize && v !== null && typeof v === 'object' ? p.serialize(v as JsonObject) : JSON.stringify(v));
  const parsed = (e: PreparedEvent): JsonValue | undefined => {
    try {
      return JSON.parse(formPayloadOf(p, e.rawBody) ?? e.rawBody.toString('utf8')) as JsonValue;
    } catch {
      return undefined;
    }
  };
  /** A new delivery (a new id) whose body is `text(value)`, signed now. */
  const body = (text: (e: PreparedEvent, v: JsonValue) => string | undefined) => () => {
    const e = ctx.factory.make(Date.now());
    const v = parsed(e);
    const t = v === undefined ? undefined : text(e, v);
    if (t === undefined) return undefined;
    const b = Buffer.from(t);
    return { body: b, headers: sign(ctx, { ...e, rawBody: b }), id: e.deliveryId };
  };
  // A fixture file of the user's goes out as written (its layout, not the provider's writer's): its
  // plain variant keeps that layout, so a receiver that changes line ends is told so, not "plain strings".
  const asWritten = ctx.factory.fixture.raw !== undefined;
  const plain = (e: PreparedEvent, v: JsonValue) =>
    asWritten ? likeBody(p, e.rawBody, plainStrings(formPayloadOf(p, e.rawBody) ?? e.rawBody.toString('utf8'))) : write(e, plainValue(v));
  const withText = (text: string) => (e: PreparedEvent, v: JsonValue) => {
    const pv = plainValue(v);
    return pv !== null && typeof pv === 'object' && !Array.isArray(pv) ? write(e, { ...pv, hookdrill_text: text }) : undefined;
  };

  const variants: Variant[] = [
    {
      name: 'one-signature',
      make: () => {
        if (!p.verifier.firstSignatureOnly) return undefined;
        const e = ctx.factory.make(Date.now());
        const headers = sign(ctx, e);
        const only = p.verifier.firstSignatureOnly(headers[sigHeader(ctx)] ?? '');
        if (only === headers[sigHeader(ctx)]) return undefined;
        return { body: e.rawBody, headers: { ...headers, [sigHeader(ctx)]: only }, id: e.deliveryId };
      },
    },
    {
      name: 'other-content-type',
      make: () => {
        if (!p.formPayload) return undefined;
        const other = ctx.contentType === 'form' ? 'json' : 'form';
        const e = compileFixture(p, ctx.factory.fixture, [], undefined, other).make(Date.now());
        return { body: e.rawBody, headers: sign(ctx, e), id: e.deliveryId };
      },
    },
    {
      // Behind a proxy (--public-url) the provider signs the URL it posts to; a receiver that
      // rebuilds its own (http, its Host) takes only what is signed over that.
      name: 'url-as-received',
      make: () => {
        if (!p.urlBound || !ctx.publicUrl || ctx.publicUrl.href === ctx.url.href) return undefined;
        const e = ctx.factory.make(Date.now());
        return { body: e.rawBody, headers: sign(ctx, e, { url: ctx.url.href }), id: e.deliveryId };
      },
    },
    {
      name: 'url-other-scheme',
      make: () => {
        if (!p.urlBound) return undefined;
        const e = ctx.factory.make(Date.now());
        return { body: e.rawBody, headers: sign(ctx, e, { url: otherScheme(signedUrl(ctx)) }), id: e.deliveryId };
      },
    },
    {
      // A scheme that signs the form's parameters sorted by name (Twilio's): the same parameters
      // sent already sorted. A receiver that signs them in the order they came takes only this.
      name: 'sorted-params',
      make: () => {
        const e = ctx.factory.make(Date.now());
        if (!p.urlBound || parsed(e) !== undefined) return undefined;
        const form = new URLSearchParams(e.rawBody.toString('utf8'));
        const sorted = new URLSearchParams([...form].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
        if (sorted.toString() === form.toString()) return undefined;
        const b = Buffer.from(sorted.toString());
        return { body: b, headers: sign(ctx, { ...e, rawBody: b }), id: e.deliveryId };
      },
    },
    {
      name: 'older-timestamp',
      make: () => {
        if (!p.timestamped) return undefined;
        const e = ctx.factory.make(Date.now());
        return { body: e.rawBody, headers: sign(ctx, e, { nowMs: Date.now() - olderMs }), id: e.deliveryId };
      },
    },
    { name: 'plain', make: body((e, v) => (plain(e, v) === e.rawBody.toString('utf8') ? undefined : plain(e, v))) },
    {
      name: 'compact',
      make: body((e, v) => {
        const json = JSON.stringify(plainValue(v));
        return likeBody(p, e.rawBody, json) === plain(e, v) ? undefined : likeBody(p, e.rawBody, json);
      }),
    },
    { name: 'no-line-ends', make: body((e, v) => (plain(e, v).includes('\n') ? plain(e, v).replace(/\r?\n/g, '') : undefined)) },
    { name: 'python-dumps', make: body((e, v) => likeBody(p, e.rawBody, pythonDumps(plainValue(v)))) },
    { name: 'sorted-keys', make: body((e, v) => likeBody(p, e.rawBody, JSON.stringify(sortedValue(plainValue(v))))) },
    { name: 'multibyte', make: body(withText(MULTIBYTE)) },
    { name: 'escapes', make: body(withText(ESCAPED)) },
  ];

  const taken = new Map<string, boolean>();
  for (const v of variants) {
    const req = v.make();
    if (!req) continue;
    const res = await post(ctx, req.body, req.headers);
    taken.set(v.name, is2xx(res.status));
  }
  const accepted = [...taken].filter(([, ok]) => ok).map(([n]) => n);
  const refusedNames = [...taken].filter(([, ok]) => !ok).map(([n]) => n);
  const yes = (n: string) => taken.get(n) === true;
  const no = (n: string) => taken.get(n) === false;
  const rawFix = rawBytesFix(ctx.receiver);
  const only = (what: string, cause: string) => `your receiver accepts a valid delivery only when ${what} — ${cause}`;
  let diagnosis: string;
  if (yes('url-as-received') || yes('url-other-scheme')) {
    const wrong = yes('url-as-received') ? ctx.url.href : otherScheme(signedUrl(ctx));
    diagnosis = only(
      `it is signed over ${wrong}, not over ${signedUrl(ctx)} where ${p.title} posts`,
      `${p.title} signs the URL it posts to, and your receiver rebuilds another (${yes('url-as-received') ? 'the one it sees behind the proxy' : 'with the wrong scheme, as behind a TLS-terminating proxy'}): verify over the URL registered with ${p.title} — configure it, or rebuild it from X-Forwarded-Proto and X-Forwarded-Host`,
    );
  } else if (yes('sorted-params')) {
    diagnosis = only(
      "the form's parameters arrive sorted by name",
      `it signs them in the order they came, and ${p.title} signs the URL followed by every parameter sorted by name (${p.verifier.official}): parse the form, sort the names, and append each name and value to the URL before the HMAC`,
    );
  } else if (yes('one-signature')) {
    diagnosis = only(
      `${p.signatureHeader} holds a single signature and nothing else`,
      `its parser of the header is stricter than ${p.verifier.official}, and ${p.name === 'stripe' ? 'Stripe adds a v0= entry in test mode and a second v1= while a secret is rolled' : `${p.title} sends several entries while a secret is rolled`}: split the header and try every v1 entry, ignoring the rest`,
    );
  } else if (yes('older-timestamp')) {
    diagnosis = only(
      `the signed timestamp is ${formatDuration(olderMs)} old`,
      `its clock runs ahead of the sender's, or it refuses any timestamp not already in the past: sync the clock (NTP) and accept a timestamp up to ${windowWords(p)} either side`,
    );
  } else if ((no('plain') || taken.get('plain') === undefined) && yes('compact')) {
    // No plain variant where the body's strings are plain already: the delivery itself, refused, is it.
    diagnosis = yes('no-line-ends')
      ? only(
          'the body has no line breaks',
          `its line ends are removed or changed before it verifies (the body read as lines of text: readLine, splitlines, a text-mode stream; a trimmed body; the JSON parsed and written again), and ${p.title} writes line breaks into its bodies${p.name === 'sendgrid' ? ' (\\r\\n after each event and after the list)' : ''}: ${rawFix}`,
        )
      : only(
          'the body is compact JSON',
          `it verifies a re-serialised body, not the raw bytes (express.json() before the webhook route, JSON.stringify(req.body)), and ${p.title} pretty-prints its JSON: ${rawFix}`,
        );
  } else if (yes('plain') || (taken.get('plain') === undefined && (yes('multibyte') || yes('escapes')))) {
    if (no('multibyte'))
      diagnosis = only(
        'its text is plain ASCII',
        `it re-encodes non-ASCII text before verifying (the body decoded as Latin-1 or another charset, then encoded as UTF-8), and ${p.title}'s events carry names, messages and emoji in UTF-8: take the bytes as they are`,
      );
    else if (no('escapes'))
      diagnosis = only(
        `its strings hold no character ${p.title} writes as an escape`,
        `it verifies the JSON parsed and serialised again (${p.name === 'github' ? 'GitHub writes a control character as \\u001B, a re-serialiser as \\u001b' : p.name === 'slack' ? 'Slack writes / as \\/, a re-serialiser as /' : 'escapes come back written another way'}): ${rawFix}`,
      );
    else
      diagnosis = only(
        'its strings are plain',
        `something in the delivery as sent is changed before it is verified (a re-serialised or re-encoded body): capture a refused request and run hookdrill verify on it; ${rawFix}`,
      );
  } else if (yes('python-dumps') || yes('sorted-keys')) {
    diagnosis = only(
      yes('python-dumps') ? 'the body is written as Python\'s json.dumps writes it (", " and ": ")' : 'its keys are in sorted order',
      `it verifies the JSON parsed and serialised again (${yes('python-dumps') ? 'json.dumps(request.json)' : "a map's Marshal, which sorts keys"}), not the raw bytes: ${rawFix}`,
    );
  } else if (yes('other-content-type')) {
    // Only where no JSON body is taken at all: a form body is ASCII, so it also slips past a
    // receiver that mangles non-ASCII or re-serialises JSON, and that would be the wrong finding.
    const other = ctx.contentType === 'form' ? 'application/json' : 'application/x-www-form-urlencoded (payload=…)';
    diagnosis = only(
      `the body is ${other}`,
      `the hook it sits behind is set to the other content type: run check with --content-type ${ctx.contentType === 'form' ? 'json' : 'form'}, or change the hook's content type in ${p.title}`,
    );
  } else {
    // A key-pair scheme has no shared secret: what the receiver may hold wrong is the public key.
    const secret = p.jwt
      ? `the keys it verifies with (in test mode the ones hookdrill serves at ${jwksUrl(keyServerPort())}: is its JWKS URL pointed there, not at the provider's own?)${p.urlBound ? ', the audience it expects (the URL posted to)' : ''}`
      : p.keyPair
        ? `the public key (is it ${p.publicKey?.(ctx.secrets[0] ?? '') ?? '?'}, the one check signs for? \`hookdrill keys ${p.name}\` prints it)`
        : "the secret (is it this endpoint's signing secret, given exactly?)";
    diagnosis = `your receiver refuses every variant of a valid delivery (${taken.size ? [...taken.keys()].map((n) => IN_WORDS[n] ?? n).join(', ') : 'none applied'}): what is left is ${secret}, the URL or its path, or a proxy in between that rewrites the body`;
    // A signature in the body signs named fields, not the bytes: the HMAC over the body, as most
    // providers sign, is the mistake this scheme invites, and no variant can tell it from a wrong secret.
    const inBody = p.bodySignature;
    if (inBody)
      diagnosis += `; and ${p.title}'s signature is in the body (${inBody.carrier}), an HMAC of ${inBody.covers}: compute it over those fields as ${p.verifier.official} does, never over the body`;
  }
  if (!is2xx(refused.status) && refused.status !== undefined && refused.status >= 500)
    diagnosis += ` (it answered ${refused.status}: a failure of its own, ${retrySpan(p) ? `which ${p.title} retries` : `and ${p.title} does not retry`})`;
  return { diagnosis, accepted, refused: refusedNames };
}

/**
 * A non-2xx answer that is no refusal of the signature, named as what it is — a redirect, a wrong
 * path, a body limit, no answer at all — or undefined where the variants must find the cause.
 */
export function answerItself(ctx: CheckContext, res: AttemptOutcome): string | undefined {
  const p = ctx.provider;
  const s = res.status;
  if (s !== undefined && s >= 300 && s < 400) {
    const to = res.headers.location;
    return `your receiver answers ${s}, a redirect${to ? ` to ${to}` : ''}: ${p.title} does not follow redirects and counts it a failure — give ${p.title} (and check) the final URL${to?.startsWith('https:') && ctx.url.protocol === 'http:' ? ' (https)' : ''}`;
  }
  if (s === 404 || s === 405 || s === 410)
    return `nothing at ${ctx.url.pathname} takes a POST (${s}): is the path right? (check posts where --url points, as ${p.title} posts where the endpoint's URL points)`;
  if (s === 413)
    return `your receiver refuses a valid delivery as too large (413): its body limit is below ${p.title}'s ordinary events; raise it (express.raw's default is 100 KiB; ${p.title}'s events run to megabytes)`;
  if (s !== undefined) return undefined;
  if (res.error === 'timeout')
    return `your receiver does not answer a valid delivery within ${ctx.timeoutMs >= ctx.providerTimeoutMs ? `${p.title}'s ${ctx.providerTimeoutMs / 1000} s timeout (${afterTimeout(p)})` : `${ctx.timeoutMs} ms (--timeout; ${p.title} waits ${ctx.providerTimeoutMs / 1000} s, ${afterTimeout(p)})`}: answer 2xx as soon as the delivery is stored, and do the work after`;
  if (res.error === 'refused') return 'nothing accepts connections at the URL any more (connection refused): did the receiver stop?';
  if (res.error === 'reset') return 'your receiver closes the connection without answering a valid delivery (reset): did it crash on it?';
  return `no answer from the receiver (${res.error ?? 'no answer'}${res.detail ? `: ${res.detail}` : ''})`;
}

/** The same URL with http and https swapped: what a receiver behind a TLS-terminating proxy rebuilds. */
function otherScheme(url: string): string {
  const u = new URL(url);
  u.protocol = u.protocol === 'https:' ? 'http:' : 'https:';
  return u.href;
}
