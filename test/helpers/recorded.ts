/**
 * A recorded delivery and what `send` sent, compared fact by fact. A record
 * (test/wire/recorded/<provider>.json) holds what a real delivery of one event looked like — its
 * headers (names, value forms, and their order and casing where the capture shows them), its body's
 * layout and its fields (path → type, and the values that say what the event is) — each with the
 * key of its source. Every difference is one stable line (`header User-Agent missing`, `body
 * .data.state value`), so the record can list the known ones under their reasons, word for word.
 */

/** A header as recorded: [name as the capture writes it, the value it held, the form of the value, source key]. */
export type RecordedHeader = [name: string, recorded: string, pattern: string, source: string];

/** How a provider writes its body's bytes. */
/** `form`: application/x-www-form-urlencoded, its fields compared as a JSON object of strings in their order (Twilio's). */
export type Layout =
  | 'compact'
  | 'pretty'
  | 'compact-slashes'
  | 'compact-capital-escapes'
  | 'crlf-events'
  | 'form'
  | 'pretty-spaced-colons'
  | 'compact-newline';

export interface DeliveryRecord {
  provider: string;
  /** What was recorded, in a line. */
  delivery: string;
  /** Source key → where the facts come from: URL, or repository, path and commit. */
  sources: Record<string, string>;
  /** hookdrill's fixture of the same event, as `send` takes it. */
  fixture: string;
  headers: {
    /** Every header the provider sent is listed (relays' own left out): one more from `send` is a difference. */
    complete: boolean;
    /** The capture shows the order the provider writes them in. */
    orderKnown: boolean;
    /** The capture shows the names as the provider writes them (a raw HTTP dump), not lower-cased by a server. */
    casingKnown: boolean;
    list: RecordedHeader[];
  };
  body: {
    /** How its bytes are written, where a capture of the raw bytes (or the SDK's vectors) shows it. */
    layout?: [Layout, string];
    /** Every object's keys in sorted order (Discord's, SendGrid's). */
    keysSorted?: [boolean, string];
    /** Keys in the recorded order at these paths ('.' the top level). */
    keyOrder?: Record<string, string[]>;
    /** [the field list is every field the delivery had, source key]. */
    complete: [boolean, string];
    /** Paths whose insides were not recorded (the event's own object, where it varies). */
    open?: string[];
    /** Path → JSON type (`string`, `number`, `boolean`, `null`, `object`, `array`); `[]` for an array's items. */
    fields: Record<string, string>;
    /** Path → the value that says what the event is. */
    values?: Record<string, string | number | boolean | null>;
  };
  /** Reason → the differences it explains, each as `difference` prints it. */
  differences: Record<string, string[]>;
}

/** A request as the server received it: header names in their casing and order. */
export interface SentRequest {
  rawHeaders: [string, string][];
  body: Buffer;
}

/** Added by any HTTP client, not by the provider's own code: never compared. */
export const TRANSPORT = new Set(['host', 'connection', 'content-length', 'transfer-encoding']);

export function kindOf(v: unknown): string {
  return v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v;
}

/** Every path in a JSON value with its type; array items share one path (`[]`), their types joined. */
export function fieldsOf(value: unknown, path = '', out = new Map<string, Set<string>>()): Map<string, Set<string>> {
  if (path) {
    const kinds = out.get(path) ?? new Set<string>();
    kinds.add(kindOf(value));
    out.set(path, kinds);
  }
  if (Array.isArray(value)) for (const item of value) fieldsOf(item, `${path}[]`, out);
  else if (value !== null && typeof value === 'object')
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) fieldsOf(v, `${path}.${k}`, out);
  return out;
}

/** The value at a path (an array's first item for `[]`). */
export function valueAt(value: unknown, path: string): unknown {
  let v = value;
  for (const step of path.match(/\[\]|\.[^.[]+/g) ?? []) {
    if (step === '[]') v = Array.isArray(v) ? v[0] : undefined;
    else v = v !== null && typeof v === 'object' ? (v as Record<string, unknown>)[step.slice(1)] : undefined;
  }
  return v;
}

/** A `\u` escape (not an escaped backslash before a `u`). */
const uEscape = /(?<!\\)(?:\\\\)*\\u[0-9A-Fa-f]{4}/g;

/** Whether the body's bytes are written as the layout writes them. */
export function hasLayout(layout: Layout, text: string): boolean {
  // A form as Twilio writes it: name=value pairs, a space as +, nothing a form encoder would escape left bare.
  if (layout === 'form') return /^[A-Za-z0-9_]+=/.test(text) && !/[\s{}"']/.test(text);
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return false;
  }
  const compact = JSON.stringify(parsed);
  if (layout === 'compact') return text === compact;
  if (layout === 'pretty') return text === JSON.stringify(parsed, null, 2);
  if (layout === 'compact-slashes') return text === compact.replace(/\//g, '\\/');
  if (layout === 'compact-capital-escapes') return text.replace(uEscape, (e) => e.toLowerCase()) === compact;
  // SNS's: pretty-printed two spaces in, a space before each key's colon ("Type" : "Notification").
  if (layout === 'pretty-spaced-colons') return text === JSON.stringify(parsed, null, 2).replace(/^( *"(?:[^"\\]|\\.)*"):/gm, '$1 :');
  // Pub/Sub push's: compact, then a newline.
  if (layout === 'compact-newline') return text === `${compact}\n`;
  // SendGrid's: the array's events one to a line, each line ended by CRLF, the closing bracket's too.
  return Array.isArray(parsed) && text === `[${parsed.map((e) => JSON.stringify(e)).join(',\r\n')}]\r\n`;
}

export const LAYOUTS: Layout[] = [
  'compact',
  'pretty',
  'compact-slashes',
  'compact-capital-escapes',
  'crlf-events',
  'form',
  'pretty-spaced-colons',
  'compact-newline',
];

function everyObject(value: unknown, visit: (o: Record<string, unknown>, path: string) => void, path = '.'): void {
  if (Array.isArray(value)) for (const item of value) everyObject(item, visit, path === '.' ? '[]' : `${path}[]`);
  else if (value !== null && typeof value === 'object') {
    visit(value as Record<string, unknown>, path);
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) everyObject(v, visit, path === '.' ? `.${k}` : `${path}.${k}`);
  }
}

/** The differences between the record's headers and the ones sent. */
export function headerDifferences(record: DeliveryRecord, sent: SentRequest): string[] {
  const out: string[] = [];
  const own = sent.rawHeaders.filter(([n]) => !TRANSPORT.has(n.toLowerCase()));
  const find = (name: string) => own.find(([n]) => n.toLowerCase() === name.toLowerCase());
  for (const [name, , pattern] of record.headers.list) {
    const got = find(name);
    if (!got) {
      out.push(`header ${name} missing`);
      continue;
    }
    if (record.headers.casingKnown && got[0] !== name) out.push(`header ${name} written ${got[0]}`);
    if (!new RegExp(pattern).test(got[1])) out.push(`header ${name} value unlike recorded`);
  }
  const known = new Set(record.headers.list.map(([n]) => n.toLowerCase()));
  if (record.headers.complete) for (const [n] of own) if (!known.has(n.toLowerCase())) out.push(`header ${n} added`);
  if (record.headers.orderKnown) {
    const recorded = record.headers.list.map(([n]) => n.toLowerCase()).filter((n) => own.some(([m]) => m.toLowerCase() === n));
    const sentOrder = own.map(([n]) => n.toLowerCase()).filter((n) => known.has(n));
    if (recorded.join() !== sentOrder.join()) out.push('header order');
  }
  return out;
}

/** The differences between the record's body and the one sent. */
export function bodyDifferences(record: DeliveryRecord, body: Buffer): string[] {
  const out: string[] = [];
  const text = body.toString('utf8');
  if (record.body.layout && !hasLayout(record.body.layout[0], text)) out.push(`body layout not ${record.body.layout[0]}`);
  let parsed: unknown;
  try {
    parsed = record.body.layout?.[0] === 'form' ? Object.fromEntries(new URLSearchParams(text)) : JSON.parse(text);
  } catch {
    return [...out, 'body not JSON'];
  }
  if (record.body.keysSorted) {
    const [sorted] = record.body.keysSorted;
    let isSorted = true;
    everyObject(parsed, (o) => {
      const keys = Object.keys(o);
      if (keys.join() !== [...keys].sort().join()) isSorted = false;
    });
    if (sorted && !isSorted) out.push('body keys not sorted');
  }
  for (const [path, order] of Object.entries(record.body.keyOrder ?? {})) {
    let differs = false;
    let seen = false;
    everyObject(parsed, (o, at) => {
      if (at !== path) return;
      seen = true;
      const keys = Object.keys(o).filter((k) => order.includes(k));
      if (keys.join() !== order.filter((k) => keys.includes(k)).join()) differs = true;
    });
    if (seen && differs) out.push(`body key order at ${path}`);
  }
  const sent = fieldsOf(parsed);
  const open = record.body.open ?? [];
  const inOpen = (p: string) => open.some((o) => p.startsWith(`${o}.`) || p.startsWith(`${o}[]`));
  // A field missing (or added) is one difference, not one more for each field inside it.
  const under = (p: string, a: string) => p.startsWith(`${a}.`) || p.startsWith(`${a}[]`);
  const missing: string[] = [];
  for (const [path, type] of Object.entries(record.body.fields)) {
    const kinds = sent.get(path);
    if (!kinds) {
      if (!missing.some((m) => under(path, m))) out.push(`body ${path} missing`);
      missing.push(path);
    } else if (!kinds.has(type)) out.push(`body ${path} ${type} became ${[...kinds].sort().join('|')}`);
  }
  if (record.body.complete[0]) {
    const added: string[] = [];
    for (const path of sent.keys())
      if (!(path in record.body.fields) && !inOpen(path)) {
        if (!added.some((a) => under(path, a))) out.push(`body ${path} added`);
        added.push(path);
      }
  }
  for (const [path, value] of Object.entries(record.body.values ?? {}))
    if (sent.has(path) && valueAt(parsed, path) !== value) out.push(`body ${path} value`);
  return out;
}

/** Every difference, headers first. */
export function differences(record: DeliveryRecord, sent: SentRequest): string[] {
  return [...headerDifferences(record, sent), ...bodyDifferences(record, sent.body)];
}

/** What the record lists: new ones to explain, gone ones to take out. */
export function againstList(record: DeliveryRecord, found: readonly string[]): { unexplained: string[]; gone: string[] } {
  const listed = new Set(Object.values(record.differences).flat());
  const seen = new Set(found);
  return {
    unexplained: [...seen].filter((d) => !listed.has(d)).sort(),
    gone: [...listed].filter((d) => !seen.has(d)).sort(),
  };
}

/**
 * The header names hookdrill sends by the record: those recorded, less the ones the record lists as
 * missing, with those it lists as added — what docs/wire.md should show (lower-cased).
 */
export function namesSentByRecord(record: DeliveryRecord): { names: Set<string>; complete: boolean } {
  const listed = Object.values(record.differences).flat();
  const missing = new Set(listed.flatMap((d) => /^header (\S+) missing$/.exec(d)?.[1]?.toLowerCase() ?? []));
  const added = listed.flatMap((d) => /^header (\S+) added$/.exec(d)?.[1]?.toLowerCase() ?? []);
  const names = new Set(record.headers.list.map(([n]) => n.toLowerCase()).filter((n) => !missing.has(n)));
  for (const n of added) names.add(n);
  return { names, complete: record.headers.complete };
}
