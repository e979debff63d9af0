import { readFileSync, readdirSync, statSync } from 'node:fs';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { UsageError } from './errors.js';
import { isProviderName, providerNames } from './providers/index.js';
import { randomAlnum, randomUint32 } from './providers/util.js';
import type { JsonObject, JsonValue, Provider, ProviderName } from './providers/index.js';

/** Where the shipped fixtures live: beside `dist/`, in the package root. */
export const FIXTURES_DIR = fileURLToPath(new URL('../../fixtures/', import.meta.url));

/** What `send --provider X` sends when no fixture is named. */
export const DEFAULT_FIXTURE: Readonly<Record<ProviderName, string>> = {
  stripe: 'invoice.paid',
  github: 'push',
  slack: 'message',
  standard: 'invoice.paid',
  shopify: 'orders.create',
};

export interface Fixture {
  /** The event name, from the file name: `invoice.paid`, `issues.opened`, `orders.create`. */
  name: string;
  /** Where it was read from, for messages. */
  path: string;
  /** The provider it belongs to, when it is one of ours (`fixtures/<provider>/`). */
  provider?: ProviderName;
  body: JsonObject;
}

export interface ShippedFixture {
  provider: ProviderName;
  name: string;
  path: string;
}

export function listShippedFixtures(): ShippedFixture[] {
  const out: ShippedFixture[] = [];
  for (const provider of providerNames) {
    const dir = join(FIXTURES_DIR, provider);
    let files: string[];
    try {
      files = readdirSync(dir);
    } catch {
      continue;
    }
    for (const file of files.filter((f) => f.endsWith('.json')).sort()) {
      out.push({ provider, name: file.slice(0, -'.json'.length), path: join(dir, file) });
    }
  }
  return out;
}

/** Deeper than this, walking a body (fresh fields, --set, signing) would exhaust the call stack. */
export const MAX_NESTING = 512;

/** How deep a JSON value nests, found without recursion (the value may be deeper than the stack). */
export function nesting(value: JsonValue): number {
  let deepest = 0;
  const stack: [JsonValue, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop() as [JsonValue, number];
    if (typeof v !== 'object' || v === null) continue;
    deepest = Math.max(deepest, d);
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, d + 1]);
  }
  return deepest;
}

export function loadFixtureFile(path: string, provider?: ProviderName): Fixture {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new UsageError(`cannot read fixture ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`);
  }
  // A UTF-8 byte order mark (as some editors save JSON) is not part of the JSON: accepted, dropped.
  if (text.startsWith('\uFEFF')) text = text.slice(1);
  let body: JsonValue;
  try {
    body = JSON.parse(text) as JsonValue;
  } catch (err) {
    throw new UsageError(`fixture ${path} is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new UsageError(`fixture ${path} must hold one JSON object (the event body)`);
  }
  const depth = nesting(body);
  if (depth > MAX_NESTING)
    throw new UsageError(
      `fixture ${path} is nested ${depth} levels deep; hookdrill takes up to ${MAX_NESTING} (real events are a few dozen)`,
    );
  const name = basename(path).replace(/\.json$/, '');
  return { name, path, body, ...(provider ? { provider } : {}) };
}

/**
 * Turn command-line fixture arguments into fixtures. Each argument is a file, a directory of
 * `.json` files, `provider/event` (a shipped fixture), or `event` (a shipped fixture of the
 * provider given). With no argument, the provider's default fixture.
 */
export function resolveFixtures(args: readonly string[], provider: ProviderName | undefined): Fixture[] {
  if (args.length === 0) {
    if (!provider) throw new UsageError('--provider is required (or name a fixture as provider/event)');
    return [loadShipped(provider, DEFAULT_FIXTURE[provider])];
  }
  const out: Fixture[] = [];
  for (const arg of args) out.push(...resolveOne(arg, provider));
  return out;
}

function resolveOne(arg: string, provider: ProviderName | undefined): Fixture[] {
  const stat = statOrUndefined(arg);
  if (stat?.isDirectory()) {
    const files = readdirSync(arg)
      .filter((f) => f.endsWith('.json'))
      .sort();
    if (files.length === 0) throw new UsageError(`fixture directory ${arg} holds no .json files`);
    return files.map((f) => loadFixtureFile(join(arg, f)));
  }
  if (stat?.isFile()) return [loadFixtureFile(arg)];
  if (stat) throw new UsageError(`fixture ${arg} is not a regular file (a device, FIFO or socket): give a .json file`);
  if (looksLikeAPath(arg)) throw new UsageError(`no such fixture file: ${arg}`);

  const slash = arg.indexOf('/');
  const head = arg.slice(0, slash);
  if (slash > 0 && isProviderName(head)) {
    if (provider && provider !== head) {
      throw new UsageError(`fixture ${arg} is a ${head} fixture, but --provider is ${provider}`);
    }
    return [loadShipped(head, arg.slice(slash + 1))];
  }
  if (!provider) {
    throw new UsageError(`no fixture file "${arg}"; name a shipped one as provider/event (see: hookdrill fixtures)`);
  }
  return [loadShipped(provider, arg)];
}

function loadShipped(provider: ProviderName, name: string): Fixture {
  const shipped = listShippedFixtures().find((f) => f.provider === provider && f.name === name.replace('/', '.'));
  if (!shipped) {
    const names = listShippedFixtures()
      .filter((f) => f.provider === provider)
      .map((f) => f.name);
    throw new UsageError(`no ${provider} fixture "${name}" and no such file (${provider} ships: ${names.join(', ')})`);
  }
  return loadFixtureFile(shipped.path, provider);
}

/** ./x.json, ../x, /abs/x, x.json: meant as a file, not as a shipped fixture's name. */
export function looksLikeAPath(arg: string): boolean {
  return /^(\.{1,2}\/|\/)/.test(arg) || arg.endsWith('.json');
}

function statOrUndefined(path: string) {
  try {
    return statSync(path);
  } catch {
    return undefined;
  }
}

/** One `--set path=value`: the value is JSON when it parses as JSON, a string otherwise. */
export interface FieldOverride {
  path: string[];
  value: JsonValue;
  /** As the user wrote it, for messages. */
  text: string;
}

export function parseOverride(text: string): FieldOverride {
  const eq = text.indexOf('=');
  if (eq < 1) throw new UsageError(`--set ${text}: expected path=value, e.g. data.object.amount_paid=5000`);
  const pathText = text.slice(0, eq);
  const raw = text.slice(eq + 1);
  let value: JsonValue;
  try {
    value = JSON.parse(raw) as JsonValue;
  } catch {
    value = raw;
  }
  const path = pathText.split('.');
  if (path.some((p) => p === '')) throw new UsageError(`--set ${pathText}: empty segment in the path`);
  return { path, value, text: pathText };
}

/**
 * Apply overrides in place. Only fields that exist may be set: a typo in a path must fail loudly,
 * not quietly add a field the receiver never reads.
 */
export function applyOverrides(body: JsonObject, overrides: readonly FieldOverride[], fixturePath: string): void {
  for (const o of overrides) {
    let node: JsonValue = body;
    for (let i = 0; i < o.path.length; i++) {
      const key = o.path[i] as string;
      const last = i === o.path.length - 1;
      const container: JsonValue = node;
      if (Array.isArray(container)) {
        const index = /^\d+$/.test(key) ? Number(key) : -1;
        if (index < 0 || index >= container.length) throw unknownPath(o, i, fixturePath);
        if (last) container[index] = o.value;
        else node = container[index] as JsonValue;
      } else if (typeof container === 'object' && container !== null && Object.hasOwn(container, key)) {
        if (last) container[key] = o.value;
        else node = container[key] as JsonValue;
      } else {
        throw unknownPath(o, i, fixturePath);
      }
    }
  }
}

function unknownPath(o: FieldOverride, depth: number, fixturePath: string): UsageError {
  const known = o.path.slice(0, depth).join('.') || '(top level)';
  return new UsageError(`--set ${o.text}: fixture ${fixturePath} has no "${o.path[depth]}" under ${known}`);
}

/** A ready-to-send event: the exact bytes, and the ids the sender reports and the receiver dedupes on. */
export interface PreparedEvent {
  rawBody: Buffer;
  deliveryId: string;
  eventType: string;
  /** Send exactly these headers instead of signing (replay --original-headers). */
  fixedHeaders?: Record<string, string>;
}

/** Makes events from one fixture: compiled once, then cheap per event (see compileFixture). */
export interface EventFactory {
  fixture: Fixture;
  make(nowMs: number): PreparedEvent;
}

/**
 * Compile a fixture into a factory. The body is serialised once, with a placeholder where each
 * fresh field goes (after the user's --set overrides, so `--set id=evt_x` pins the id on purpose);
 * each event is then the text with new values spliced in. The result is byte-for-byte what
 * JSON.stringify of the freshened body gives, at a fraction of the cost: `send` makes an event
 * per delivery, tens of thousands a second.
 */
export function compileFixture(
  provider: Provider,
  fixture: Fixture,
  overrides: readonly FieldOverride[],
  eventName?: string,
): EventFactory {
  const body = structuredClone(fixture.body);
  const fields = provider.freshFields(body);
  const marker = `__hookdrill_${randomAlnum(12)}_`;
  const placeholders = fields.map((_, i) => `${marker}${i}__`);
  for (const [i, field] of fields.entries()) setPath(body, field.path, placeholders[i] as string);
  applyOverrides(body, overrides, fixture.path);
  const described = provider.describe(body, eventName ?? fixture.name);

  const text = JSON.stringify(body);
  const pieces: string[] = [];
  const slots: number[] = [];
  const pattern = new RegExp(`"${marker}(\\d+)__"`, 'g');
  let last = 0;
  for (let m = pattern.exec(text); m !== null; m = pattern.exec(text)) {
    pieces.push(text.slice(last, m.index));
    slots.push(Number(m[1]));
    last = m.index + m[0].length;
  }
  pieces.push(text.slice(last));
  const idSlot = described.deliveryId === undefined ? -1 : placeholders.indexOf(described.deliveryId);

  return {
    fixture,
    make(nowMs) {
      const r = randomUint32();
      const values = fields.map((f) => f.make(nowMs, r));
      let out = pieces[0] as string;
      for (let k = 0; k < slots.length; k++) out += JSON.stringify(values[slots[k] as number]) + (pieces[k + 1] as string);
      const deliveryId = idSlot >= 0 ? String(values[idSlot]) : (described.deliveryId ?? provider.newDeliveryId());
      return { rawBody: Buffer.from(out), deliveryId, eventType: described.eventType };
    },
  };
}

/** One event from a fixture: fresh ids and timestamps, then the user's overrides. */
export function prepareEvent(
  provider: Provider,
  fixture: Fixture,
  overrides: readonly FieldOverride[],
  nowMs: number,
  eventName?: string,
): PreparedEvent {
  return compileFixture(provider, fixture, overrides, eventName).make(nowMs);
}

function setPath(body: JsonObject, path: readonly (string | number)[], value: JsonValue): void {
  let node: JsonValue = body;
  for (let i = 0; i < path.length - 1; i++) node = (node as Record<string | number, JsonValue>)[path[i] as string] as JsonValue;
  (node as Record<string | number, JsonValue>)[path[path.length - 1] as string] = value;
}
