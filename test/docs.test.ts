import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT, expectedBlocks, stalePages } from '../src/cli/docs.js';
import { commandPaths } from '../src/cli/registry.js';

test('every command has a page in docs/commands/ whose flag table is the one --help shows (npm run docs)', () => {
  assert.deepEqual(stalePages(), [], 'run npm run docs');
  const blocks = expectedBlocks();
  for (const path of commandPaths()) {
    const page = `docs/commands/${path.split(' ')[0]}.md`;
    assert.ok(blocks.has(page), `no page for ${path}`);
    assert.match(blocks.get(page) ?? '', new RegExp(`\`hookdrill ${path}[ \`]`), `${path} missing from ${page}`);
  }
  // A flag that --help shows is on its page.
  assert.match(readFileSync(join(ROOT, 'docs/commands/chaos.md'), 'utf8'), /\| `--power-cut <dir>` \|/);
});

test('every relative link in the README and docs/ names a file that exists', () => {
  const pages = [
    'README.md',
    'ARCHITECTURE.md',
    'docs/README.md',
    'docs/library.md',
    'docs/inboxes.md',
    'docs/benchmarks.md',
    'docs/development.md',
  ];
  const all = [...pages, ...[...expectedBlocks().keys()]];
  const broken: string[] = [];
  for (const page of all) {
    const text = readFileSync(join(ROOT, page), 'utf8');
    for (const [, target] of text.matchAll(/\]\(([^)#\s]+)(?:#[^)]*)?\)/g)) {
      if (!target || /^[a-z]+:/.test(target)) continue;
      if (!existsSync(join(ROOT, page, '..', target))) broken.push(`${page} → ${target}`);
    }
  }
  assert.deepEqual(broken, []);
});
