import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { tempDir } from './helpers/tmp.js';

/**
 * The package as the registry would hand it over: `npm pack`'s tarball, unpacked into a fresh
 * project's node_modules, beside only the runtime dependencies package.json names (linked from this
 * checkout: no network, no second compile of better-sqlite3). A CommonJS project (npm init's
 * default) requires it; an ESM TypeScript project compiles against its types with skipLibCheck
 * off, with @types/node and nothing else, then runs.
 */

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
  files: string[];
};

/** A fresh project with the packed hookdrill and its runtime dependencies in node_modules. */
async function project(type: 'commonjs' | 'module', extra: string[] = []): Promise<string> {
  const dir = tempDir();
  const packed = tempDir();
  const { stdout } = await run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', packed], { cwd: ROOT });
  const filename = (JSON.parse(stdout) as { filename: string }[])[0]?.filename as string;
  const modules = join(dir, 'node_modules');
  mkdirSync(join(modules, 'hookdrill'), { recursive: true });
  await run('tar', ['-xzf', join(packed, filename), '-C', join(modules, 'hookdrill'), '--strip-components', '1']);
  for (const name of [...Object.keys(pkg.dependencies), ...extra]) {
    mkdirSync(join(modules, name, '..'), { recursive: true });
    symlinkSync(join(ROOT, 'node_modules', name), join(modules, name));
  }
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'a-users-project', version: '1.0.0', type }));
  return dir;
}

test('the packed tarball: require() from a CommonJS project works on Node 20, and it ships docs but no source maps or screenshots', async () => {
  const dir = await project('commonjs');
  const shipped = (d: string): string[] =>
    readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? shipped(join(d, e.name)) : [join(d, e.name)]));
  const files = shipped(join(dir, 'node_modules', 'hookdrill'));
  assert.deepEqual(
    files.filter((f) => f.endsWith('.map')),
    [],
    'no source maps in the tarball',
  );
  assert.ok(
    files.some((f) => f.endsWith('docs/commands/inspect.md')),
    "the README's links to docs/ resolve in the tarball",
  );
  // The screenshots are for the repository's pages (800 KB): a consumer's node_modules has no use for them.
  assert.deepEqual(
    files.filter((f) => f.includes('docs/images/')),
    [],
    'no docs/images in the tarball',
  );
  writeFileSync(
    join(dir, 'index.js'),
    `const { openInbox, verify } = require('hookdrill');
(async () => {
  const inbox = await openInbox(require('node:path').join(__dirname, 'inbox.db'));
  await inbox.put({ source: 'stripe', deliveryId: 'evt_cjs', eventType: 'invoice.paid', body: Buffer.from('{}'), headers: {}, receivedAt: Date.now() });
  const row = await inbox.get({ source: 'stripe', deliveryId: 'evt_cjs' });
  await inbox.close();
  console.log(row.status, typeof verify);
})();
`,
  );
  const { stdout, stderr } = await run(process.execPath, ['index.js'], { cwd: dir });
  assert.equal(stdout.trim(), 'pending function', stderr);
  const cli = await run(process.execPath, [join(dir, 'node_modules', 'hookdrill', 'bin', 'hookdrill'), 'profiles'], { cwd: dir });
  assert.match(cli.stdout, /stripe/);
});

test('the packed tarball: an ESM TypeScript project compiles against its types with skipLibCheck off (no dev-only types leak) and runs', async () => {
  const dir = await project('module', ['@types/node']);
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: false,
        outDir: 'out',
      },
      include: ['index.ts'],
    }),
  );
  writeFileSync(
    join(dir, 'index.ts'),
    `import { openSqliteInbox, inspect } from 'hookdrill';
import type { InspectResult } from 'hookdrill';
const inbox = openSqliteInbox(new URL('./inbox.db', import.meta.url).pathname);
await inbox.put({ source: 'stripe', deliveryId: 'evt_esm', eventType: 'invoice.paid', body: Buffer.from('{}'), headers: {}, receivedAt: Date.now() });
await inbox.close();
const r: InspectResult = await inspect({ inbox: new URL('./inbox.db', import.meta.url).pathname });
console.log(r.view === 'overview' ? r.overview.stats.total : -1);
`,
  );
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const compiled = await run(process.execPath, [tsc, '-p', dir]).catch((err: { stdout?: string }) => ({
    stdout: err.stdout ?? String(err),
    failed: true,
  }));
  assert.ok(!('failed' in compiled), `tsc: ${compiled.stdout}`);
  const { stdout } = await run(process.execPath, [join(dir, 'out', 'index.js')], { cwd: dir });
  assert.equal(stdout.trim(), '1');
});
