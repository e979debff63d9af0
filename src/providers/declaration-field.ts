/**
 * A declared scheme whose secret is a field of the body, sent as it is: Microsoft Graph's
 * `clientState`, the value the subscriber chose when it subscribed, written into every change
 * notification of the batch `{"value": [{…, "clientState": "…"}, …]}`
 * (learn.microsoft.com/graph/change-notifications-delivery-webhooks, "Process the change
 * notification": "Validate that the clientState property matches the value submitted with the
 * subscription request"). Nothing is signed: the receiver compares each item's field with what it
 * holds, in constant time. Only data and its checks here: the engine that sends and verifies it is
 * providers/declared-field.ts.
 */
export interface FieldSignature {
  scheme: 'field';
  /**
   * Where the secret is: a dotted path of the body ("auth.token"), or one with a `*` standing for
   * every item of the list before it ("value.*.clientState": each notification of Graph's batch).
   */
  field: string;
  /**
   * What a receiver does with a delivery whose field is wrong or missing: `refuse` it with a 4xx
   * (the default), or `discard` it — keep none of it and still answer 2xx, as Graph asks: its
   * receiver answers 202 to every POST within 3 s, and a refusal is only retried.
   */
  forged?: 'refuse' | 'discard';
}

/** The field's path split at its `*`: the list's path and the path within each item; no list: the body itself. */
export function fieldPaths(sig: Pick<FieldSignature, 'field'>): { list: string[] | undefined; within: string[] } {
  const parts = sig.field.split('.');
  const star = parts.indexOf('*');
  return star < 0 ? { list: undefined, within: parts } : { list: parts.slice(0, star), within: parts.slice(star + 1) };
}

const SEGMENT = /^[^.{}\s*]+$/;

/** A field signature checked, every fault one line naming the field (`bad`). */
export function checkFieldSignature(
  s: Record<string, unknown>,
  bad: (field: string, what: string) => Error,
  onlyKnown: (o: Record<string, unknown>, known: readonly string[], prefix: string) => void,
): FieldSignature {
  onlyKnown(s, ['scheme', 'field', 'forged'], 'signature.');
  if (typeof s.field !== 'string' || s.field === '')
    throw bad('signature.field', 'must be a dotted path of the body ("value.*.clientState": each item of the list at value)');
  const parts = s.field.split('.');
  const stars = parts.filter((p) => p === '*').length;
  if (parts.some((p) => p !== '*' && !SEGMENT.test(p)) || stars > 1)
    throw bad('signature.field', `"${s.field}" is not a dotted path with at most one * (every item of a list): "value.*.clientState"`);
  if (parts[parts.length - 1] === '*')
    throw bad('signature.field', `"${s.field}" ends at the list: name the field of each item after the *`);
  if (s.forged !== undefined && s.forged !== 'refuse' && s.forged !== 'discard')
    throw bad('signature.forged', 'must be refuse (a 4xx) or discard (nothing kept, still a 2xx)');
  return { scheme: 'field', field: s.field, ...(s.forged !== undefined ? { forged: s.forged } : {}) };
}
