import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * The map of ARCHITECTURE.md, checked on the compiled code (type-only imports are gone there, so
 * what is left is what runs). Each top-level folder of src/ has a rank; a module imports only from
 * its own folder or from folders of a lower rank: the arrows run one way, down the pipeline.
 */
const SRC = fileURLToPath(new URL('../src/', import.meta.url));

const RANKS: Record<string, number> = {
  util: 0,
  providers: 1,
  remote: 1,
  inbox: 2,
  // A listen's routes (rules, patterns, matching): data the worker, the receiver and the project file read.
  routes: 2,
  fixtures: 3,
  harness: 3,
  delivery: 4,
  worker: 5,
  receiver: 6,
  // The engines of the commands: each independent of the others.
  check: 7,
  chaos: 7,
  demo: 7,
  incident: 7,
  pull: 7,
  reconcile: 7,
  scenario: 7,
  project: 7,
  verify: 7,
  render: 8,
  // The browser inspector: a page served over the incident engines.
  ui: 8,
  // The front doors: the CLI and the library.
  cli: 9,
  'cli.ts': 9,
  commands: 9,
  library: 9,
  'index.ts': 9,
};
const TOP = 9;

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : [],
  );
}

/** `check` for src/check/run.js, `cli.ts` for src/cli.js. */
function folderOf(rel: string): string {
  const [head, ...rest] = rel.split('/');
  return rest.length > 0 ? (head as string) : (head as string).replace(/\.js$/, '.ts');
}

const imports = (file: string) =>
  [
    ...readFileSync(file, 'utf8').matchAll(
      /(?:^|\n)\s*(?:import|export)[^'"]*from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g,
    ),
  ].map((m) => (m[1] ?? m[2]) as string);

test('every top-level folder of src/ is on the map, and every import runs down it', () => {
  const unmapped = new Set<string>();
  const wrong: string[] = [];
  for (const file of files(SRC)) {
    const from = relative(SRC, file);
    const a = folderOf(from);
    if (RANKS[a] === undefined) unmapped.add(a);
    for (const spec of imports(file)) {
      const to = relative(SRC, resolve(dirname(file), spec));
      const b = folderOf(to);
      if (a === b) continue;
      const ra = RANKS[a] ?? -1;
      const rb = RANKS[b] ?? Infinity;
      // The front doors may use one another (the CLI's registry lists the commands).
      if (ra === TOP && rb === TOP) continue;
      if (rb >= ra) wrong.push(`${from} → ${to} (${a} ${ra} may not import ${b} ${rb})`);
    }
  }
  assert.deepEqual([...unmapped], [], 'a folder missing from the map in ARCHITECTURE.md and RANKS');
  assert.deepEqual(wrong, []);
});

test('the engine never imports a command, a renderer or the CLI', () => {
  const up = ['cli', 'cli.ts', 'commands', 'render', 'library', 'index.ts'];
  const wrong: string[] = [];
  for (const file of files(SRC)) {
    const from = relative(SRC, file);
    if (up.includes(folderOf(from))) continue;
    for (const spec of imports(file)) {
      const to = relative(SRC, resolve(dirname(file), spec));
      if (up.includes(folderOf(to))) wrong.push(`${from} → ${to}`);
    }
  }
  assert.deepEqual(wrong, []);
});

test('the map in ARCHITECTURE.md names every folder of src/', () => {
  const map = readFileSync(fileURLToPath(new URL('../../ARCHITECTURE.md', import.meta.url)), 'utf8');
  const folders = readdirSync(SRC, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
  const missing = folders.filter((f) => !map.includes(`src/${f}/`));
  assert.deepEqual(missing, []);
});
