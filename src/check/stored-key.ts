/**
 * What a receiver keys its store on, when --stored prints a value but not the delivery id of a
 * delivery it just took: a header or body field of that delivery (GitHub's X-GitHub-Hook-ID, a
 * Stripe object's id) is a defect of the receiver — distinct deliveries that share the value are
 * stored as one — not a --stored command printing the wrong column.
 */
import type { Provider } from '../providers/index.js';
import { formPayloadJson } from '../providers/util.js';

/** A delivery as it went out: its headers (as the provider names them) and body. */
export interface SentDelivery {
  headers: Readonly<Record<string, string>>;
  body: Buffer;
  deliveryId: string;
  /** Its event type ("invoice.paid", "push"): a column of types printed is no key, and not matched. */
  eventType?: string;
}

export interface StoredKey {
  /** Where the printed value was found: a header's name, or a body field's path ("data.object.id"). */
  where: string;
  value: string;
  /** Where the delivery id is: its header's name, or undefined where it is in the body. */
  idWhere?: string;
  /** The same value in another delivery the provider would send: distinct deliveries share it. */
  shared: boolean;
}

/** Every string and number in a JSON value, each with its path. */
function leaves(v: unknown, path: string[], out: { path: string; value: string }[]): void {
  if (typeof v === 'string' || typeof v === 'number') out.push({ path: path.join('.'), value: String(v) });
  else if (Array.isArray(v)) for (const [i, x] of v.entries()) leaves(x, [...path, String(i)], out);
  else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) leaves(x, [...path, k], out);
}

function fields(provider: Provider, d: SentDelivery): { where: string; value: string; header: boolean }[] {
  const out: { where: string; value: string; header: boolean }[] = Object.entries(d.headers).map(([k, v]) => ({
    where: k,
    value: v,
    header: true,
  }));
  const text = (provider.formPayload ? formPayloadJson(d.body) : undefined) ?? d.body.toString('utf8');
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return out;
  }
  const found: { path: string; value: string }[] = [];
  leaves(json, [], found);
  return [...out, ...found.map((f) => ({ where: f.path, value: f.value, header: false }))];
}

/**
 * The header or body field of `sent` whose value --stored printed (one of `lines`), if any. A
 * value shorter than 4 characters (a count, a flag) says nothing about the key and is not matched.
 */
export function findStoredKey(
  provider: Provider,
  sent: SentDelivery,
  another: SentDelivery,
  lines: readonly string[],
): StoredKey | undefined {
  const printed = new Set(lines.filter((l) => l.length >= 4));
  const all = fields(provider, sent);
  const type = sent.eventType?.split('.')[0];
  const hit = all.find((f) => f.value !== sent.deliveryId && printed.has(f.value) && f.value !== sent.eventType && f.value !== type);
  if (!hit) return undefined;
  const idAt = all.find((f) => f.header && f.value === sent.deliveryId);
  const shared = fields(provider, another).some((f) => f.where === hit.where && f.value === hit.value);
  return { where: hit.where, value: hit.value, ...(idAt ? { idWhere: idAt.where } : {}), shared };
}

/** The finding, in a developer's words. */
export function storedKeyDiagnosis(provider: Provider, k: StoredKey): string {
  const id = k.idWhere ? `${provider.title}'s delivery id, ${k.idWhere}` : `${provider.title}'s delivery id`;
  const consequence = k.shared
    ? `${k.where} is the same on distinct deliveries (every one carries ${JSON.stringify(k.value)}), so it would keep one delivery of them and drop every other as a duplicate`
    : `distinct deliveries that share a ${k.where} would be stored as one, and the store cannot be probed by delivery id`;
  return `your receiver stores deliveries under ${k.where} (--stored printed ${JSON.stringify(k.value)}), not under ${id}: ${consequence} — key the store on ${k.idWhere ?? 'the delivery id'}`;
}
