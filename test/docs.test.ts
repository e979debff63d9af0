import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
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

test("every `npm run X` the README and docs/ give names a script of package.json, and the README's first command runs the checkout as it is", () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
  const pages = [
    'README.md',
    ...readdirSync(join(ROOT, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];
  pages.push(...readdirSync(join(ROOT, 'docs', 'commands')).map((f) => `docs/commands/${f}`));
  const missing: string[] = [];
  for (const page of pages)
    for (const [, name] of readFileSync(join(ROOT, page), 'utf8').matchAll(/npm run ([\w:-]+)/g))
      if (!(name && name in pkg.scripts)) missing.push(`${page}: npm run ${name}`);
  assert.deepEqual(missing, []);
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const first = /```sh\n([^\n]+)\n/.exec(readme)?.[1];
  assert.equal(first, 'npm install && npm run demo');
  // No npx in it: inside the clone, npx installs the folder as a package and builds it again.
  assert.equal(pkg.scripts.demo, 'node bin/hookdrill demo');
});

test('figures the docs state that the program knows: the catalogue counts of fixtures.md, and the size of the page ui.md gives', () => {
  const table = readFileSync(join(ROOT, 'docs/commands/fixtures.md'), 'utf8');
  const stated = (name: string) => {
    const cell = new RegExp(`^\\| ${name} \\| ([\\d +]+?)(?: thin)? \\|`, 'm').exec(table)?.[1] ?? '';
    return cell.split('+').reduce((a, b) => a + Number(b.trim()), 0);
  };
  const counted = (file: string) =>
    (JSON.parse(readFileSync(join(ROOT, 'dist/catalogue', file), 'utf8')) as { events: unknown[] }).events.length;
  assert.equal(stated('Stripe'), counted('stripe.json'));
  assert.equal(stated('GitHub'), counted('github.json'));
  assert.equal(stated('Slack'), counted('slack.json'));
  assert.equal(stated('Svix, Standard Webhooks'), counted('svix.json'));
  assert.equal(stated('Shopify'), counted('shopify.json'));
  const ui = readFileSync(join(ROOT, 'docs/commands/ui.md'), 'utf8');
  const kb = Number(/one stylesheet, (\d+) KB in all/.exec(ui)?.[1]);
  const bytes = readdirSync(join(ROOT, 'ui')).reduce((n, f) => n + readFileSync(join(ROOT, 'ui', f)).length, 0);
  assert.equal(kb, Math.round(bytes / 1000), `ui/ is ${bytes} bytes: say ${Math.round(bytes / 1000)} KB in ui.md`);
});

test("the defaults listen.md's prose states are --help's, rewritten by npm run docs (it said --backoff-base 1s and 8 attempts when they were 5s and 14)", async () => {
  const { COMMANDS } = await import('../src/cli/registry.js');
  const { helpDefault } = await import('../src/cli/docs.js');
  const listen = COMMANDS.find((c) => c.name === 'listen');
  assert.ok(listen);
  const page = readFileSync(join(ROOT, 'docs/commands/listen.md'), 'utf8');
  for (const flag of ['--backoff-base', '--backoff-max', '--max-attempts']) {
    const stated = new RegExp(`<!-- default ${flag} -->([^<]*)<!-- /default -->`).exec(page)?.[1];
    assert.equal(stated, helpDefault(listen, flag), `${flag}: listen.md states ${stated}`);
    assert.ok(stated);
  }
  assert.doesNotMatch(page, /`--backoff-base 1s`|`--max-attempts` \(8\)/);
});

test('--public-url names the providers that sign the URL, from their own descriptions (Twilio since hookdrill speaks it)', async () => {
  const { providers } = await import('../src/providers/index.js');
  const { hookdrill } = await import('./helpers/cli.js');
  const bound = Object.values(providers)
    .filter((p) => p.urlBound)
    .map((p) => p.title);
  const { URL_BOUND_TITLES } = await import('../src/cli/flags/public-url.js');
  assert.deepEqual([...URL_BOUND_TITLES].sort(), [...bound].sort(), "public-url.ts's list is the providers' own (urlBound)");
  for (const command of ['send', 'check', 'listen']) {
    // The option's help, up to the next option's line.
    const help = (await hookdrill([command, '--help'])).stdout;
    const line = (/ {2}--public-url <url>([\s\S]*?)\n {2}-/.exec(help)?.[1] ?? '').replace(/\s+/g, ' ');
    for (const title of bound) assert.match(line, new RegExp(title), `${command} --help names ${title}`);
  }
});
