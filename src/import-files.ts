import { readFileSync } from 'node:fs';
import { CREDENTIAL_HEADERS, HOP_BY_HOP_HEADERS } from './http-headers.js';
import { UsageError } from './errors.js';
import { jsonPosition } from './json-position.js';

/** One captured delivery: its raw body, and the request headers when the capture kept them. */
export interface Captured {
  /** file:line or file#entry, for messages. */
  where: string;
  body: Buffer;
  headers: Record<string, string>;
}

/**
 * Deliveries from a file, whatever it is: a HAR file of captured requests (raw body and headers
 * kept; only POSTs with a body), a JSON array of events, or JSON lines (what `stripe listen
 * --format JSON` prints: one event per line). An event is stored as its JSON text.
 */
export function readCaptures(file: string): Captured[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new UsageError(`${file}: cannot be read (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`);
  }
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{') && /^\{\s*"log"\s*:/.test(trimmed)) return fromHar(file, parse(text, file));
  if (trimmed.startsWith('[')) {
    const list = parse(text, file);
    if (!Array.isArray(list)) throw new UsageError(`${file}: expected a JSON array of events`);
    return list.map((e, i) => ({ where: `${file}#${i + 1}`, body: Buffer.from(JSON.stringify(e)), headers: {} }));
  }
  const out: Captured[] = [];
  for (const [i, line] of text.split('\n').entries()) {
    if (line.trim() === '') continue;
    const event = parse(line, `${file}:${i + 1}`);
    out.push({ where: `${file}:${i + 1}`, body: Buffer.from(JSON.stringify(event)), headers: {} });
  }
  return out;
}

function parse(text: string, where: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new UsageError(`${where}: not valid JSON${jsonPosition(err)} (expected a HAR file, a JSON array of events, or JSON lines)`);
  }
}

interface HarEntry {
  request?: { method?: string; headers?: { name: string; value: string }[]; postData?: { text?: string; encoding?: string } };
}

/** HAR 1.2 (http://www.softwareishard.com/blog/har-12-spec/): log.entries[].request, postData.text (base64 when encoding says so). */
function fromHar(file: string, har: unknown): Captured[] {
  const entries = (har as { log?: { entries?: HarEntry[] } }).log?.entries;
  if (!Array.isArray(entries)) throw new UsageError(`${file}: a HAR file without log.entries`);
  const out: Captured[] = [];
  for (const [i, e] of entries.entries()) {
    const req = e.request;
    const text = req?.postData?.text;
    if (req?.method?.toUpperCase() !== 'POST' || text === undefined) continue;
    const body = req.postData?.encoding === 'base64' ? Buffer.from(text, 'base64') : Buffer.from(text, 'utf8');
    const headers: Record<string, string> = {};
    for (const h of req.headers ?? []) {
      const name = h.name.toLowerCase();
      // Credentials and hop-by-hop headers are not the event's, as for listen: never stored.
      if (name.startsWith(':') || HOP_BY_HOP_HEADERS.has(name) || CREDENTIAL_HEADERS.has(name)) continue;
      headers[name] = headers[name] ? `${headers[name]}, ${h.value}` : h.value;
    }
    out.push({ where: `${file}#entry ${i + 1}`, body, headers });
  }
  return out;
}
