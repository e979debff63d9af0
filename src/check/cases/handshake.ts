import type { PreparedEvent } from '../../fixtures/index.js';
import { judgeHandshakeAnswer } from '../../providers/handshake.js';
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
  const res = await post(ctx, e.rawBody, sign(ctx, e), { readAnswer: true });
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
