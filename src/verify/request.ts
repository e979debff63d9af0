/**
 * One captured request, from what people have at hand: raw HTTP (a file, stdin, `nc -l`, a proxy's
 * dump), a HAR file's entry (a browser's or a proxy's export), or a row of a hookdrill inbox.
 */
import { UsageError } from '../util/errors.js';
import { rawRequestHead } from '../util/http-headers.js';
import { openCaptures, stripBom } from '../fixtures/import/files.js';
import type { Captured } from '../fixtures/import/files.js';

export interface CapturedRequest {
  /** Lowercased names; a repeated header's values joined with ", " as Node joins them. */
  headers: Record<string, string>;
  body: Buffer;
  /** The Content-Length the request declared, where it declared one. */
  declaredLength?: number;
  /** When the request arrived, where the capture says (a HAR entry's startedDateTime, an inbox row's receivedAt). */
  arrivedAtMs?: number;
  /** Where it came from, for the report: "request.http", "capture.har entry 2", "inbox row evt_…". */
  source: string;
  /** The URL it was posted to, as its sender saw it, where known: what a URL-bound signature covers. */
  url?: string;
}

/**
 * A request as raw HTTP/1.1, the form parseRawHttp reads back: what the inspector hands out for a
 * refused request, so `hookdrill verify` (or a file kept for later) judges the very bytes. The
 * body goes as it arrived, with its own length (a chunked arrival is written whole).
 */
export function toRawHttp(method: string, path: string, headers: Record<string, string>, body: Buffer): Buffer {
  return Buffer.concat([rawRequestHead(method, path, headers, body.length), body]);
}

/** A raw HTTP/1.x request: the request line, headers, a blank line, the body (chunked bodies are joined). */
export function parseRawHttp(bytes: Buffer, source: string): CapturedRequest {
  let end = bytes.indexOf('\r\n\r\n');
  let sep = 4;
  const lf = bytes.indexOf('\n\n');
  if (end < 0 || (lf >= 0 && lf < end)) {
    end = lf;
    sep = 2;
  }
  if (end < 0) throw new UsageError(`${source}: no blank line after the headers: not a raw HTTP request`);
  const lines = bytes.subarray(0, end).toString('latin1').split(/\r?\n/);
  const requestLine = lines.shift() ?? '';
  if (!/^[A-Z]+ \S+ HTTP\/\d(\.\d)?$/.test(requestLine.trim()))
    throw new UsageError(
      `${source}: the first line is not an HTTP request line ("POST /path HTTP/1.1"): ${JSON.stringify(requestLine.slice(0, 60))}`,
    );
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon < 1) throw new UsageError(`${source}: a header line without a name and ":": ${JSON.stringify(line.slice(0, 60))}`);
    const name = line.slice(0, colon).trim().toLowerCase();
    const value = line.slice(colon + 1).trim();
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  let body = bytes.subarray(end + sep);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) body = dechunk(body, source);
  const declared = headers['content-length'];
  const target = requestLine.trim().split(' ')[1] ?? '/';
  return {
    headers,
    body: Buffer.from(body),
    // As the request line and Host say (absolute-form taken as it is); the scheme is a guess verify tries both ways.
    ...(/^https?:\/\//i.test(target) ? { url: target } : headers.host ? { url: `https://${headers.host}${target}` } : {}),
    ...(declared !== undefined && /^\d+$/.test(declared) ? { declaredLength: Number(declared) } : {}),
    source,
  };
}

/**
 * A chunk-size line as RFC 9112 §7.1 writes it: 1*HEXDIG, then any chunk extensions after ";".
 * Nothing else: parseInt read "-6" as a step back, so the same bytes were read for ever. Sixteen
 * hex digits is already past any body verify reads (MAX_CAPTURE_BYTES).
 */
const CHUNK_SIZE = /^([0-9A-Fa-f]{1,16})(?:[ \t]*;.*)?$/s;

function dechunk(raw: Buffer, source: string): Buffer {
  const parts: Buffer[] = [];
  let at = 0;
  for (;;) {
    const eol = raw.indexOf('\r\n', at);
    if (eol < 0) throw new UsageError(`${source}: a chunked body that ends before its last (zero-size) chunk`);
    const line = raw.subarray(at, eol).toString('latin1');
    const hex = CHUNK_SIZE.exec(line)?.[1];
    if (hex === undefined)
      throw new UsageError(`${source}: a chunk size that is not hex digits (RFC 9112 7.1): ${JSON.stringify(line.slice(0, 40))}`);
    const size = Number.parseInt(hex, 16);
    if (size === 0) return Buffer.concat(parts);
    const end = eol + 2 + size;
    if (end + 2 > raw.length || raw[end] !== 0x0d || raw[end + 1] !== 0x0a)
      throw new UsageError(`${source}: a chunk size (${hex}) that does not match its chunk's length: a cut or altered chunked body`);
    parts.push(raw.subarray(eol + 2, end));
    at = end + 2;
  }
}

/** An entry of a HAR file (read as `import` reads one): the one given (1-based), or the only POST in it. */
export function harEntry(file: string, entry?: number): CapturedRequest {
  const captures = [...openCaptures(file).captures()];
  const number = (c: Captured) => Number(/#entry (\d+)$/.exec(c.where)?.[1]);
  const chosen = entry !== undefined ? captures.find((c) => number(c) === entry) : captures.length === 1 ? captures[0] : undefined;
  if (!chosen)
    throw new UsageError(
      entry !== undefined
        ? `--entry ${entry}: ${file} holds no POST with a body at entry ${entry} (POSTs: ${captures.map(number).join(', ') || 'none'})`
        : `${file} holds ${captures.length} POST requests with a body${captures.length ? ` (entries ${captures.map(number).join(', ')})` : ''}: pick one with --entry N`,
    );
  return {
    headers: chosen.headers,
    body: chosen.body,
    ...(chosen.arrivedAtMs !== undefined ? { arrivedAtMs: chosen.arrivedAtMs } : {}),
    ...(chosen.url !== undefined ? { url: chosen.url } : {}),
    source: chosen.where,
  };
}

/** Raw HTTP or a HAR file, told apart by their first character (a HAR file is a JSON object). */
export function parseCapture(raw: Buffer, source: string, entry?: number, file?: string): CapturedRequest {
  // A BOM first made a HAR file's first character "ï": it was read as a raw request with a strange first line.
  const bytes = stripBom(raw);
  const first = bytes.subarray(0, 64).toString('latin1').trimStart()[0];
  if (first === '{') {
    if (file === undefined) throw new UsageError('a HAR file is read from a file, not stdin: give its path');
    return harEntry(file, entry);
  }
  if (entry !== undefined) throw new UsageError('--entry goes with a HAR file');
  if (bytes.length === 0) throw new UsageError(`${source} is empty: expected a raw HTTP request or a HAR file`);
  return parseRawHttp(bytes, source);
}
