import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { UsageError } from '../util/errors.js';
import { jsonPosition } from '../util/json-position.js';
import { FIXTURES_DIR } from '../fixtures/index.js';
import { PROVIDER_NAMES, knownProviderNames } from '../providers/names.js';
import type { JsonValue, ProviderName } from '../providers/types.js';

/**
 * A scenario: events that belong together (one subscription's signup, one invoice's retry), in the
 * order the provider sends them, sharing ids that are fresh on every run, and the state a correct
 * receiver ends in whatever order they arrive.
 */
export interface Scenario {
  name: string;
  description: string;
  provider: ProviderName;
  /** Fresh per run: "cus_*" (the * becomes random characters) or "int" (a random number). */
  vars: Record<string, string>;
  events: { fixture: string; set: Record<string, JsonValue> }[];
  /** What the --state command must print after every ordering, with {{var}} filled in. */
  expect: JsonValue;
}

export const SCENARIOS_DIR = join(FIXTURES_DIR, 'scenarios');

/** The shipped scenarios, as provider/name. */
export function listScenarios(): string[] {
  const out: string[] = [];
  for (const provider of PROVIDER_NAMES) {
    const dir = join(SCENARIOS_DIR, provider);
    if (!existsSync(dir)) continue;
    for (const f of readdirSync(dir)
      .filter((f) => f.endsWith('.json'))
      .sort())
      out.push(`${provider}/${f.slice(0, -5)}`);
  }
  return out;
}

/** A scenario file, or a shipped one by provider/name. Every fault is one line naming the field. */
export function loadScenario(ref: string): Scenario {
  const shipped = join(SCENARIOS_DIR, `${ref}.json`);
  const path = existsSync(ref) ? ref : /^[a-z]+\/[a-z0-9-]+$/.test(ref) && existsSync(shipped) ? shipped : undefined;
  if (!path) throw new UsageError(`no scenario ${ref}: give a scenario file, or one of ${listScenarios().join(', ')}`);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (err) {
    throw new UsageError(`scenario ${ref}: not valid JSON${jsonPosition(err)}`);
  }
  const bad = (what: string) => new UsageError(`scenario ${ref}: ${what}`);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw bad('expected an object');
  const s = raw as Record<string, unknown>;
  if (typeof s.provider !== 'string' || !knownProviderNames().includes(s.provider))
    throw bad(`"provider" must be one of ${knownProviderNames().join(', ')}`);
  const vars = s.vars ?? {};
  // Each var fresh on every run: a constant one would carry state over from one ordering to the next.
  if (
    typeof vars !== 'object' ||
    vars === null ||
    Array.isArray(vars) ||
    Object.values(vars).some((v) => typeof v !== 'string' || (v !== 'int' && !v.includes('*')))
  )
    throw bad('"vars" must map names to "prefix_*" (the * becomes fresh characters) or "int"');
  if (!Array.isArray(s.events) || s.events.length < 2) throw bad('"events" must list at least two events (one has no order to get wrong)');
  const events = s.events.map((e: unknown, i) => {
    const ev = e as { fixture?: unknown; set?: unknown };
    if (typeof ev?.fixture !== 'string') throw bad(`events[${i}].fixture must be a fixture name like stripe/invoice.paid`);
    if (ev.set !== undefined && (typeof ev.set !== 'object' || ev.set === null || Array.isArray(ev.set)))
      throw bad(`events[${i}].set must map field paths to values`);
    return { fixture: ev.fixture, set: (ev.set ?? {}) as Record<string, JsonValue> };
  });
  if (s.expect === undefined) throw bad('"expect" (the state every ordering must end in) is missing');
  const used = JSON.stringify([events, s.expect]).match(/\{\{(\w+)\}\}/g) ?? [];
  const unknown = [...new Set(used.map((u) => u.slice(2, -2)))].filter((name) => !(name in (vars as object)));
  if (unknown.length) throw bad(`{{${unknown[0]}}} is used but not declared in "vars"`);
  return {
    name: ref,
    description: typeof s.description === 'string' ? s.description : '',
    provider: s.provider as ProviderName,
    vars: vars as Record<string, string>,
    events,
    expect: s.expect as JsonValue,
  };
}

/** Fill {{var}} in a value: a string that is only "{{var}}" takes the var's own type (a number stays a number). */
export function fill(value: JsonValue, vars: Record<string, string | number>): JsonValue {
  if (typeof value === 'string') {
    const whole = /^\{\{(\w+)\}\}$/.exec(value);
    if (whole && (whole[1] as string) in vars) return vars[whole[1] as string] as string | number;
    return value.replace(/\{\{(\w+)\}\}/g, (m, name: string) => (name in vars ? String(vars[name]) : m));
  }
  if (Array.isArray(value)) return value.map((v) => fill(v, vars));
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, vars)]));
  return value;
}
