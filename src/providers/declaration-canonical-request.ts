import type { CanonicalSignature, FieldReaders } from './declaration-canonical.js';

/**
 * The request form of the canonical scheme: a MAC of the method, the path posted to, a list of
 * headers that a header of its own names, and the body, each where `content` puts it and joined by
 * its literal text. Contentful signs "{method}\n{path}\n{headers}\n{body}" with HMAC-SHA256 in hex,
 * `{headers}` being each header named in X-Contentful-Signed-Headers written "name:value", sorted
 * by name, joined by ";" (@contentful/node-apps-toolkit 3.16.1, lib/requests: signRequest, verifyRequest;
 * https://www.contentful.com/developers/docs/webhooks/request-verification/).
 * The signed-headers header and the timestamp's header are always among the signed ones: a list
 * an attacker could shorten, or a time it could move, would be no binding.
 */
export const REQUEST_PARTS = ['{method}', '{path}', '{headers}', '{body}'] as const;

const count = (text: string, part: string) => text.split(part).length - 1;

/** A request-form canonical signature checked: every fault one line naming its field. */
export function checkRequestSignature(s: Record<string, unknown>, r: FieldReaders): CanonicalSignature {
  r.onlyKnown(
    s,
    ['scheme', 'header', 'algorithm', 'encoding', 'key', 'content', 'signedHeaders', 'headerPair', 'headerJoin'],
    'signature.',
  );
  const signature: CanonicalSignature = {
    scheme: 'canonical',
    header: r.headerName(s.header, 'signature.header'),
    algorithm: r.oneOf(s.algorithm, 'signature.algorithm', ['sha1', 'sha256', 'sha512'] as const),
    encoding: r.oneOf(s.encoding, 'signature.encoding', ['hex', 'base64'] as const),
    key: s.key === undefined ? 'utf8' : r.oneOf(s.key, 'signature.key', ['utf8', 'base64'] as const),
    content: r.str(s.content, 'signature.content'),
    headerPair: s.headerPair === undefined ? '{name}:{value}' : r.headerText(s.headerPair, 'signature.headerPair'),
    headerJoin: s.headerJoin === undefined ? ';' : r.str(s.headerJoin, 'signature.headerJoin'),
  };
  const content = signature.content;
  const stray = (content.match(/\{\w+\}/g) ?? []).find((p) => !(REQUEST_PARTS as readonly string[]).includes(p));
  if (stray)
    throw r.bad(
      'signature.content',
      `a request's canonical string may name {method}, {path}, {headers} and {body} only, not ${stray}${stray === '{url}' || stray === '{params}' ? ' ({url}{params} is the form one, without signedHeaders)' : ''}`,
    );
  for (const part of REQUEST_PARTS)
    if (count(content, part) > 1) throw r.bad('signature.content', `names ${part} twice; each part is signed once`);
  if (count(content, '{body}') !== 1)
    throw r.bad('signature.content', "must hold {body} once: a request's canonical string that leaves the body out lets it be changed");
  if (s.signedHeaders === undefined)
    throw r.bad('signature.signedHeaders', 'name the header that lists the signed headers ({headers} is written from it)');
  signature.signedHeaders = r.headerName(s.signedHeaders, 'signature.signedHeaders');
  if (count(content, '{headers}') !== 1)
    throw r.bad('signature.content', `must hold {headers} once: ${signature.signedHeaders} lists headers that nothing would sign`);
  const pair = signature.headerPair as string;
  if (count(pair, '{name}') !== 1 || count(pair, '{value}') !== 1)
    throw r.bad('signature.headerPair', 'must hold {name} and {value} exactly once each');
  const other = (pair.match(/\{\w+\}/g) ?? []).find((p) => p !== '{name}' && p !== '{value}');
  if (other) throw r.bad('signature.headerPair', `may name {name} and {value} only, not ${other}`);
  return signature;
}

/** Whether a checked canonical signature is the request form (method, path, signed headers, body). */
export function isRequestForm(sig: CanonicalSignature): boolean {
  return sig.signedHeaders !== undefined;
}
