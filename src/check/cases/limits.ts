/** How the receiver holds up: body limits, junk, latency, slow and unsigned clients. */
import { connect } from 'node:net';
import type { PreparedEvent } from '../../fixtures/index.js';
import { percentile } from '../../util/stats.js';
import { hostAndPort } from '../../util/options.js';
import { sleep } from '../../util/wait.js';
import {
  answer,
  forwardedHeaders,
  is2xx,
  is4xx,
  mib,
  padded,
  post,
  sign,
  withoutSignatures,
  NEEDS_ANSWERED,
  NEEDS_SIGNATURE,
} from './common.js';
import type { CheckCase } from './common.js';
import { postReadingEarly } from '../early-answer.js';
import { afterFailure } from '../wording.js';
import { CHECK_HEADER } from '../../inbox/types.js';

export const LIMITS: readonly CheckCase[] = [
  {
    name: 'oversized-body',
    summary:
      'a body over --max-bytes gets 413, and the receiver still answers; taken or refused otherwise it is a warning (hardening: the provider sends nothing that large); a hang, or no answer to the valid delivery after it, fails',
    needs: NEEDS_ANSWERED,
    async run(ctx) {
      const p = ctx.provider;
      const e = ctx.factory.make(Date.now());
      const body = padded(p, e, e.rawBody.length + ctx.maxBytes + 1024);
      // Read while writing: a 413 sent before the receiver closes is heard every time.
      const big = await postReadingEarly(
        ctx.url,
        { ...forwardedHeaders(ctx), ...sign(ctx, { ...e, rawBody: body }), [CHECK_HEADER]: ctx.runId },
        body,
        ctx.tls,
        Math.max(ctx.timeoutMs, 30_000),
        ctx.interrupt,
      );
      const next = ctx.factory.make(Date.now());
      const after = await post(ctx, next.rawBody, sign(ctx, next));
      const bigAnswer = big.status !== undefined ? String(big.status) : (big.error ?? 'no answer');
      const observed = `${bigAnswer} to ${body.length} bytes${big.status === undefined ? ` (after ${mib(big.written)} written)` : ''}, then ${answer(after)} to a valid delivery`;
      // The verdict is whether the receiver breaks: a valid delivery after the big body goes unanswered
      // or refused (it fell over, or is stuck reading), or the big body itself is never answered.
      if (!is2xx(after.status))
        return {
          status: 'fail',
          observed: `${observed} (expected 2xx to the valid delivery)`,
          diagnosis:
            after.status !== undefined
              ? `your receiver answers ${after.status} to a valid delivery right after a large body`
              : `your receiver stops answering after a large body (${answer(after)}): a valid delivery is lost`,
        };
      if (big.status === undefined && big.error !== 'reset')
        return {
          status: 'fail',
          observed: `${observed} (expected 413)`,
          diagnosis: `your receiver never answers a body over --max-bytes (${mib(ctx.maxBytes)}) (${bigAnswer}): it holds the connection while it reads, so anyone can tie it up`,
        };
      if (big.status === 413) return { status: 'pass', observed };
      // A reset instead of the 413 (the receiver closed before reading the rest): a sender that
      // writes its whole body before reading never sees why, and retries the same body.
      if (big.status === undefined)
        return { status: 'warn', observed: `${observed}: the connection was reset before a 413 reached the sender` };
      // Taken, or refused another way: hardening, not a lost delivery. The provider sends nothing this
      // large, and behind a proxy (nginx's client_max_body_size) the cap lives there.
      const sends = p.verifier.maxBodyBytes
        ? `${p.title} sends at most ${mib(p.verifier.maxBodyBytes)}, so no delivery of its is lost`
        : `no ${p.title} delivery is lost`;
      return {
        status: 'warn',
        observed: `${observed} (413 expected)`,
        diagnosis: is2xx(big.status)
          ? `your receiver takes a body larger than --max-bytes (${mib(ctx.maxBytes)}): ${sends}, but with no cap anyone can make it read and hold that much — if a proxy in front of it caps bodies, that is where the cap lives; otherwise refuse larger bodies with 413 (if its limit is higher, give check that limit with --max-bytes)`
          : `your receiver answers ${big.status} to a body larger than --max-bytes (${mib(ctx.maxBytes)}), not 413: ${sends}, but 413 is what says "too large"`,
      };
    },
  },
  {
    name: 'malformed-json',
    summary:
      "authentic but malformed JSON gets 2xx, or 4xx where the provider's own library parses the body it verified; elsewhere a 4xx is a warning",
    needs: NEEDS_ANSWERED,
    async run(ctx) {
      const e = ctx.factory.make(Date.now());
      const body = Buffer.from(e.rawBody.toString('utf8').slice(0, -5));
      const res = await post(ctx, body, sign(ctx, { ...e, rawBody: body }));
      if (is2xx(res.status)) return { status: 'pass', observed: answer(res) };
      const parser = ctx.provider.verifier.parsedBy ?? ctx.provider.verifier.official;
      if (is4xx(res.status) && ctx.provider.verifier.parsesJson)
        return { status: 'pass', observed: `${answer(res)}: refused, as ${parser} does (it parses the body it verified)` };
      if (is4xx(res.status))
        return {
          status: 'warn',
          observed: answer(res),
          diagnosis: `an authentic delivery refused is not processed (${afterFailure(ctx.provider)}): store what verifies, parse it in the worker`,
        };
      return {
        status: 'fail',
        observed: `${answer(res)} (expected 2xx or 4xx)`,
        diagnosis: `your receiver fails (5xx or no answer) on a body it cannot parse: ${afterFailure(ctx.provider)}`,
      };
    },
  },
  {
    name: 'latency',
    summary: "p99 of 50 sequential valid deliveries is below half the provider's timeout",
    needs: NEEDS_ANSWERED,
    async run(ctx) {
      const latencies: number[] = [];
      let failures = 0;
      for (let i = 0; i < 50; i++) {
        const e = ctx.factory.make(Date.now());
        const res = await post(ctx, e.rawBody, sign(ctx, e));
        latencies.push(res.latencyMs);
        if (!is2xx(res.status)) failures++;
      }
      const p99 = percentile(latencies, 99) ?? Infinity;
      const limit = ctx.providerTimeoutMs / 2;
      const ok = p99 < limit && failures === 0;
      return {
        status: ok ? 'pass' : 'fail',
        observed: `p99 ${Math.round(p99)}ms, limit ${Math.round(limit)}ms${failures ? `, ${failures} not 2xx` : ''}`,
      };
    },
  },
  {
    name: 'slow-client',
    summary: 'a client sending its headers a byte a second does not stop a valid delivery being answered',
    needs: NEEDS_ANSWERED,
    async run(ctx) {
      const socket = connect(hostAndPort(ctx.url));
      socket.on('error', () => undefined);
      const line = `POST ${ctx.url.pathname} HTTP/1.1\r\nHost: ${ctx.url.host}\r\n`;
      let sent = 0;
      const drip = setInterval(() => {
        if (sent < line.length && !socket.destroyed) socket.write(line[sent++] as string);
      }, 1_000);
      try {
        await sleep(1_100); // the slow client is connected and has started
        const e = ctx.factory.make(Date.now());
        const res = await post(ctx, e.rawBody, sign(ctx, e));
        const ok = is2xx(res.status);
        return {
          status: ok ? 'pass' : 'fail',
          observed: `${answer(res)} in ${Math.round(res.latencyMs)}ms while a client dripped its headers`,
        };
      } finally {
        clearInterval(drip);
        socket.destroy();
      }
    },
  },
  {
    name: 'unsigned-flood',
    summary: '200 unsigned requests: none answered 2xx, none stored',
    needs: NEEDS_SIGNATURE,
    async run(ctx) {
      const events = Array.from({ length: 200 }, () => ctx.factory.make(Date.now()));
      let answered2xx = 0;
      let unanswered = 0;
      let next = 0;
      await Promise.all(
        Array.from({ length: 20 }, async () => {
          while (next < events.length) {
            const e = events[next++] as PreparedEvent;
            const headers = withoutSignatures(ctx, sign(ctx, e));
            const res = await post(ctx, e.rawBody, headers, { refusal: true });
            if (is2xx(res.status)) answered2xx++;
            if (res.status === undefined) unanswered++;
          }
        }),
      );
      // One look at the store for all 200 ids (a --stored command runs once, not 200 times).
      const counts = await ctx.storedCounts(events.map((e) => e.deliveryId));
      const probed = counts !== undefined;
      const stored = (counts ?? []).filter((n) => n > 0).length;
      const lost = unanswered ? `, ${unanswered} got no answer at all` : '';
      const observed = `${answered2xx} answered 2xx${probed ? `, ${stored} stored` : ''}${lost}`;
      // Where a forgery is refused by discarding it (Graph's 202 to every POST), a 2xx is no
      // finding: the store alone says whether they were kept, and with no store, nothing does.
      const discard = ctx.provider.contract.refusal?.kind === 'discard';
      if (discard && stored === 0 && unanswered === 0)
        return probed
          ? { status: 'pass', observed: `${observed}: discarded, as ${ctx.provider.title} asks` }
          : { status: 'warn', observed, diagnosis: 'whether they were discarded is seen only in the store: give --stored or --inbox' };
      // A receiver that is down or falls over also answers nothing with 2xx: that is no pass.
      const ok = answered2xx === 0 && stored === 0 && unanswered === 0;
      return { status: ok ? 'pass' : 'fail', observed };
    },
  },
];
