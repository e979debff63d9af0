import { parseDuration } from '../util/duration.js';
import type { JsonValue, Provider } from './types.js';
import { isObject, parseJson } from './util.js';

/**
 * A challenge handshake: before any event, the sender posts a request holding a value the receiver
 * must echo back (Twitch EventSub's webhook_callback_verification, Slack's url_verification), and
 * enables the endpoint only once the answer is that value. What a declaration says of it: where the
 * value is, which requests are the handshake, and how the answer is written. `check`'s
 * url-verification case judges the answer, forged-check that it is given only to a verified request.
 *
 *   - `challenge`: the body field holding the value (a dotted path: "challenge"), or `{ query }`:
 *     the URL's query parameter holding it (Microsoft Graph's `?validationToken=…`, posted with an
 *     empty body: learn.microsoft.com/graph/change-notifications-delivery-webhooks, "Notification
 *     endpoint validation"). A query challenge is answered `text` only, and is unsigned — its
 *     request has no body and Graph binds nothing of it to a secret — so a receiver answers it
 *     before (without) verifying anything, and forged-check does not apply;
 *   - `when`: only bodies whose field has this value are the handshake (Slack's `type:
 *     url_verification`); absent, any body holding a text `challenge` is;
 *   - `answer`: `text` — the value alone as the body, `Content-Type: text/plain` (Twitch: "the
 *     response body must contain the raw challenge value"), so JSON around it fails; `json` —
 *     `{"challenge": value}` (Slack takes it either way);
 *   - `name`: what the sender calls it, for messages ("webhook_callback_verification");
 *   - `within`: how long the sender waits for the answer, where that is not the delivery's timeout
 *     (Graph: the validation within 10 s, a notification within 3 s — the page above).
 */
export interface HandshakeDeclaration {
  name: string;
  challenge: string | { query: string };
  when?: { body: string; value: string };
  answer: 'text' | 'json';
  within?: string;
}

/** The handshake as a provider carries it: what check and listen read. */
export interface Handshake {
  name: string;
  /** Path to the value to echo ([] where it travels in the query). */
  challenge: readonly string[];
  /** The query parameter holding the value, where it travels in the URL (Graph's validationToken). */
  query?: string;
  when?: { path: readonly string[]; value: string };
  answer: 'text' | 'json';
  /** The answer's deadline, where the handshake has its own (Graph's 10 s). */
  withinMs?: number;
}

export const HANDSHAKE_FIELDS = ['name', 'challenge', 'when', 'answer', 'within'] as const;

/** A checked declaration's handshake, or one fault in words (the caller names the field). */
export function checkHandshake(
  v: unknown,
  bad: (field: string, what: string) => Error,
  str: (v: unknown, field: string) => string,
): HandshakeDeclaration {
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw bad('handshake', 'expected { name, challenge, answer } (and when, where only some bodies are the handshake)');
  const h = v as Record<string, unknown>;
  for (const k of Object.keys(h))
    if (!(HANDSHAKE_FIELDS as readonly string[]).includes(k))
      throw bad(`handshake.${k}`, `unknown field (known: ${HANDSHAKE_FIELDS.join(', ')})`);
  if (h.answer !== 'text' && h.answer !== 'json')
    throw bad('handshake.answer', 'must be one of text (the value alone, text/plain), json ({"challenge": value})');
  let within: { within: string } | Record<string, never> = {};
  if (h.within !== undefined) {
    const text = str(h.within, 'handshake.within');
    let ms: number;
    try {
      ms = parseDuration(text, 'handshake.within');
    } catch (err) {
      throw bad('handshake.within', err instanceof Error ? err.message.replace(/^.*?: /, '') : String(err));
    }
    if (ms <= 0) throw bad('handshake.within', 'must be longer than 0');
    within = { within: text };
  }
  if (typeof h.challenge === 'object' && h.challenge !== null && !Array.isArray(h.challenge)) {
    const c = h.challenge as Record<string, unknown>;
    if (Object.keys(c).some((k) => k !== 'query') || typeof c.query !== 'string' || !/^[A-Za-z0-9._~-]+$/.test(c.query))
      throw bad('handshake.challenge', 'expected a body field ("challenge") or { query: "<parameter name>" } (letters, digits, . _ ~ -)');
    if (h.answer !== 'text') throw bad('handshake.answer', 'a query challenge is echoed as text (the decoded value alone, text/plain)');
    if (h.when !== undefined) throw bad('handshake.when', 'a query challenge is the request holding the parameter: no body field says so');
    return { name: str(h.name, 'handshake.name'), challenge: { query: c.query }, answer: 'text', ...within };
  }
  let when: HandshakeDeclaration['when'];
  if (h.when !== undefined) {
    const w = h.when as Record<string, unknown>;
    if (typeof w !== 'object' || w === null || Array.isArray(w) || Object.keys(w).some((k) => k !== 'body' && k !== 'value'))
      throw bad('handshake.when', 'expected { body, value }: the field that says a body is the handshake, and its value');
    when = { body: str(w.body, 'handshake.when.body'), value: str(w.value, 'handshake.when.value') };
  }
  return {
    name: str(h.name, 'handshake.name'),
    challenge: str(h.challenge, 'handshake.challenge'),
    ...(when ? { when } : {}),
    answer: h.answer,
    ...within,
  };
}

/** The handshake a provider carries, from its declaration. */
export function handshakeOf(d: HandshakeDeclaration): Handshake {
  const within = d.within !== undefined ? { withinMs: parseDuration(d.within, 'handshake.within') } : {};
  if (typeof d.challenge === 'object') return { name: d.name, challenge: [], query: d.challenge.query, answer: 'text', ...within };
  return {
    name: d.name,
    challenge: d.challenge.split('.'),
    ...(d.when ? { when: { path: d.when.body.split('.'), value: d.when.value } } : {}),
    answer: d.answer,
    ...within,
  };
}

function at(v: JsonValue | undefined, path: readonly string[]): JsonValue | undefined {
  let x = v;
  for (const k of path) x = isObject(x) ? x[k] : undefined;
  return x;
}

/** The value a body asks to be echoed, where the body is the handshake. */
export function challengeIn(h: Handshake, rawBody: Buffer): string | undefined {
  if (h.query !== undefined) return undefined;
  const body = parseJson(rawBody);
  if (h.when && at(body, h.when.path) !== h.when.value) return undefined;
  const value = at(body, h.challenge);
  return typeof value === 'string' ? value : undefined;
}

/**
 * The value a request's URL asks to be echoed, decoded, where the handshake travels in the query:
 * `+` is a space and `%3a` a colon, as a form's query is read (Graph's token is
 * "Validation: Testing client application reachability for subscription Request-Id: <uuid>",
 * sent `Validation%3a+Testing+…`: a recorded validation in abraunegg/onedrive's docs/webhooks.md,
 * nginx's log of two POSTs from Graph, Aug 2024). A parameter given empty is no challenge.
 */
export function queryChallengeOf(h: Handshake, requestUrl: string): string | undefined {
  if (h.query === undefined) return undefined;
  const q = requestUrl.indexOf('?');
  if (q < 0) return undefined;
  const value = new URLSearchParams(requestUrl.slice(q + 1)).get(h.query);
  return value ? value : undefined;
}

/**
 * A query value written as Graph writes its validationToken: form-encoded (a space is `+`) with
 * lowercase hex escapes (`%3a`), as .NET's HttpUtility.UrlEncode writes them — the recorded
 * validation above. A receiver that echoes the value as it arrived, undecoded, is then told apart.
 */
export function graphQueryValue(value: string): string {
  return encodeURIComponent(value)
    .replace(/%20/g, '+')
    .replace(/%[0-9A-F]{2}/g, (e) => e.toLowerCase());
}

/**
 * The members a handshake gives a provider: its challengeAnswer (`{ challenge }`, what listen and
 * check read; listen writes it as text/plain where the answer is `text`) and the handshake itself.
 */
export function handshakeMembers(h: Handshake): Pick<Provider, 'handshake' | 'challengeAnswer'> {
  return {
    handshake: h,
    challengeAnswer(rawBody) {
      const challenge = challengeIn(h, rawBody);
      return challenge === undefined ? undefined : { challenge };
    },
  };
}

/** Whether an answer's body is the challenge as the handshake needs it, and if not, what it is instead, in words. */
export function judgeHandshakeAnswer(
  h: Handshake,
  challenge: string,
  body: string,
): { ok: boolean; got: 'raw' | 'json' | 'form' | 'other' } {
  const raw = body.trim() === challenge;
  let json = false;
  try {
    const parsed = JSON.parse(body) as unknown;
    json = (isObject(parsed as JsonValue) && (parsed as Record<string, unknown>).challenge === challenge) || parsed === challenge;
  } catch {
    /* not JSON */
  }
  const form = body.trim() === `challenge=${challenge}`;
  const got = raw ? 'raw' : json ? 'json' : form ? 'form' : 'other';
  return { ok: h.answer === 'text' ? raw : raw || json || form, got };
}

/**
 * A declared provider with its declaration's handshake: the members above, and the endpoint check
 * in its contract (signed: the sender signs it as any delivery, so a receiver verifies before it
 * echoes), unless the contract a built-in provider wrote names it already.
 */
export function withDeclaredHandshake(d: { handshake?: HandshakeDeclaration; name: string; file: string }, provider: Provider): Provider {
  if (!d.handshake) return provider;
  const h = handshakeOf(d.handshake);
  const named = provider.contract.endpointChecks.some((c) => c.name === h.name);
  return {
    ...provider,
    ...handshakeMembers(h),
    contract: named
      ? provider.contract
      : {
          ...provider.contract,
          endpointChecks: [
            ...provider.contract.endpointChecks,
            {
              name: h.name,
              // A query challenge comes with an empty body: nothing of it is signed (Graph's validation).
              signed: h.query === undefined,
              answer:
                h.query !== undefined
                  ? `200 with the ${h.query} query parameter, decoded, alone as the body, text/plain`
                  : h.answer === 'text'
                    ? 'the challenge alone as the body, text/plain'
                    : '{"challenge": the challenge}',
              source: `the ${d.name} declaration in ${d.file}`,
            },
          ],
        },
  };
}
