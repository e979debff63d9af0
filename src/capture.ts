import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { UsageError } from './errors.js';
import { getProvider, isProviderName } from './providers/index.js';
import type { JsonObject, JsonValue, ProviderName } from './providers/index.js';
import { header } from './providers/util.js';
import { MAX_NESTING, nesting } from './fixtures.js';
import { redact } from './redact.js';
import type { RedactionKind } from './redact.js';

/*
 * A stored delivery → a fixture `send` can send (`fixtures capture`). The fixture is the body alone:
 * headers (signatures among them) are never written. Its file is named for the event, as shipped
 * fixtures are, so that `send` derives the same event from it: `invoice.paid.json`,
 * `issues.opened.json` (X-GitHub-Event + action), `orders.create.json` (Shopify's `orders/create`).
 */

/** What capture needs of a stored delivery (an inbox row has it all). */
export interface DeliveryToCapture {
  source: string;
  deliveryId: string;
  eventType: string | undefined;
  body: Buffer | null;
  headers: Record<string, string>;
}

export interface CapturedFixture {
  provider: ProviderName;
  /** The event as the provider named it (`issues.opened`, `orders/create`); undefined if it had none. */
  eventType: string | undefined;
  /** `invoice.paid.json`. */
  fileName: string;
  /** What `send --event` must say, when the file name alone would not give the same event (a --name). */
  sendEvent?: string;
  /** The file's text: the body, pretty-printed (2 spaces) with a final newline. */
  text: string;
  body: JsonObject;
  /** With redaction: what was replaced, by kind. */
  redactions?: Record<RedactionKind, number>;
  /** Credentials in the body that were replaced whatever the flags (Slack's verification token). */
  credentials: string[];
}

const FILE_STEM = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,199}$/;

export function fixtureFromDelivery(d: DeliveryToCapture, o: { redact?: boolean; name?: string } = {}): CapturedFixture {
  if (!isProviderName(d.source)) throw new UsageError(`delivery ${d.deliveryId} came from "${d.source}", which hookdrill cannot send as`);
  const provider = getProvider(d.source);
  if (d.body === null) throw new UsageError(`the body of delivery ${d.deliveryId} was pruned: nothing to capture`);
  const raw = d.body;
  let body = parseBody(d.deliveryId, raw, d.headers);

  const eventType = d.eventType ?? provider.eventTypeOf(d.headers, raw);
  // Shopify's topic holds a slash, which a file name cannot: shipped fixtures write it as a dot.
  const derived = eventType?.replaceAll('/', '.');
  let stem: string;
  if (o.name !== undefined) {
    stem = o.name.replace(/\.json$/i, '');
    if (!FILE_STEM.test(stem))
      throw new UsageError(`--name ${o.name}: give a file name of letters, digits, '.', '_' and '-' (the event name, e.g. invoice.paid)`);
  } else if (derived === undefined) {
    throw new UsageError(`delivery ${d.deliveryId} carries no event type to name the fixture after: give --name`);
  } else if (!FILE_STEM.test(derived)) {
    throw new UsageError(`the event type of delivery ${d.deliveryId} (${shortJson(eventType)}) cannot be a file name: give --name`);
  } else {
    stem = derived;
  }

  const credentials: string[] = [];
  if (provider.name === 'slack' && typeof body.token === 'string' && body.token !== '') {
    // Slack's (deprecated) verification token is a credential: never written, redaction or not.
    body = { ...body, token: fakeToken(body.token) };
    credentials.push("Slack's verification token");
  }
  let redactions: Record<RedactionKind, number> | undefined;
  if (o.redact) {
    const r = redact(body);
    body = r.value as JsonObject;
    redactions = r.counts;
  }
  const sendEvent =
    derived !== undefined && FILE_STEM.test(derived) && provider.describe(body, stem).eventType !== eventType ? derived : undefined;
  return {
    provider: provider.name,
    eventType,
    fileName: `${stem}.json`,
    ...(sendEvent !== undefined ? { sendEvent } : {}),
    text: `${JSON.stringify(body, null, 2)}\n`,
    body,
    ...(redactions ? { redactions } : {}),
    credentials,
  };
}

function parseBody(id: string, raw: Buffer, headers: Record<string, string>): JsonObject {
  const contentType = header(headers, 'content-type');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw);
  } catch {
    throw new UsageError(`the body of delivery ${id} is not UTF-8 text, so not JSON: a fixture is one JSON object`);
  }
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  let value: JsonValue;
  try {
    value = JSON.parse(text) as JsonValue;
  } catch {
    if (contentType && /x-www-form-urlencoded/i.test(contentType))
      throw new UsageError(
        `the body of delivery ${id} is form-encoded (${contentType}), as Slack's slash commands and interactive payloads are: a fixture is one JSON object, so it cannot be captured`,
      );
    throw new UsageError(
      `the body of delivery ${id} is not JSON${contentType ? ` (${contentType})` : ''}: a fixture is one JSON object, so it cannot be captured`,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UsageError(
      `the body of delivery ${id} is JSON but not an object (${Array.isArray(value) ? 'an array' : typeof value}): a fixture is one JSON object`,
    );
  }
  const depth = nesting(value);
  if (depth > MAX_NESTING)
    throw new UsageError(`the body of delivery ${id} is nested ${depth} levels deep; a fixture takes up to ${MAX_NESTING}`);
  return value;
}

function fakeToken(original: string): string {
  const shape = 'XXYYZZ0123456789abcdefgh';
  const fake = shape.repeat(Math.ceil(original.length / shape.length)).slice(0, original.length);
  return fake === original ? 'Z'.repeat(original.length) : fake;
}

function shortJson(value: string | undefined): string {
  const text = JSON.stringify(value ?? null);
  return text.length > 60 ? `${text.slice(0, 57)}…"` : text;
}

/**
 * Write a file whole or not at all: a temporary file beside it, synced, then moved into place.
 * Without `force` an existing file is never replaced — the move is a hard link, which fails if the
 * name exists, so a file created meanwhile is not overwritten either. Every failure is one line.
 */
export function writeFileAtomically(path: string, text: string, force: boolean): void {
  const dir = dirname(path);
  const exists = () => new UsageError(`${path} already exists: give --force to replace it`);
  try {
    mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw new UsageError(`cannot create ${dir}: ${code(err)}`);
  }
  if (!force && existsSync(path)) throw exists();
  if (force && existsSync(path) && statSync(path).isDirectory()) throw new UsageError(`cannot write ${path}: it is a directory`);
  const tmp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`);
  try {
    const fd = openSync(tmp, 'wx', 0o644);
    try {
      writeSync(fd, text);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    if (force) {
      renameSync(tmp, path);
    } else {
      try {
        linkSync(tmp, path);
        unlinkSync(tmp);
      } catch (err) {
        const c = (err as NodeJS.ErrnoException).code;
        if (c === 'EEXIST') throw exists();
        // A file system without hard links: check, then move (a race with another writer remains).
        if (c !== 'EPERM' && c !== 'ENOTSUP' && c !== 'EOPNOTSUPP' && c !== 'ENOSYS') throw err;
        if (existsSync(path)) throw exists();
        renameSync(tmp, path);
      }
    }
  } catch (err) {
    rmSync(tmp, { force: true });
    if (err instanceof UsageError) throw err;
    throw new UsageError(`cannot write ${path}: ${code(err)}`);
  }
}

function code(err: unknown): string {
  return (err as NodeJS.ErrnoException).code ?? (err instanceof Error ? err.message : String(err));
}

/** A word for a shell: as it is when it needs no quoting, else in single quotes. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}
