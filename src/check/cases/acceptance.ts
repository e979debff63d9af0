import {
  answer,
  copySignedSecondsApart,
  duplicateDiagnosis,
  is2xx,
  lower,
  notStoredDiagnosis,
  post,
  sign,
  signedAsSent,
  storedCount,
  storedText,
  storedWrongly,
  NEEDS_VALID,
} from './common.js';
import type { CheckCase } from './common.js';
import { markRedelivery, mayResend, onlyTaken, statusesInWords } from '../../providers/contract.js';
import type { Provider } from '../../providers/index.js';

/** Dedupe means something only where the provider may send the same request twice. */
const resentNever = (p: Provider) =>
  mayResend(p.contract) ? undefined : `${p.title} never sends a request twice (${p.contract.resends.source}): nothing to dedupe`;
import { IN_WORDS, answerItself, diagnoseRefusal } from '../diagnose.js';
import { retrySpan } from '../wording.js';

export const ACCEPTANCE: readonly CheckCase[] = [
  {
    name: 'valid',
    summary: "a valid delivery gets 2xx within the provider's timeout, and is stored",
    async run(ctx) {
      const e = ctx.factory.make(Date.now());
      const headers = signedAsSent(ctx, e);
      const res = await post(ctx, e.rawBody, lower(headers));
      const n = await storedCount(ctx, e.deliveryId);
      const ok = is2xx(res.status) && (n === undefined || n === 1);
      const observed = `${answer(res)} in ${Math.round(res.latencyMs)}ms${n === undefined ? '' : n === 0 ? ', nothing stored' : n === 1 ? ', stored' : `, stored ${n} times`}`;
      const deliveryId = e.deliveryId;
      const only = onlyTaken(ctx.provider.contract);
      // Stored, and answered a 2xx the provider does not take (Mailgun's 200 only): nothing is lost,
      // but every delivery comes again on the whole schedule.
      if (ok && only !== undefined && !only.includes(res.status as number))
        return {
          status: 'warn',
          observed,
          diagnosis: `your receiver answers ${res.status}; ${ctx.provider.title} takes ${statusesInWords(only, 'and')} alone as success and retries any other answer (${ctx.provider.contract.answer.source}): every delivery comes again, for ${retrySpan(ctx.provider) ?? 'as long as it retries'} — answer ${only.includes(200) ? 200 : statusesInWords(only)}`,
          accepted: true,
          deliveryId,
        };
      if (ok) return { status: 'pass', observed, accepted: true, deliveryId };
      const sent = { headers, body: e.rawBody, deliveryId, eventType: e.eventType };
      if (is2xx(res.status) && n === 0) {
        const why = await notStoredDiagnosis(ctx, deliveryId);
        return {
          status: 'fail',
          observed: why.late ? `${observed} when it answered; stored after` : observed,
          diagnosis: why.diagnosis,
          accepted: true,
          deliveryId,
          // Stored after the answer, under the delivery id: nothing for the stored-key probe to find.
          ...(why.late ? {} : { sent }),
        };
      }
      if (is2xx(res.status)) return { status: 'fail', observed, diagnosis: storedWrongly(n), accepted: true, deliveryId, sent };
      // Refused: every other case would be refused too, so this is where the cause is looked for.
      const itself = answerItself(ctx, res);
      if (itself !== undefined)
        return { status: 'fail', observed, diagnosis: itself, accepted: false, ...(res.status === undefined ? { unanswered: true } : {}) };
      const found = await diagnoseRefusal(ctx, res);
      const tried = found.accepted.length + found.refused.length;
      return {
        status: 'fail',
        observed: `${observed}; of ${tried} variants it took ${found.accepted.length ? found.accepted.map((n) => IN_WORDS[n] ?? n).join('; ') : 'none'}`,
        diagnosis: found.diagnosis,
        accepted: false,
      };
    },
  },
  {
    name: 'duplicate',
    skipFor: resentNever,
    summary: 'the same delivery again (re-signed, as the provider would) gets 2xx and is stored once',
    needs: NEEDS_VALID,
    async run(ctx) {
      const e = ctx.factory.make(Date.now());
      const first = await post(ctx, e.rawBody, copySignedSecondsApart(ctx, e, 0, 2));
      const second = await post(ctx, e.rawBody, copySignedSecondsApart(ctx, e, 1, 2));
      const n = await storedCount(ctx, e.deliveryId);
      const ok = is2xx(first.status) && is2xx(second.status) && (n === undefined || n === 1);
      const observed = `${answer(first)} then ${answer(second)}${storedText(n)}`;
      return ok ? { status: 'pass', observed } : { status: 'fail', observed, diagnosis: duplicateDiagnosis(ctx, [first, second], n) };
    },
  },
  {
    name: 'retry',
    skipFor: resentNever,
    summary: "a retry of a delivery, re-signed 1 s later with the provider's retry headers, gets 2xx and is stored once",
    needs: [...NEEDS_VALID, { case: 'duplicate' }],
    async run(ctx) {
      const e = ctx.factory.make(Date.now());
      // What every real retry looks like: the same delivery id, a timestamp (and so a signature)
      // at least a second newer, and whatever the provider adds to retries.
      const firstAt = Date.now() - 1_000;
      const first = await post(ctx, e.rawBody, sign(ctx, e, { nowMs: firstAt }));
      // Marked as the provider marks a redelivery in its body (HubSpot's attemptNumber): other bytes, the same event.
      const again = { ...e, rawBody: markRedelivery(ctx.provider.contract, e.rawBody, 1) };
      const retry = await post(ctx, again.rawBody, sign(ctx, again, { nowMs: firstAt + 1_000, retry: 1 }));
      const n = await storedCount(ctx, e.deliveryId);
      const ok = is2xx(first.status) && is2xx(retry.status) && (n === undefined || n === 1);
      const observed = `${answer(first)}, then ${answer(retry)} to the retry${storedText(n)}`;
      return ok ? { status: 'pass', observed } : { status: 'fail', observed, diagnosis: duplicateDiagnosis(ctx, [first, retry], n) };
    },
  },
  {
    name: 'concurrent-duplicates',
    skipFor: resentNever,
    summary: '10 copies at once (each re-signed, as retries are) all get 2xx, and it is stored once',
    needs: [...NEEDS_VALID, { case: 'duplicate' }],
    async run(ctx) {
      const e = ctx.factory.make(Date.now());
      const all = await Promise.all(Array.from({ length: 10 }, (_, i) => post(ctx, e.rawBody, copySignedSecondsApart(ctx, e, i, 10))));
      const n = await storedCount(ctx, e.deliveryId);
      const answers = all.map(answer);
      const ok = all.every((r) => is2xx(r.status)) && (n === undefined || n === 1);
      const counts = [...new Set(answers)].map((a) => `${answers.filter((x) => x === a).length}×${a}`).join(' ');
      const observed = `${counts}${storedText(n)}`;
      return ok ? { status: 'pass', observed } : { status: 'fail', observed, diagnosis: duplicateDiagnosis(ctx, all, n) };
    },
  },
];
