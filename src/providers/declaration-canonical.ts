import type { UsageError } from '../util/errors.js';
import { checkRequestSignature } from './declaration-canonical-request.js';

/**
 * A MAC of a canonical string a receiver rebuilds from the request, not of the body's bytes:
 * Twilio's `X-Twilio-Signature` is the HMAC of the URL posted to followed by each POST parameter,
 * sorted by name, written as its name and its value. A receiver parses the form and must sort it
 * as the sender did; one that signs the raw bytes, or the parameters in the order they came, never
 * matches a delivery with more than one parameter.
 *   - `content`: what is signed, `{params}` once, `{url}` before or after it ("{url}{params}");
 *   - `param`: how one parameter is written in `{params}` ("{name}{value}", the default; a name
 *     sent twice is written once a value, its values sorted, as twilio-node's validateRequest does).
 */
export interface CanonicalSignature {
  scheme: 'canonical';
  /** The header the signature is sent in. */
  header: string;
  algorithm: 'sha1' | 'sha256' | 'sha512';
  encoding: 'hex' | 'base64';
  /** How the secret becomes the HMAC key: its UTF-8 bytes (default) or base64. */
  key?: 'utf8' | 'base64';
  content: string;
  param?: string;
  /**
   * A body that is not a form (JSON) is signed through the URL: its hex SHA-256 in this query
   * parameter (Twilio's `bodySHA256`), the parameters empty — what a receiver verifies beside the
   * signature (twilio's validateRequestWithBody). `{url}` must be signed.
   */
  bodyHash?: string;
  /**
   * The request form (declaration-canonical-request.ts): the header that lists, comma-separated,
   * the headers signed in `{headers}` (Contentful's X-Contentful-Signed-Headers). With it,
   * `content` names `{method}`, `{path}`, `{headers}` and `{body}` instead of `{url}` and `{params}`.
   */
  signedHeaders?: string;
  /** How one signed header is written in `{headers}`: "{name}:{value}" (the default, Contentful's). */
  headerPair?: string;
  /** What joins the signed headers in `{headers}`: ";" (the default, Contentful's). */
  headerJoin?: string;
}

/** What checkDeclaration lends this check: its one-line faults and field readers. */
export interface FieldReaders {
  bad(field: string, what: string): UsageError;
  str(v: unknown, field: string): string;
  oneOf<T extends string>(v: unknown, field: string, choices: readonly T[]): T;
  headerName(v: unknown, field: string): string;
  headerText(v: unknown, field: string): string;
  onlyKnown(o: Record<string, unknown>, known: readonly string[], prefix: string): void;
}

const count = (text: string, part: string) => text.split(part).length - 1;

/** A canonical-string signature checked: every fault one line naming its field. */
export function checkCanonicalSignature(s: Record<string, unknown>, r: FieldReaders): CanonicalSignature {
  if (s.signedHeaders !== undefined || /\{(method|path|headers)\}/.test(typeof s.content === 'string' ? s.content : ''))
    return checkRequestSignature(s, r);
  r.onlyKnown(s, ['scheme', 'header', 'algorithm', 'encoding', 'key', 'content', 'param', 'bodyHash'], 'signature.');
  const signature: CanonicalSignature = {
    scheme: 'canonical',
    header: r.headerName(s.header, 'signature.header'),
    algorithm: r.oneOf(s.algorithm, 'signature.algorithm', ['sha1', 'sha256', 'sha512'] as const),
    encoding: r.oneOf(s.encoding, 'signature.encoding', ['hex', 'base64'] as const),
    key: s.key === undefined ? 'utf8' : r.oneOf(s.key, 'signature.key', ['utf8', 'base64'] as const),
    content: r.str(s.content, 'signature.content'),
    param: s.param === undefined ? '{name}{value}' : r.headerText(s.param, 'signature.param'),
  };
  const content = signature.content;
  if (content.includes('{body}'))
    throw r.bad(
      'signature.content',
      "a canonical scheme signs the form's parameters ({params}), not the body's bytes: for {body}, declare an hmac scheme",
    );
  if (count(content, '{params}') !== 1) throw r.bad('signature.content', 'must hold {params} exactly once');
  const stray = (content.match(/\{\w+\}/g) ?? []).find((p) => p !== '{params}' && p !== '{url}');
  if (stray) throw r.bad('signature.content', `may name {url} and {params} only, not ${stray}`);
  if (count(content, '{url}') > 1) throw r.bad('signature.content', 'names {url} twice; each part is signed once');
  const param = signature.param as string;
  if (count(param, '{name}') !== 1 || count(param, '{value}') !== 1)
    throw r.bad('signature.param', 'must hold {name} and {value} exactly once each');
  const other = (param.match(/\{\w+\}/g) ?? []).find((p) => p !== '{name}' && p !== '{value}');
  if (other) throw r.bad('signature.param', `may name {name} and {value} only, not ${other}`);
  if (s.bodyHash !== undefined) {
    const name = r.str(s.bodyHash, 'signature.bodyHash');
    if (!/^[A-Za-z0-9_.-]+$/.test(name)) throw r.bad('signature.bodyHash', `"${name}" is not a query parameter's name`);
    if (!content.includes('{url}'))
      throw r.bad('signature.bodyHash', "puts the body's hash in the URL: sign {url} too, or a changed body goes unnoticed");
    signature.bodyHash = name;
  }
  return signature;
}
