/**
 * A declared signature placed in the body, not a header (Mailgun's `signature: {timestamp, token,
 * signature}` beside its `event-data`): an HMAC of named body fields, written into a body field.
 * The fields the sender writes at signing — a timestamp, a random token — are named by their
 * paths; what is signed is those fields (and any other of the body) in a template,
 * `{body.signature.timestamp}{body.signature.token}`. Only data and its checks here: the engine
 * that signs and verifies it is providers/declared-body.ts.
 */
export interface BodySignature {
  scheme: 'body';
  /** Where the signature is written: a dotted path of the body ("signature.signature"). */
  field: string;
  algorithm: 'sha1' | 'sha256' | 'sha512';
  encoding: 'hex' | 'base64';
  /** How the secret becomes the HMAC key: its UTF-8 bytes (default), or base64. */
  key?: 'utf8' | 'base64';
  /** What is signed: body fields named `{body.a.path}`, with literal text between them. */
  content: string;
  /** A field the sender writes at signing: the Unix seconds of the delivery's first attempt, as text. */
  timestamp?: string;
  /** A field the sender writes at signing: random characters, the same on every attempt of one delivery. */
  token?: string;
  /** The token's length (default 50, as Mailgun's). */
  tokenLength?: number;
}

/** The body paths a content template names, in order: `{body.signature.timestamp}` → "signature.timestamp". */
export function namedFields(content: string): string[] {
  return [...content.matchAll(/\{body\.([^{}]+)\}/g)].map((m) => m[1] as string);
}

const PATH = /^[^.{}\s]+(\.[^.{}\s]+)*$/;

/**
 * A body signature checked, every fault one line naming the field (`bad`). Refused: a content
 * that signs the whole body (that is an HMAC with the signature in a header), names no field or
 * names the signature itself; a timestamp or token declared but not signed, or put where the
 * signature goes; a content that signs nothing the sender writes (one signature for ever, valid
 * for any replay).
 */
export function checkBodySignature(
  s: Record<string, unknown>,
  bad: (field: string, what: string) => Error,
  onlyKnown: (o: Record<string, unknown>, known: readonly string[], prefix: string) => void,
): BodySignature {
  onlyKnown(s, ['scheme', 'field', 'algorithm', 'encoding', 'key', 'content', 'timestamp', 'token', 'tokenLength'], 'signature.');
  const path = (v: unknown, field: string) => {
    if (typeof v !== 'string' || !PATH.test(v)) throw bad(field, 'must be a dotted path of the body ("signature.signature")');
    return v;
  };
  const oneOf = <T extends string>(v: unknown, field: string, choices: readonly T[]): T => {
    if (!choices.includes(v as T)) throw bad(field, `must be one of ${choices.join(', ')}`);
    return v as T;
  };
  const sig: BodySignature = {
    scheme: 'body',
    field: path(s.field, 'signature.field'),
    algorithm: oneOf(s.algorithm, 'signature.algorithm', ['sha1', 'sha256', 'sha512'] as const),
    encoding: oneOf(s.encoding, 'signature.encoding', ['hex', 'base64'] as const),
    key: s.key === undefined ? 'utf8' : oneOf(s.key, 'signature.key', ['utf8', 'base64'] as const),
    content: typeof s.content === 'string' && s.content !== '' ? s.content : '',
  };
  if (sig.content === '') throw bad('signature.content', 'must be a non-empty string');
  if (s.timestamp !== undefined) sig.timestamp = path(s.timestamp, 'signature.timestamp');
  if (s.token !== undefined) sig.token = path(s.token, 'signature.token');
  if (s.tokenLength !== undefined) {
    if (sig.token === undefined) throw bad('signature.tokenLength', 'goes with signature.token');
    if (typeof s.tokenLength !== 'number' || !Number.isInteger(s.tokenLength) || s.tokenLength < 16 || s.tokenLength > 256)
      throw bad('signature.tokenLength', 'must be a whole number from 16 to 256');
    sig.tokenLength = s.tokenLength;
  }
  if (sig.content.includes('{body}'))
    throw bad('signature.content', 'signs the whole {body}: that is an HMAC scheme, its signature in a header (leave out scheme: body)');
  const named = namedFields(sig.content);
  const stray = sig.content.replace(/\{body\.[^{}]+\}/g, '').match(/\{[^{}]*\}/);
  if (stray) throw bad('signature.content', `may name body fields only ({body.a.path}), not ${stray[0]}`);
  if (named.length === 0) throw bad('signature.content', 'names no body field to sign ({body.signature.timestamp}{body.signature.token})');
  for (const p of named) path(p, 'signature.content');
  const overlaps = (a: string, b: string) => a === b || a.startsWith(`${b}.`) || b.startsWith(`${a}.`);
  const inField = named.find((p) => overlaps(p, sig.field));
  if (inField) throw bad('signature.content', `signs ${inField}, where the signature itself is written (signature.field)`);
  for (const [name, p] of [
    ['timestamp', sig.timestamp],
    ['token', sig.token],
  ] as const) {
    if (p === undefined) continue;
    if (overlaps(p, sig.field))
      throw bad(`signature.${name}`, `is where the signature is written (signature.field): give it a field of its own`);
    if (!named.includes(p))
      throw bad(
        `signature.${name}`,
        `is written at signing but not signed: put {body.${p}} in signature.content, or it can be changed at will`,
      );
  }
  if (sig.timestamp !== undefined && sig.token !== undefined && overlaps(sig.timestamp, sig.token))
    throw bad('signature.token', 'is the timestamp field (signature.timestamp): give each a field of its own');
  if (sig.timestamp === undefined && sig.token === undefined)
    throw bad(
      'signature.content',
      'signs only fields of the event: declare a signature.timestamp or signature.token the sender writes and signs, or one signature stays valid for every replay',
    );
  return sig;
}
