import { asSent } from '../../providers/body-placed.js';
import type { Batching, Sourced } from '../../providers/contract.js';
import type { Provider } from '../../providers/types.js';
import { batchOf } from './contract.js';
import { NEEDS_SIGNATURE, answer, is2xx, post, sign, stranger } from './common.js';
import type { CheckCase } from './common.js';

/**
 * Where the secret is a field of each event of a batch (Microsoft Graph's clientState in every
 * notification of `value`), each event is authenticated on its own: Graph puts notifications of
 * several subscriptions in one POST, and its docs ask that each one's clientState be compared,
 * the one that does not match "not valid" (learn.microsoft.com/graph/change-notifications-delivery-
 * webhooks). A receiver that compares the first notification's and then keeps the whole batch
 * keeps what no subscription of its own sent. check sends a batch whose last event carries another
 * secret: that one must not be stored, whatever the others' fate (a refusal of the whole request
 * keeps nothing forged either).
 */

type ListBatching = Extract<Batching, { events: 'list' }> & Sourced;

/** The list and the field within each event, where the secret is a field of each event of a batch (`value.*.clientState`). */
function perItemField(p: Provider): { list: string[]; within: string[] } | undefined {
  const carrier = p.tokenOnly === 'field' ? p.bodySignature?.carrier : undefined;
  if (!carrier?.includes('.*.') || p.contract.batching.events !== 'list') return undefined;
  const [list, within] = carrier.split('.*.') as [string, string];
  return { list: list.split('.'), within: within.split('.') };
}

function setAt(o: Record<string, unknown>, path: readonly string[], value: string): void {
  let at = o;
  for (const key of path.slice(0, -1)) {
    if (typeof at[key] !== 'object' || at[key] === null) at[key] = {};
    at = at[key] as Record<string, unknown>;
  }
  at[path[path.length - 1] as string] = value;
}

export const FIELD_ITEM_CASES: readonly CheckCase[] = [
  {
    name: 'forged-item',
    summary:
      "a batch whose last event carries another secret in its field (Graph's clientState), the others the right one: the forged event is never stored",
    skipFor: (p) => (perItemField(p) ? undefined : `${p.title}'s secret is not a field of each event of a batch`),
    // Where wrong-secret failed (no clientState compared at all), that is the one finding, not two.
    needs: NEEDS_SIGNATURE,
    async run(ctx) {
      const field = perItemField(ctx.provider) as { list: string[]; within: string[] };
      const b = ctx.provider.contract.batching as ListBatching;
      const batch = batchOf(ctx, Math.max(2, b.typical));
      if (!batch) return { status: 'skipped', observed: "the default fixture is not one of the provider's batches" };
      // The batch as the provider sends it (the right secret in every event), then the last one's replaced.
      const sent = asSent(ctx.provider, batch.event.rawBody, sign(ctx, batch.event));
      const body = JSON.parse(sent.body.toString('utf8')) as Record<string, unknown>;
      const items = field.list.reduce<unknown>((v, k) => (v as Record<string, unknown> | undefined)?.[k], body) as Record<
        string,
        unknown
      >[];
      const last = items[items.length - 1] as Record<string, unknown>;
      setAt(last, field.within, stranger(ctx));
      const res = await post(ctx, Buffer.from(JSON.stringify(body)), sent.headers, { placed: true, refusal: true });
      const counts = await ctx.storedCounts(batch.ids);
      const n = batch.ids.length;
      const where = `${field.list.join('.')}[${n - 1}].${field.within.join('.')}`;
      const said = `${answer(res)} to ${n} events in one body, the last with another ${field.within.join('.')}`;
      if (counts === undefined)
        return is2xx(res.status)
          ? {
              status: 'warn',
              observed: said,
              diagnosis: 'whether the forged event was kept is seen only in the store: give --stored or --inbox',
            }
          : { status: 'pass', observed: `${said}: refused whole, nothing kept` };
      const kept = counts.slice(0, -1).filter((c) => c >= 1).length;
      const forged = (counts[n - 1] ?? 0) >= 1;
      const observed = `${said}; ${kept} of the other ${n - 1} stored, the forged one ${forged ? 'STORED' : 'not'}`;
      if (!forged) return { status: 'pass', observed };
      return {
        status: 'fail',
        observed,
        diagnosis: `your receiver keeps an event whose ${field.within.join('.')} is not your secret (${where}) because others in the same body hold it — ${ctx.provider.title} sends events of several subscriptions in one body, and each is authentic only by its own ${field.within.join('.')} (${ctx.provider.contract.refusal?.source ?? b.source}): compare every event's ${field.within.join('.')} and drop the one that does not match`,
      };
    },
  },
];
