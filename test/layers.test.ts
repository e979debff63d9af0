import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/*
 * The layering, checked on the compiled code (type-only imports are gone there, so what is left
 * is what runs): the CLI and the commands sit on top; nothing below them imports them back.
 */
const SRC = fileURLToPath(new URL('../src/', import.meta.url));
const TOP = ['cli.js', 'cli/', 'commands/', 'index.js'];

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? files(join(dir, e.name)) : e.name.endsWith('.js') ? [join(dir, e.name)] : [],
  );
}

test('no module below the commands imports a command or the CLI', () => {
  const wrong: string[] = [];
  for (const file of files(SRC)) {
    const from = relative(SRC, file);
    if (TOP.some((t) => from === t || from.startsWith(t))) continue;
    for (const [, spec] of readFileSync(file, 'utf8').matchAll(
      /(?:^|\n)\s*(?:import|export)[^'"]*from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g,
    )) {
      if (!spec) continue;
      const to = relative(SRC, resolve(dirname(file), spec));
      if (TOP.some((t) => to === t || to.startsWith(t))) wrong.push(`${from} → ${to}`);
    }
  }
  assert.deepEqual(wrong, []);
});
