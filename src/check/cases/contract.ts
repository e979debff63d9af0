import { bodyPathOf, eventsOf, fieldOf, markRedelivery, mayResend, withList } from '../../providers/contract.js';
import { formatDuration } from '../../util/duration.js';
import type { Batching, DeliveryContract, Sourced } from '../../providers/contract.js';
import { compileFixture, listShippedFixtures, loadFixtureFile, resolveFixtures } from '../../fixtures/index.js';
import type { JsonValue } from '../../providers/types.js';
import { randomAlnum } from '../../providers/util.js';
import type { PreparedEvent } from '../../fixtures/index.js';
import { NEEDS_ANSWERED, NEEDS_VALID, answer, is2xx, post, serialized, sign, storedCount, storedText, stranger } from './common.js';
import type { CheckCase, CheckContext } from './common.js';
import { routeTakes } from '../forwarded.js';

/**
 * The cases a provider's delivery contract asks for (providers/contract.ts), judged as the provider
 * delivers: every event of a batch kept, the empty Verify answered, an endpoint check refused when
 * it is forged — each for every provider whose contract has it, none by name.
 */

type ListBatching = Extract<Batching, { events: 'list' }> & Sourced;

const listOf = (c: DeliveryContract): ListBatching | undefined => (c.batching.events === 'list' ? (c.batching as ListBatching) : undefined);

/** `n` fresh events of the fixture in one body, as the provider batches them; undefined when the fixture is no batch. */
export function batchOf(ctx: CheckContext, n: number): { event: PreparedEvent; ids: string[] } | undefined {
  const b = listOf(ctx.provider.contract);
  if (!b) return undefined;
  const made = Array.from({ length: n }, () => ctx.factory.make(Date.now()));
  const bodies = made.map((e) => JSON.parse(e.rawBody.toString('utf8')) as unknown);
  const events = bodies.flatMap((body) => eventsOf(ctx.provider.contract, body));
  const ids = events.map((e) => fieldOf(e, b.id));
  if (events.length !== n || ids.some((id) => id === undefined)) return undefined;
  const rawBody = Buffer.from(serialized(ctx.provider, withList(bodies[0], b.path, events)));
  return { event: { ...(made[0] as PreparedEvent), rawBody }, ids: ids as string[] };
}

export const CONTRACT_CASES: readonly CheckCase[] = [
  {
    name: 'batch',
    summary: 'several events in one body, as the provider batches them (LINE, SendGrid, HubSpot): each is stored under its own id',
    skipFor: (p) => (listOf(p.contract) ? undefined : `${p.title} sends one event a request (${p.contract.batching.source})`),
    needs: NEEDS_VALID,
    async run(ctx) {
      const b = listOf(ctx.provider.contract) as ListBatching;
      const batch = batchOf(ctx, b.typical);
      if (!batch) return { status: 'skipped', observed: "the default fixture is not one of the provider's batches" };
      const res = await post(ctx, batch.event.rawBody, sign(ctx, batch.event));
      const counts = await ctx.storedCounts(batch.ids);
      if (counts === undefined)
        return is2xx(res.status)
          ? { status: 'skipped', observed: `${answer(res)}: whether each event was stored is the point (--inbox or --stored)` }
          : {
              status: 'fail',
              observed: answer(res),
              diagnosis: `your receiver refuses a body of ${batch.ids.length} events — ${ctx.provider.title} batches them (${b.source})`,
            };
      const kept = counts.filter((n) => n >= 1).length;
      const observed = `${answer(res)} to ${batch.ids.length} events in one body; ${kept} of them stored`;
      if (is2xx(res.status) && kept === batch.ids.length) return { status: 'pass', observed };
      const where = b.path.length ? `${b.path.join('.')}[]` : 'the body (a list)';
      return {
        status: 'fail',
        observed,
        diagnosis: !is2xx(res.status)
          ? `your receiver refuses a body of ${batch.ids.length} events — ${ctx.provider.title} puts up to ${b.max} in one (${b.source}): verify the body, then store each event`
          : counts[0] !== undefined && counts[0] >= 1 && kept === 1
            ? `your receiver keeps only the first event of a batch and drops the other ${batch.ids.length - 1} — loop over ${where} and store each under its own ${b.id.join('.')}: the 2xx tells ${ctx.provider.title} all of them arrived, and they are never sent again`
            : `your receiver answered 2xx but stored ${kept} of ${batch.ids.length} events — store each event of ${where} under its own ${b.id.join('.')} before answering`,
      };
    },
  },
  {
    name: 'redelivered',
    summary:
      "an event whose first attempt never arrived, come as a redelivery (LINE's isRedelivery true, HubSpot's attemptNumber 1), gets 2xx and is stored",
    skipFor: (p) => (p.contract.redelivery ? undefined : `${p.title} marks no redelivery in its body`),
    needs: NEEDS_VALID,
    async run(ctx) {
      const m = ctx.provider.contract.redelivery as NonNullable<DeliveryContract['redelivery']>;
      const e = ctx.factory.make(Date.now());
      const again = { ...e, rawBody: markRedelivery(ctx.provider.contract, e.rawBody, 1) };
      const res = await post(ctx, again.rawBody, sign(ctx, again, { retry: 1 }));
      const n = await storedCount(ctx, e.deliveryId);
      const observed = `${answer(res)} to a redelivery (${m.path.join('.')} ${m.becomes === 'true' ? 'true' : '1'})${storedText(n)}`;
      if (n === undefined && is2xx(res.status))
        return { status: 'skipped', observed: `${observed}: whether it was stored is the point (--inbox or --stored)` };
      if (is2xx(res.status) && n === 1) return { status: 'pass', observed };
      return {
        status: 'fail',
        observed,
        diagnosis: is2xx(res.status)
          ? `your receiver answers a redelivery 2xx and drops it — ${ctx.provider.title} redelivers an event whose first attempt failed or never arrived (${m.source}): dedupe on ${listOf(ctx.provider.contract)?.id.join('.') ?? 'the event id'}, never on ${m.path.join('.')}`
          : `your receiver refuses a redelivery — ${ctx.provider.title} sends one when the first attempt failed or never arrived (${m.source}): treat it as any delivery, deduped on the event's id`,
      };
    },
  },
  {
    name: 'answer',
    summary:
      "where the provider needs a body back (Discord's interaction response, Slack's answer to a slash command), a valid delivery gets one the provider takes, within its deadline",
    skipFor: (p) => (p.judgeAnswer ? undefined : `${p.title} needs a 2xx, nothing more (${p.contract.answer.source})`),
    needs: NEEDS_ANSWERED,
    async run(ctx) {
      const need = answerNeed(ctx.provider.contract);
      const e = need.fixture ? fixtureNamed(ctx, need.fixture) : ctx.factory.make(Date.now());
      if (!e) return { status: 'skipped', observed: `no shipped ${need.fixture} fixture` };
      const res = await post(ctx, e.rawBody, sign(ctx, e), { readAnswer: true });
      const what = need.fixture ? `a ${need.fixture}` : 'a valid delivery';
      // A refusal is another case's finding: valid's, or (a form-encoded command) form-encoded's.
      if (!is2xx(res.status))
        return {
          status: 'skipped',
          observed: `${answer(res)} to ${what}: ${need.fixture ? 'form-encoded' : 'the valid case'} judges a refusal`,
        };
      const body = (res.bodySnippet ?? '').trim();
      if (body.length >= 4096) return { status: 'skipped', observed: `${answer(res)}: an answer over 4 KiB is not judged` };
      const problem = ctx.provider.judgeAnswer?.(e.rawBody, body, res.wire?.headers['content-type']);
      const late = res.latencyMs > need.deadlineMs;
      const observed = `${answer(res)} ${JSON.stringify(body.slice(0, 60))} to ${what} in ${Math.round(res.latencyMs)}ms`;
      if (!problem && !late) return { status: 'pass', observed };
      if (need.fixture && problem && !late)
        // What Slack does with JSON that is no message is not published: a warning, never a failure.
        return {
          status: 'warn',
          observed,
          diagnosis: `your receiver answers ${what} with ${problem} — ${ctx.provider.title} posts a non-empty answer as a message (${need.source}): answer with an empty 200 (the acknowledgment) and reply through response_url, or answer with a message`,
        };
      return {
        status: 'fail',
        observed,
        diagnosis: problem
          ? `your receiver answers ${ctx.provider.title} with something it does not take: ${problem} — ${ctx.provider.title} needs ${need.what} (${need.source}), and ${need.otherwise ?? 'shows "This interaction failed"'} otherwise: ${need.fix ?? 'answer with a deferred response ({"type": 5}) and do the work after'}`
          : `your receiver answers after ${Math.round(res.latencyMs)}ms — ${ctx.provider.title} needs ${need.what} within ${need.deadlineMs / 1000} s (${need.source}): answer at once${need.fixture ? ' (an empty 200)' : ' with a deferred response'} and do the work after`,
      };
    },
  },
  {
    name: 'late-retry',
    summary:
      "a retry as late as the provider's last (Stripe's and Paddle's about three days), freshly signed, its event's own time unchanged: gets 2xx and is stored",
    skipFor: (p) => {
      const delays = p.profiles[p.defaultProfile]?.retryDelaysMs ?? [];
      if (!mayResend(p.contract) || delays.length === 0) return `${p.title} does not retry on its own (${p.contract.resends.source})`;
      if (p.clockInBody) return `${p.title}'s retries carry their own send time in the body`;
      return undefined;
    },
    needs: NEEDS_VALID,
    async run(ctx) {
      const delays = ctx.provider.profiles[ctx.provider.defaultProfile]?.retryDelaysMs ?? [];
      const lateMs = delays.reduce((a, b) => a + b, 0);
      const e = ctx.factory.make(Date.now());
      // Where every retry carries the first attempt's signature (Mailgun), the signed time is as old
      // as the retry is late: that is what is held, whether or not the event has a time of its own.
      const signedOnce = ctx.provider.signedOnce;
      if (!e.aged && !signedOnce) return { status: 'skipped', observed: 'the default fixture holds no time of its own' };
      const late = {
        ...e,
        rawBody: markRedelivery(ctx.provider.contract, e.aged ? e.aged(lateMs) : e.rawBody, delays.length),
        ...(signedOnce ? { madeAtMs: (e.madeAtMs ?? Date.now()) - lateMs } : {}),
      };
      const res = await post(ctx, late.rawBody, sign(ctx, late, { retry: delays.length }));
      const n = await storedCount(ctx, e.deliveryId);
      const age = formatDuration(lateMs);
      const observed = `${answer(res)} to a retry whose event is ${age} old${storedText(n)}`;
      if (is2xx(res.status) && (n === undefined || n === 1)) return { status: 'pass', observed };
      return {
        status: 'fail',
        observed,
        diagnosis: is2xx(res.status)
          ? `your receiver answers 2xx to a late retry and does not store it — ${ctx.provider.title}'s last retry comes ${age} after the first attempt (${ctx.provider.contract.resends.source})`
          : signedOnce
            ? `your receiver refuses a retry whose signature is ${age} old — ${ctx.provider.title}'s last retry comes that late and carries the first attempt's signature, timestamp and token unchanged (${signedOnce.source}): a window of minutes on the signed timestamp refuses every retry, and after an outage the event is never stored. Refuse replays by the token you have already seen, or a window longer than the retries`
            : `your receiver refuses an event whose own time is ${age} old — ${ctx.provider.title}'s last retry comes that late, freshly signed, the event's own time unchanged (${ctx.provider.contract.resends.source}): after an outage every retry would be refused and the event never stored. Bound replays by the signed timestamp, never by the event's own time`,
      };
    },
  },
  {
    name: 'empty-batch',
    summary: "a body with no events (LINE's Verify button) gets 2xx",
    skipFor: (p) => (emptyCheckOf(p.contract) ? undefined : `${p.title} sends no body without events`),
    needs: NEEDS_ANSWERED,
    async run(ctx) {
      const b = listOf(ctx.provider.contract) as ListBatching;
      // The same request forged-check sends forged: the batch body with no events.
      const e = checkRequestOf(ctx) as PreparedEvent;
      const res = await post(ctx, e.rawBody, sign(ctx, e));
      if (is2xx(res.status)) return { status: 'pass', observed: answer(res) };
      const check = emptyCheckOf(ctx.provider.contract);
      return {
        status: 'fail',
        observed: `${answer(res)} to a signed body with an empty ${b.path.join('.') || 'list'}`,
        diagnosis: `your receiver refuses ${ctx.provider.title}'s ${check?.name ?? 'endpoint check'}: a verified body with no events must get 200, or the console says the webhook URL does not work (${check?.source ?? b.source})`,
      };
    },
  },
  {
    name: 'forged-check',
    summary:
      "the provider's endpoint check signed with another secret, and unsigned, is refused — and never answered with a MAC of data the caller chose",
    skipFor: (p) =>
      p.handshakeVisit
        ? `${p.title}'s forged ${p.contract.endpointChecks.map((c) => c.name).join(', ')} is the forged-confirmation case`
        : p.keyPair
          ? `${p.title}'s forged PING is the probe-401 case`
          : !p.contract.endpointChecks.some((c) => c.signed)
            ? `${p.title} sends no signed endpoint check`
            : p.challengeAnswer || emptyCheckOf(p.contract)
              ? undefined
              : `${p.title}'s endpoint check (${p.contract.endpointChecks.map((c) => c.name).join(', ')}) is an event like any other: the signature cases judge it`,
    needs: NEEDS_ANSWERED,
    async run(ctx) {
      const check = ctx.provider.contract.endpointChecks.find((c) => c.signed);
      const e = checkRequestOf(ctx);
      if (!e || !check) return { status: 'skipped', observed: 'no endpoint-check fixture' };
      const forged = await post(ctx, e.rawBody, sign(ctx, e, { secrets: [stranger(ctx)] }), { refusal: true });
      const bare = await post(ctx, e.rawBody, { 'content-type': 'application/json' }, { refusal: true });
      const observed = `${answer(forged)} signed with another secret, ${answer(bare)} unsigned`;
      if (!is2xx(forged.status) && !is2xx(bare.status)) return { status: 'pass', observed };
      // An answer that is a MAC of what the caller chose is a signing oracle (Zoom's encryptedToken).
      const oracle = [forged, bare].some((r) => is2xx(r.status) && macOracle(ctx, e, r.bodySnippet));
      if (oracle) {
        const proof = await oracleProof(ctx, e);
        return {
          status: 'fail',
          observed,
          diagnosis: `your receiver answers ${check.name} before verifying it, with an HMAC of the token under your secret: anyone can have it sign their own data — ${proof}. Verify the request first, as ${ctx.provider.verifier.official} does (${check.source})`,
        };
      }
      if (check.unverified)
        return {
          status: 'fail',
          observed,
          diagnosis: `your receiver answers ${check.name} without verifying it — ${check.unverified} (${check.source}): verify the signature first, and answer only a request that verifies`,
        };
      return {
        status: 'warn',
        observed,
        diagnosis: `your receiver answers ${check.name} without verifying it (${ctx.provider.title} signs it: ${check.source}) — it gives nothing away here, but a check that skips verification is where a forged event gets in: verify every request before answering`,
      };
    },
  },
  {
    name: 'related',
    summary:
      'two deliveries about one thing (a customer created then updated, one message as message and app_mention), each with its own id: both stored',
    skipFor: (p) => (p.contract.related ? undefined : `${p.title} names no deliveries about one thing: each is about its own`),
    needs: NEEDS_VALID,
    async run(ctx) {
      const r = ctx.provider.contract.related as NonNullable<DeliveryContract['related']>;
      const pair = relatedPair(ctx);
      if (!pair) return { status: 'skipped', observed: `no shipped ${r.first} / ${r.next} fixture holds ${r.path.join('.')}` };
      const route = ctx.forward?.route;
      const untaken = route && pair.events.find((e) => !routeTakes(route, e.eventType));
      if (route && untaken)
        return {
          status: 'skipped',
          observed: `route ${route.name} does not take ${untaken.eventType}: listen never forwards it to this target`,
        };
      const answers = [];
      for (const e of pair.events) answers.push(await post(ctx, e.rawBody, sign(ctx, e)));
      const ids = pair.events.map((e) => e.deliveryId);
      const counts = await ctx.storedCounts(ids);
      const said = answers.map(answer).join(' and ');
      const about = `${r.about} (${r.path.join('.')} ${pair.thing})`;
      // The first is about nothing the receiver has heard of: a refusal of it is of its type, which other-types judges.
      // A refusal of a type the receiver has no handler for is other-types' finding, not this one's:
      // the first is about nothing it has heard of, and the second may be of another type.
      const refusedType = answers.findIndex(
        (a, i) => !is2xx(a.status) && (i === 0 || pair.events[i]?.eventType !== pair.events[0].eventType),
      );
      if (refusedType >= 0)
        return {
          status: 'skipped',
          observed: `${said} to ${about}: ${pair.events[refusedType]?.eventType} is refused whatever it is about — other-types judges refusing a type`,
        };
      if (counts === undefined)
        return answers.every((a) => is2xx(a.status))
          ? { status: 'skipped', observed: `${said} to ${about}: whether both were stored is the point (--inbox or --stored)` }
          : {
              status: 'fail',
              observed: `${said} to ${about}`,
              diagnosis: `your receiver refuses the second of two deliveries about one thing — ${ctx.provider.title} sends ${r.about}, each a delivery of its own (${r.source}): dedupe on ${r.dedupeOn}`,
            };
      const observed = `${said} to ${about}; stored ${counts.map((n) => (n === 0 ? 'none' : n === 1 ? 'once' : `${n} times`)).join(' and ')}`;
      if (answers.every((a) => is2xx(a.status)) && counts.every((n) => n === 1)) return { status: 'pass', observed };
      const [first, second] = counts as [number, number];
      return {
        status: 'fail',
        observed,
        diagnosis:
          first >= 1 && second === 0 && is2xx(answers[1]?.status)
            ? `your receiver keeps one delivery per ${r.path.join('.')}, not per delivery: the second, about the same thing, was answered 2xx and dropped — ${ctx.provider.title} sends ${r.about} as deliveries of their own (${r.source}), so every one after the first is lost. Dedupe on ${r.dedupeOn}, never on ${r.path.join('.')}`
            : !answers.every((a) => is2xx(a.status))
              ? `your receiver refuses a delivery about something it has already heard of — ${ctx.provider.title} sends ${r.about} (${r.source}): store each, deduped on ${r.dedupeOn}`
              : `your receiver answered 2xx to both but stored them ${counts.join(' and ')} times — store each delivery once, deduped on ${r.dedupeOn}`,
      };
    },
  },
];

/**
 * The contract's two deliveries about one thing, from its shipped fixtures: both with their own
 * delivery id, both about one fresh thing (an id of the fixture's own form, so no other case's
 * event is about it too).
 */
function relatedPair(ctx: CheckContext): { events: [PreparedEvent, PreparedEvent]; thing: string } | undefined {
  const p = ctx.provider;
  const r = p.contract.related;
  if (!r) return undefined;
  const path = bodyPathOf(p.contract, r.path);
  let thing: JsonValue | undefined;
  const events: PreparedEvent[] = [];
  for (const name of [r.first, r.next]) {
    const fixture = resolveFixtures([`${p.name}/${name}`], p.name)[0];
    if (!fixture) return undefined;
    const held = valueAt(fixture.body as JsonValue, path);
    if (typeof held !== 'string' && typeof held !== 'number') return undefined;
    thing ??= freshLike(held);
    const factory = compileFixture(
      p,
      fixture,
      [{ path, value: thing, text: `${path.join('.')}=${String(thing)}` }],
      undefined,
      ctx.contentType,
    );
    events.push(factory.make(Date.now()));
  }
  return { events: events as [PreparedEvent, PreparedEvent], thing: String(thing) };
}

function valueAt(body: JsonValue, path: readonly string[]): JsonValue | undefined {
  let v: JsonValue | undefined = body;
  for (const key of path) v = typeof v === 'object' && v !== null ? (v as Record<string, JsonValue>)[key] : undefined;
  return v;
}

/** A new value of the form of `v`: its last six letters and digits made new, each of its kind (cus_… stays cus_…). */
function freshLike(v: string | number): string | number {
  if (typeof v === 'number') return Number.isSafeInteger(v) ? v + 1 + Math.floor(Math.random() * 1e6) : v;
  const chars = [...v];
  let left = 6;
  for (let i = chars.length - 1; i >= 0 && left > 0; i--) {
    const c = chars[i] as string;
    const set = /[0-9]/.test(c)
      ? '0123456789'
      : /[a-z]/.test(c)
        ? 'abcdefghijklmnopqrstuvwxyz'
        : /[A-Z]/.test(c)
          ? 'ABCDEFGHIJKLMNOPQRSTUVWXYZ'
          : '';
    if (!set) continue;
    chars[i] = randomAlnum(1, set);
    left--;
  }
  return chars.join('');
}

/** What the answer case holds a receiver to: a request a person waits on (Slack's commands), else every delivery's answer. */
function answerNeed(c: DeliveryContract): {
  fixture?: string;
  what: string;
  deadlineMs: number;
  source: string;
  otherwise?: string;
  fix?: string;
} {
  if (c.personAnswer) return c.personAnswer;
  const a = c.answer;
  return a.kind === 'body'
    ? {
        what: a.what,
        deadlineMs: a.deadlineMs,
        source: a.source,
        ...(a.otherwise ? { otherwise: a.otherwise } : {}),
        ...(a.fix ? { fix: a.fix } : {}),
      }
    : { what: 'a 2xx', deadlineMs: Number.POSITIVE_INFINITY, source: a.source };
}

/** One of the provider's shipped fixtures, made fresh, as check's content type sends it. */
function fixtureNamed(ctx: CheckContext, name: string): PreparedEvent | undefined {
  const fixture = resolveFixtures([`${ctx.provider.name}/${name}`], ctx.provider.name)[0];
  return fixture ? compileFixture(ctx.provider, fixture, [], undefined, ctx.contentType).make(Date.now()) : undefined;
}

/** The contract's endpoint check that is a batch body with no events (LINE's Verify). */
function emptyCheckOf(c: DeliveryContract) {
  return listOf(c) ? c.endpointChecks.find((e) => e.request === 'empty-batch') : undefined;
}

/** The endpoint check as the provider sends it: its challenge fixture (Slack, Zoom), or the empty batch (LINE). */
function checkRequestOf(ctx: CheckContext): PreparedEvent | undefined {
  const p = ctx.provider;
  const b = listOf(p.contract);
  if (b && emptyCheckOf(p.contract)) {
    const e = ctx.factory.make(Date.now());
    const rawBody = Buffer.from(serialized(p, withList(JSON.parse(e.rawBody.toString('utf8')), b.path, [])));
    return { ...e, rawBody };
  }
  return challengeOf(ctx);
}

/** The provider's challenge request, from its shipped fixtures (Slack's url_verification, Zoom's url_validation). */
function challengeOf(ctx: CheckContext): PreparedEvent | undefined {
  const p = ctx.provider;
  const shipped = listShippedFixtures(p.name).find((f) => p.challengeAnswer?.(Buffer.from(JSON.stringify(loadFixtureFile(f.path).body))));
  return shipped ? compileFixture(p, loadFixtureFile(shipped.path, p.name), []).make(Date.now()) : undefined;
}

/** Whether an answer carries the HMAC of the check's token under the receiver's secret (what an oracle gives away). */
function macOracle(ctx: CheckContext, e: PreparedEvent, body: string | undefined): boolean {
  const expected = ctx.provider.challengeAnswer?.(e.rawBody, ctx.secrets) as Record<string, unknown> | undefined;
  const token = expected?.encryptedToken;
  return typeof token === 'string' && (body ?? '').includes(token);
}

/**
 * The proof an oracle is one: an unsigned check whose token is the string the provider signs for a
 * forged event (Zoom: v0:<ts>:<body>) is answered with that event's signature; posted with it, the
 * forged event is taken.
 */
async function oracleProof(ctx: CheckContext, e: PreparedEvent): Promise<string> {
  const nowMs = Math.floor(Date.now() / 1000) * 1000;
  // Short: the token and its answer must fit in the answer check reads (200 bytes).
  const forged = { ...e, rawBody: Buffer.from(JSON.stringify({ event: 'meeting.deleted', payload: { object: { id: 'x' } } })) };
  const real = sign(ctx, forged, { nowMs });
  const asked = JSON.parse(e.rawBody.toString('utf8')) as { payload?: { plainToken?: string } };
  if (!asked.payload) return 'its answer is the HMAC of any token sent to it';
  asked.payload.plainToken = `v0:${nowMs / 1000}:${forged.rawBody.toString('utf8')}`;
  const res = await post(ctx, Buffer.from(JSON.stringify(asked)), { 'content-type': 'application/json' }, { refusal: true });
  const token = /"encryptedToken"\s*:\s*"([0-9a-fA-F]{64})"/.exec(res.bodySnippet ?? '')?.[1];
  const header = ctx.provider.signatureHeader.toLowerCase();
  if (!token || !real[header]?.includes(token)) return 'its answer is the HMAC of any token sent to it';
  // The oracle's answer is the forged event's signature, byte for byte: post it as the sender would.
  const taken = await post(ctx, forged.rawBody, real, { refusal: true });
  return `asked, unsigned, for the token "v0:<ts>:<a forged meeting.deleted>", it answered that event's ${ctx.provider.signatureHeader}, and the forged event posted with it got ${answer(taken)}`;
}
