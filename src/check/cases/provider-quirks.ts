import { catalogueFixture, compileFixture, listShippedFixtures, loadFixtureFile } from '../../fixtures/index.js';
import { catalogueOf } from '../../fixtures/catalogue/index.js';
import type { PreparedEvent } from '../../fixtures/index.js';
import type { AttemptOutcome } from '../../delivery/attempt.js';
import {
  answer,
  eventsOfOtherTypes,
  formFixtures,
  is2xx,
  LARGE_BODY_BYTES,
  legacyHeader,
  mib,
  MULTIBYTE_BODY_BYTES,
  mustAccept,
  notStoredDiagnosis,
  padded,
  post,
  sigHeader,
  sign,
  storedText,
  storedWrongly,
  straddling,
  tokenSignsNothing,
  withBody,
  stranger,
  NEEDS_VALID,
  NEEDS_ANSWERED,
} from './common.js';
import { afterFailure } from '../wording.js';
import { judgeHandshake, judgeQueryHandshake } from './handshake.js';
import type { CheckCase } from './common.js';

export const PROVIDER_QUIRKS: readonly CheckCase[] = [
  {
    name: 'rotation',
    summary:
      "while a secret is rolled the header holds two signatures (the receiver's and one by a secret it does not know), in either order: both 2xx, stored",
    skipFor: (p) =>
      p.rotation
        ? undefined
        : p.tokenOnly
          ? `${tokenSignsNothing(p)}: one token at a time, no signatures to rotate`
          : `${p.title} signs with one secret at a time`,
    needs: NEEDS_VALID,
    async run(ctx) {
      const p = ctx.provider;
      const results: string[] = [];
      const refused: string[] = [];
      for (const [where, secrets] of [
        ['second', [stranger(ctx), ...ctx.secrets]],
        ['first', [...ctx.secrets, stranger(ctx)]],
      ] as const) {
        const e = ctx.factory.make(Date.now());
        const r = await mustAccept(ctx, e, sign(ctx, e, { secrets }));
        results.push(`${r.text} with its signature ${where}`);
        if (!r.ok) refused.push(where);
      }
      const observed = results.join('; ');
      if (refused.length === 0) return { status: 'pass', observed };
      const entry = p.name === 'stripe' ? 'v1= entries' : "'v1,' entries";
      return {
        status: 'fail',
        observed,
        diagnosis: `your receiver refuses a valid signature when ${p.signatureHeader} holds two ${entry} and its own is ${refused.length === 2 ? 'in either place' : `the ${refused[0]}`} — ${p.title} sends two while a secret is being rolled: try every entry`,
      };
    },
  },
  {
    name: 'other-schemes',
    summary: "beside the signature, an entry of another scheme (Stripe test mode's v0=, Standard Webhooks' v1a,) is ignored: 2xx, stored",
    skipFor: (p) => (p.verifier.withOtherScheme ? undefined : `${p.title}'s signature header holds one signature and nothing else`),
    needs: NEEDS_VALID,
    async run(ctx) {
      const p = ctx.provider;
      const e = ctx.factory.make(Date.now());
      const headers = sign(ctx, e);
      headers[sigHeader(ctx)] = p.verifier.withOtherScheme?.(headers[sigHeader(ctx)] ?? '') ?? '';
      const r = await mustAccept(ctx, e, headers);
      if (r.ok) return { status: 'pass', observed: r.text };
      const what =
        p.name === 'stripe' ? 'a v0= entry — Stripe adds one to every test-mode delivery' : 'a v1a, entry — the spec reserves it';
      return {
        status: 'fail',
        observed: r.text,
        diagnosis: `your receiver refuses a valid delivery whose ${p.signatureHeader} also holds ${what}: ignore every scheme but the one you verify, as ${p.verifier.official} does`,
      };
    },
  },
  {
    name: 'legacy-signature',
    summary:
      "where the provider still sends a legacy signature beside the one to verify (GitHub's X-Hub-Signature, SHA-1): a valid delivery without it gets 2xx; refused, the receiver verifies the legacy one (a warning)",
    skipFor: (p) => (p.verifier.legacySignature ? undefined : `${p.title} sends one signature header`),
    needs: NEEDS_ANSWERED,
    async run(ctx) {
      const legacy = ctx.provider.verifier.legacySignature;
      const header = legacyHeader(ctx);
      if (!legacy || !header) return { status: 'skipped', observed: `${ctx.provider.title} sends one signature header` };
      const e = ctx.factory.make(Date.now());
      const headers = sign(ctx, e);
      delete headers[header];
      const res = await post(ctx, e.rawBody, headers);
      const observed = `${answer(res)} to a valid delivery without ${legacy.header}`;
      if (is2xx(res.status)) return { status: 'pass', observed: `${observed}: it verifies ${ctx.provider.signatureHeader}` };
      // The provider still sends the legacy header on every delivery, so nothing is lost today:
      // a warning to move, never a verdict that the receiver loses deliveries.
      return {
        status: 'warn',
        observed,
        diagnosis: `your receiver verifies ${legacy.header} (${legacy.scheme}), not ${ctx.provider.signatureHeader}: it works while ${ctx.provider.title} sends both, but ${legacy.advice} — verify ${ctx.provider.signatureHeader}`,
      };
    },
  },
  {
    name: 'large-body',
    summary: `a valid ${mib(LARGE_BODY_BYTES)} delivery (and one just under the provider's documented maximum, where it has one: GitHub 25 MB) gets 2xx and is stored`,
    needs: NEEDS_VALID,
    async run(ctx) {
      const p = ctx.provider;
      const sizes = [LARGE_BODY_BYTES, ...(p.verifier.maxBodyBytes ? [p.verifier.maxBodyBytes - 100_000] : [])];
      const results: string[] = [];
      let refused: { bytes: number; answered2xx: boolean; n: number | undefined; id: string } | undefined;
      for (const size of sizes) {
        const base = ctx.factory.make(Date.now());
        const body = padded(p, base, size);
        const e = withBody(p, base, body);
        const r = await mustAccept(ctx, e, sign(ctx, e), body);
        results.push(`${r.text} to ${mib(body.length)}`);
        if (!r.ok && refused === undefined) refused = { bytes: body.length, answered2xx: is2xx(r.res.status), n: r.n, id: e.deliveryId };
      }
      const observed = results.join('; ');
      if (refused === undefined) return { status: 'pass', observed };
      if (refused.answered2xx && refused.n !== 0)
        return { status: 'fail', observed, diagnosis: storedWrongly(refused.n, `a valid ${mib(refused.bytes)} delivery`) };
      if (refused.answered2xx) {
        const why = await notStoredDiagnosis(ctx, refused.id, `a valid ${mib(refused.bytes)} delivery`);
        return { status: 'fail', observed: why.late ? `${observed} (stored after the 2xx)` : observed, diagnosis: why.diagnosis };
      }
      const most = p.verifier.maxBodyBytes
        ? `${p.title} sends up to ${mib(p.verifier.maxBodyBytes)}`
        : `${p.title}'s events can be this large`;
      return {
        status: 'fail',
        observed,
        diagnosis: `your receiver refuses a valid ${mib(refused.bytes)} delivery — ${most}: set its body limit above the largest event (express.raw's default is 100 KiB)`,
      };
    },
  },
  {
    name: 'multibyte-body',
    summary: `a valid ${MULTIBYTE_BODY_BYTES / 1024} KiB delivery of 2-, 3- and 4-byte UTF-8 text, a character split across every 1 KiB and the body sent in pieces cut inside characters, gets 2xx and is stored`,
    needs: NEEDS_VALID,
    async run(ctx) {
      // A form body is ASCII on the wire (every other byte percent-encoded): nothing to split.
      if (ctx.contentType === 'form') return { status: 'skipped', observed: 'a form body is ASCII on the wire: no character to split' };
      const base = ctx.factory.make(Date.now());
      const { body, pieces } = straddling(ctx.provider, base, MULTIBYTE_BODY_BYTES, 1024);
      const e = withBody(ctx.provider, base, body);
      const { res, n, ok, text } = await mustAccept(ctx, e, sign(ctx, e), body, pieces);
      const observed = `${text} to ${Math.round(body.length / 1024)} KiB in ${pieces.length} pieces`;
      if (ok) return { status: 'pass', observed };
      if (is2xx(res.status) && n === 0) {
        const why = await notStoredDiagnosis(ctx, e.deliveryId, 'a large multi-byte delivery');
        return { status: 'fail', observed: why.late ? `${observed} (stored after the 2xx)` : observed, diagnosis: why.diagnosis };
      }
      if (is2xx(res.status)) return { status: 'fail', observed, diagnosis: storedWrongly(n, 'a large multi-byte delivery') };
      // Split reads are one cause; the text itself is another: the same kind of text with no
      // character across any 1 KiB boundary (nor any piece's end) tells them apart — a receiver
      // that decodes chunk by chunk takes it, one that re-encodes non-ASCII refuses it too.
      const again = ctx.factory.make(Date.now());
      const aligned = straddling(ctx.provider, again, MULTIBYTE_BODY_BYTES, 1024, false);
      const alignedEvent = withBody(ctx.provider, again, aligned.body);
      const single = await mustAccept(ctx, alignedEvent, sign(ctx, alignedEvent), aligned.body, aligned.pieces);
      if (!is2xx(single.res.status))
        return {
          status: 'fail',
          observed: `${observed}; ${answer(single.res)} to the same text with no character split`,
          diagnosis: `your receiver refuses a valid delivery with multi-byte text even when no character is split between reads — it re-encodes non-ASCII text before verifying (the body decoded as Latin-1 or another charset, then encoded as UTF-8): take the bytes as they are. ${ctx.provider.title}'s real events carry such text (names, commit messages, emoji)`,
        };
      return {
        status: 'fail',
        observed: `${observed}; ${answer(single.res)} to the same text with no character split`,
        diagnosis: `your receiver refuses a valid delivery whose multi-byte characters arrive split across two reads — it turns each chunk into text before joining them (\`body += chunk\`), which corrupts a character cut in two, so the signature no longer matches: collect the raw bytes (Buffer.concat of the chunks) and verify those. ${ctx.provider.title}'s real events carry such text (names, commit messages, emoji)`,
      };
    },
  },
  {
    name: 'other-types',
    summary:
      'authentic events of every other shipped type, 20 types spread over the catalogue, and a type no receiver knows: each 2xx and stored (store or ignore what you do not handle)',
    // Other types carry multi-byte text too: refused for that, they are multibyte-body's finding.
    needs: [...NEEDS_VALID, { case: 'multibyte-body' }],
    async run(ctx) {
      const factories = eventsOfOtherTypes(ctx);
      const route = ctx.forward?.route;
      if (factories.length === 0 && route)
        return {
          status: 'skipped',
          observed: `route ${route.name} takes ${route.events.join(', ')}: hookdrill has no other event of such a type, and listen forwards no other type to this target`,
        };
      const sent: { e: PreparedEvent; answer: AttemptOutcome }[] = [];
      for (const f of factories) {
        const e = f.make(Date.now());
        sent.push({ e, answer: await post(ctx, e.rawBody, sign(ctx, e)) });
      }
      // One look at the store for all of them (a --stored command runs once, not per event).
      const counts = await ctx.storedCounts(sent.map((s) => s.e.deliveryId));
      const failed = sent
        .map((s, i) => ({ ...s, n: counts?.[i] }))
        .filter((s) => !is2xx(s.answer.status) || (s.n !== undefined && s.n !== 1));
      const refused = failed.map((s) => `${s.e.eventType} (${answer(s.answer)}${storedText(s.n)})`);
      const observed = `${factories.length - refused.length} of ${factories.length} types accepted`;
      if (refused.length === 0) return { status: 'pass', observed };
      if (failed.every((s) => s.answer.error === 'timeout'))
        return {
          status: 'fail',
          observed: `${observed}; no answer in time to: ${refused.join(', ')}`,
          diagnosis: `your receiver does not answer some events within ${ctx.timeoutMs} ms — the work they start runs before the answer: store, answer 2xx, then do the work`,
        };
      if (failed.every((s) => is2xx(s.answer.status) && s.n === 0))
        return {
          status: 'fail',
          observed: `${observed}; not stored: ${refused.join(', ')}`,
          diagnosis: storedWrongly(0, 'events of other types'),
        };
      return {
        status: 'fail',
        observed: `${observed}; refused: ${refused.join(', ')}`,
        diagnosis: `your receiver refuses authentic events of types it has no handler for — each is a failed delivery (${afterFailure(ctx.provider)}): answer 2xx and ignore them`,
      };
    },
  },
  {
    name: 'url-verification',
    summary:
      "the provider's endpoint check is answered 2xx as it asks: Slack's url_verification with its challenge (plain text or JSON), Zoom's endpoint.url_validation with its plainToken and the token's HMAC, Twitch's webhook_callback_verification with the raw challenge (text/plain, not JSON)",
    skipFor: (p) =>
      !p.challengeAnswer
        ? `${p.title} sends no endpoint check`
        : p.keyPair
          ? `${p.title}'s endpoint check is its PING (the ping case)`
          : undefined,
    needs: NEEDS_ANSWERED,
    async run(ctx) {
      // A challenge in the query (Graph's validationToken) needs no fixture: an empty POST to the URL with it.
      if (ctx.provider.handshake?.query !== undefined) return judgeQueryHandshake(ctx, ctx.provider.handshake);
      const [shipped] = listShippedFixtures().filter(
        (f) =>
          f.provider === ctx.provider.name && ctx.provider.challengeAnswer?.(Buffer.from(JSON.stringify(loadFixtureFile(f.path).body))),
      );
      if (!shipped) return { status: 'skipped', observed: 'no endpoint-check fixture is shipped' };
      const e = compileFixture(ctx.provider, loadFixtureFile(shipped.path, ctx.provider.name), []).make(Date.now());
      // What the provider wants back: Slack its challenge (JSON or plain text), Zoom its token and the token's HMAC.
      const expected = (ctx.provider.challengeAnswer?.(e.rawBody, ctx.secrets) ?? {}) as Record<string, unknown>;
      const challenge = typeof expected.challenge === 'string' ? expected.challenge : undefined;
      // A declared handshake (Twitch's) says how its answer is written: judged by it.
      if (ctx.provider.handshake && challenge !== undefined) return judgeHandshake(ctx, ctx.provider.handshake, e, challenge);
      const res = await post(ctx, e.rawBody, sign(ctx, e));
      const body = (res.bodySnippet ?? '').trim();
      let echoed = challenge !== undefined && (body === challenge || body === `challenge=${challenge}`);
      let got: Record<string, unknown> | undefined;
      try {
        got = JSON.parse(body) as Record<string, unknown>;
      } catch {
        /* not JSON */
      }
      echoed ||= got !== undefined && Object.entries(expected).every(([k, v]) => got?.[k] === v);
      const shown = JSON.stringify(body.slice(0, 60));
      if (is2xx(res.status) && echoed)
        return {
          status: 'pass',
          observed: `${answer(res)}, ${challenge !== undefined ? 'the challenge echoed' : `${Object.keys(expected).join(' and ')} as expected`}`,
        };
      const title = ctx.provider.title;
      return {
        status: 'fail',
        observed: `${answer(res)} ${shown}`,
        diagnosis:
          challenge !== undefined
            ? `your receiver does not answer url_verification with its challenge — ${title} will not enable the endpoint until the answer's body is the challenge`
            : typeof got?.plainToken === 'string' && got.plainToken === expected.plainToken
              ? `your receiver answers ${e.eventType} with an encryptedToken that is not the HMAC-SHA256 (hex) of the plainToken with your secret token — ${title} will not validate the endpoint`
              : `your receiver does not answer ${e.eventType} with {"plainToken", "encryptedToken"} (the hex HMAC-SHA256 of plainToken with your secret token) within ${ctx.providerTimeoutMs / 1000} s — ${title} will not validate the endpoint, and revalidates every 72 hours`,
      };
    },
  },
  {
    name: 'ping',
    summary: 'Discord\'s PING (an interaction of type 1) is answered 2xx with {"type": 1}: Discord saves no endpoint that does not',
    skipFor: (p) =>
      p.keyPair && p.challengeAnswer ? undefined : `Discord's endpoint check; ${p.title} checks no endpoint with a signed PING interaction`,
    needs: NEEDS_ANSWERED,
    async run(ctx) {
      const e = pingOf(ctx)?.make(Date.now());
      if (!e) return { status: 'skipped', observed: 'no PING in the catalogue' };
      const res = await post(ctx, e.rawBody, sign(ctx, e));
      const body = (res.bodySnippet ?? '').trim();
      let pong = false;
      try {
        pong = (JSON.parse(body) as { type?: unknown }).type === 1;
      } catch {
        /* not JSON */
      }
      if (is2xx(res.status) && pong) return { status: 'pass', observed: `${answer(res)} ${body.slice(0, 40)}` };
      return {
        status: 'fail',
        observed: `${answer(res)} ${JSON.stringify(body.slice(0, 60))}`,
        diagnosis: `your receiver does not answer Discord's PING with {"type": 1} (PONG) — ${ctx.provider.title} will not save the Interactions Endpoint URL: answer a verified interaction of type 1 with {"type": 1} (Content-Type: application/json), storing nothing`,
      };
    },
  },
  {
    name: 'probe-401',
    summary:
      'a PING signed with another key (the probe Discord sends before it saves an endpoint) gets exactly 401, and is not answered PONG',
    skipFor: (p) => (p.keyPair && p.challengeAnswer ? undefined : `${p.title} sends no probe of its own`),
    needs: NEEDS_ANSWERED,
    async run(ctx) {
      const e = pingOf(ctx)?.make(Date.now());
      if (!e) return { status: 'skipped', observed: 'no PING in the catalogue' };
      const res = await post(ctx, e.rawBody, sign(ctx, e, { secrets: [stranger(ctx)] }), { refusal: true });
      if (res.status === 401) return { status: 'pass', observed: answer(res) };
      return {
        status: 'fail',
        observed: `${answer(res)} (expected 401)`,
        diagnosis: is2xx(res.status)
          ? "your receiver answers a PING whose signature is not Discord's: it does not verify X-Signature-Ed25519 before it answers, and Discord refuses to save such an endpoint"
          : `your receiver refuses a bad signature with ${answer(res)}, not 401 — Discord's endpoint check sends one and wants 401 ("invalid request signature") exactly, or it will not save the URL`,
      };
    },
  },
  {
    name: 'form-encoded',
    summary:
      'a slash command and every interaction (block_actions, view_submission, …) arrive form-encoded, signed over the raw form bytes: each gets 2xx',
    skipFor: (p) =>
      p.name === 'slack' || p.verifier.signsParsedForm
        ? undefined
        : p.formPayload
          ? `${p.title} sends no slash commands or interactions (a hook set to form: check --content-type form)`
          : `${p.title} sends no form-encoded requests`,
    needs: NEEDS_ANSWERED,
    async run(ctx) {
      const refused: string[] = [];
      const factories = formFixtures(ctx);
      for (const f of factories) {
        const e = f.make(Date.now());
        const res = await post(ctx, e.rawBody, sign(ctx, e));
        if (!is2xx(res.status)) refused.push(`${e.eventType} (${answer(res)})`);
      }
      const observed = `${factories.length - refused.length} of ${factories.length} form requests answered 2xx`;
      if (refused.length === 0) return { status: 'pass', observed };
      return {
        status: 'fail',
        observed: `${observed}; refused: ${refused.join(', ')}`,
        diagnosis: ctx.provider.verifier.signsParsedForm
          ? `your receiver refuses some of ${ctx.provider.title}'s signed requests — every one is form-encoded and signed over the URL and its parameters sorted by name (${ctx.provider.verifier.official}): verify each kind so, and answer each with a 2xx (a status callback needs nothing more)`
          : 'your receiver refuses signed form-encoded requests — verify the raw form bytes before parsing them (a parsed and re-encoded form no longer matches the signature), and answer within 3 s',
      };
    },
  },
  {
    name: 'first-seen-retry',
    summary:
      "a delivery never seen before that already carries the provider's retry headers (the first attempt never arrived) gets 2xx and is stored",
    skipFor: (p) => (p.retryHeaders ? undefined : `${p.title}'s retries carry no header of their own: an unseen retry is the valid case`),
    needs: NEEDS_VALID,
    async run(ctx) {
      const e = ctx.factory.make(Date.now());
      const r = await mustAccept(ctx, e, sign(ctx, e, { retry: 1, retryReason: 'connection_failed' }));
      if (r.n === undefined && is2xx(r.res.status))
        return { status: 'skipped', observed: `${r.text}: whether it was stored is the point (--inbox or --stored)` };
      if (r.ok) return { status: 'pass', observed: r.text };
      return {
        status: 'fail',
        observed: r.text,
        diagnosis: is2xx(r.res.status)
          ? 'your receiver answers 2xx to a retry it has never seen and drops it — the first attempt may never have arrived (connection_failed): dedupe on the event id, never on the retry header'
          : 'your receiver refuses a retry it has never seen — the first attempt may never have arrived: treat it as any delivery',
      };
    },
  },
];

/** The provider's PING (Discord's interaction of type 1), from its catalogue. */
function pingOf(ctx: Parameters<CheckCase['run']>[0]) {
  const p = ctx.provider;
  const ping = catalogueOf(p.name)?.events.find((e) => p.challengeAnswer?.(Buffer.from(JSON.stringify(e.body))) !== undefined);
  return ping ? compileFixture(p, catalogueFixture(p.name, ping), []) : undefined;
}
