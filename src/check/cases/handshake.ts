import { randomUUID } from 'node:crypto';
import type { PreparedEvent } from '../../fixtures/index.js';
import { graphQueryValue, judgeHandshakeAnswer } from '../../providers/handshake.js';
import type { Handshake } from '../../providers/handshake.js';
import { answer, is2xx, post, sign } from './common.js';
import type { CaseOutcome, CheckContext } from './common.js';

/**
 * url-verification for a provider with a declared challenge handshake (providers/handshake.ts):
 * the signed handshake request is answered 200 with the challenge as the handshake says — for a
 * `text` answer (Twitch) the value alone, so JSON around it fails, with what the receiver sent.
 * The answer's Content-Type is read too: text/plain is what the provider's docs show; another one
 * with the raw value in the body is a warning, not a failure, since the sender reads the body — as
 * is an answer without Content-Length (chunked), which Twitch's docs ask for.
 */
export async function judgeHandshake(ctx: CheckContext, h: Handshake, e: PreparedEvent, challenge: string): Promise<CaseOutcome> {
  const res = await post(ctx, e.rawBody, sign(ctx, e), { readAnswer: true, ...(h.withinMs ? { deadlineMs: h.withinMs } : {}) });
  const body = res.wire?.body ?? res.bodySnippet ?? '';
  const type = (res.wire?.headers['content-type'] ?? '').toLowerCase();
  const title = ctx.provider.title;
  const shown = `${answer(res)} ${type ? `(${type.split(';')[0]}) ` : ''}${JSON.stringify(body.slice(0, 60))}`;
  const { ok, got } = judgeHandshakeAnswer(h, challenge, body);
  if (is2xx(res.status) && ok) {
    // Twitch's docs: "you must set the Content-Length response header to the length of the challenge
    // value" (twitchdev/issues#750, the docs' wording as corrected): a chunked answer has none.
    const length = res.wire?.headers['content-length'];
    if (h.answer === 'text' && length === undefined)
      return {
        status: 'warn',
        observed: `${shown}: the challenge echoed, chunked`,
        diagnosis: `your receiver echoes ${h.name}'s challenge with no Content-Length (a chunked answer) — ${title}'s docs say to set Content-Length to the challenge's length: answer it in one piece`,
      };
    if (h.answer === 'text' && !type.startsWith('text/plain'))
      return {
        status: 'warn',
        observed: `${shown}: the challenge echoed`,
        diagnosis: `your receiver echoes ${h.name}'s challenge as ${type || 'no Content-Type'} — ${title}'s docs answer it as text/plain; ${title} reads the body, so this works, but a framework that wraps or escapes a non-plain answer would break it: set Content-Type: text/plain`,
      };
    return { status: 'pass', observed: `${answer(res)}, the challenge echoed${h.answer === 'text' ? ' as the raw body' : ''}` };
  }
  const nothing = `${title} enables the endpoint only once the answer is the challenge, and sends no event before`;
  return {
    status: 'fail',
    observed: shown,
    diagnosis: !is2xx(res.status)
      ? `your receiver refuses ${title}'s ${h.name} (${answer(res)}) — ${nothing}: verify it, then answer 200 with the challenge`
      : got === 'json' || got === 'form'
        ? `your receiver echoes ${h.name}'s challenge wrapped in ${got === 'json' ? 'JSON' : 'a form field'} — ${title} needs the raw value alone as the body (Content-Type: text/plain), or the subscription stays unverified: ${nothing}`
        : `your receiver answers ${h.name} without its challenge — ${title} needs the raw challenge value as the body (Content-Type: text/plain): ${nothing}`,
  };
}

/**
 * url-verification for a challenge in the query (Microsoft Graph's validationToken): an empty,
 * unsigned POST to the receiver's URL with `?<param>=<token>`, the token written as Graph writes it
 * (form-encoded, lowercase hex: `Validation%3a+Testing+…`). Graph creates the subscription only
 * when the answer is 200 with the decoded token alone as the body, text/plain, within 10 s
 * (learn.microsoft.com/graph/change-notifications-delivery-webhooks, "Notification endpoint
 * validation"). The token echoed still encoded (or with its `+` kept), wrapped in JSON, or missing
 * fails; another 2xx than 200, or another Content-Type with the raw token, is a warning — the
 * docs ask for both, and what Graph does with them is not published.
 */
export async function judgeQueryHandshake(ctx: CheckContext, h: Handshake): Promise<CaseOutcome> {
  const param = h.query as string;
  // Graph's token, as a recorded validation shows it (providers/handshake.ts's queryChallengeOf).
  const token = `Validation: Testing client application reachability for subscription Request-Id: ${randomUUID()}`;
  const sent = graphQueryValue(token);
  const url = new URL(ctx.url);
  // Set as text, not through searchParams, which would write the token its own way (%3A, not %3a).
  url.search = `${url.search ? `${url.search.slice(1)}&` : ''}${param}=${sent}`;
  const res = await post(
    ctx,
    Buffer.alloc(0),
    { 'content-type': 'text/plain; charset=utf-8' },
    {
      readAnswer: true,
      url,
      ...(h.withinMs ? { deadlineMs: h.withinMs } : {}),
    },
  );
  const body = res.wire?.body ?? res.bodySnippet ?? '';
  const type = (res.wire?.headers['content-type'] ?? '').toLowerCase();
  const title = ctx.provider.title;
  const shown = `${answer(res)} ${type ? `(${type.split(';')[0]}) ` : ''}${JSON.stringify(body.slice(0, 60))}`;
  const { ok, got } = judgeHandshakeAnswer(h, token, body);
  const within = h.withinMs ?? ctx.providerTimeoutMs;
  const nothing = `${title} creates the subscription only once the answer is 200 with the token, within ${within / 1000} s`;
  if (is2xx(res.status) && ok) {
    if (res.status !== 200)
      return {
        status: 'warn',
        observed: `${shown}: the token echoed`,
        diagnosis: `your receiver echoes ${h.name}'s ${param} with ${answer(res)} — ${title}'s docs ask for 200 OK exactly: answer 200`,
      };
    if (!type.startsWith('text/plain'))
      return {
        status: 'warn',
        observed: `${shown}: the token echoed`,
        diagnosis: `your receiver echoes ${h.name}'s ${param} as ${type || 'no Content-Type'} — ${title}'s docs ask for text/plain; a framework that wraps or escapes a non-plain answer would break it: set Content-Type: text/plain`,
      };
    return { status: 'pass', observed: `${answer(res)}, the ${param} echoed decoded as the raw body` };
  }
  const trimmed = body.trim();
  const encoded = trimmed === sent || trimmed === encodeURIComponent(token);
  // %xx decoded, "+" left: a query read as a path (unquote, decodeURIComponent), not as a form.
  const plusKept = !encoded && trimmed === sent.replace(/%[0-9a-f]{2}/g, (e) => decodeURIComponent(e));
  const json = got === 'json' || inJson(trimmed, token);
  return {
    status: 'fail',
    observed: shown,
    diagnosis:
      res.status === undefined && res.error === 'timeout'
        ? `your receiver does not answer ${title}'s ${h.name} within ${within / 1000} s (${answer(res)}) — ${nothing}: echo the token at once, before any other work`
        : !is2xx(res.status)
          ? `your receiver refuses ${title}'s ${h.name} (${answer(res)}) — it is an empty POST with ?${param}=… and nothing signed (no clientState to check): ${nothing}; answer it before verifying anything`
          : encoded
            ? `your receiver echoes ${h.name}'s ${param} still URL-encoded (${JSON.stringify(trimmed.slice(0, 30))}…) — ${title} compares the decoded token ("+" is a space, %3a a colon): ${nothing}`
            : plusKept
              ? `your receiver decodes ${h.name}'s ${param} but leaves each "+" as it came (${JSON.stringify(trimmed.slice(0, 30))}…) — in a query "+" is a space: read it as a form (URLSearchParams, unquote_plus), or ${title} compares another token: ${nothing}`
              : json || got === 'form'
                ? `your receiver echoes ${h.name}'s ${param} wrapped in ${json ? 'JSON' : 'a form field'} — ${title} needs the decoded token alone as the body (Content-Type: text/plain): ${nothing}`
                : `your receiver answers ${h.name} without its ${param} — ${title} needs the decoded token alone as the body (Content-Type: text/plain): ${nothing}`,
  };
}

/** Whether a body is JSON holding the token as one of its values (`{"validationToken": token}`, a framework's default answer). */
function inJson(body: string, token: string): boolean {
  try {
    const parsed = JSON.parse(body) as unknown;
    return parsed === token || (typeof parsed === 'object' && parsed !== null && Object.values(parsed).includes(token));
  } catch {
    return false;
  }
}
