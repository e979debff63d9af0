import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { hookdrill } from './helpers/cli.js';
import { startListenFor, stopAll } from './helpers/listen.js';
import { spawnHookdrill } from './helpers/spawned.js';
import type { Spawned } from './helpers/spawned.js';
import { startGithubApi } from './helpers/github-api.js';
import type { GithubDelivery } from './helpers/github-api.js';
import { tempDir } from './helpers/tmp.js';
import { until } from './helpers/until.js';

const TOKEN = 'ghp_PullTest0000000000000000000000000000';
const SECRET = 'github-pull-secret';
const ENV = { GITHUB_TOKEN: TOKEN };
const HOOK = '/repos/acme/shop/hooks/7';

const delivery = (event: string, action: string | null, at = Math.floor(Date.now() / 1000), statusCode = 0): GithubDelivery => ({
  guid: randomUUID(),
  event,
  action,
  at,
  // The hook may point at an address that does not answer: GitHub records the delivery all the same.
  statusCode,
  payload: { action, number: Math.floor(Math.random() * 1000), repository: { full_name: 'acme/shop' } },
});

const stored = (listen: Spawned) =>
  listen.lines.filter((l) => l.event === 'request' && l.result === 'stored').map((l) => String(l.deliveryId));

function pullArgs(api: string, state: string, ...more: string[]): string[] {
  return ['pull', '--provider', 'github', '--api-base', api, '--repo', 'acme/shop', '--hook-id', '7', '--state', state, '--json', ...more];
}

test("pull --follow (GitHub): a hook's new deliveries reach a real listen once each, in order, verified; redeliveries and what came before the start are not sent", async () => {
  const before = [delivery('issues', 'opened'), delivery('push', null)];
  const api = await startGithubApi({ token: TOKEN, hookPath: HOOK, deliveries: before });
  const dir = tempDir();
  const { p: listen, url } = await startListenFor('github', join(dir, 'inbox.db'), SECRET);
  const pull = spawnHookdrill(
    pullArgs(api.url, join(dir, 's.json'), '--to', url, '--secret', SECRET, '--follow', '--interval', '200ms'),
    ENV,
  );
  try {
    await pull.waitFor((l) => l.event === 'start', 15_000);
    const expected: GithubDelivery[] = [];
    for (let i = 0; i < 12; i++) {
      const d = delivery(i % 3 ? 'pull_request' : 'issues', i % 2 ? 'opened' : 'closed');
      api.add(d);
      expected.push(d);
      if (i === 5) api.add({ ...(expected[0] as GithubDelivery), redelivery: true }); // someone pressed "Redeliver"
      await new Promise((r) => setTimeout(r, 60));
    }
    await until(() => stored(listen).length >= expected.length, `${expected.length} stored`);
    await new Promise((r) => setTimeout(r, 600));
    assert.deepEqual(
      stored(listen),
      expected.map((d) => d.guid),
      'each once, in the order GitHub recorded them',
    );
    assert.equal(
      listen.lines.filter((l) => l.event === 'request' && l.result !== 'stored').length,
      0,
      'no duplicate, no rejected signature',
    );
    const types = listen.lines.filter((l) => l.event === 'request').map((l) => l.eventType);
    assert.deepEqual(
      types,
      expected.map((d) => `${d.event}.${d.action}`),
      'X-GitHub-Event and the payload’s action, as GitHub sends them',
    );
  } finally {
    pull.child.kill('SIGINT');
    const code = await pull.exit;
    await stopAll(listen);
    await api.close();
    assert.equal(code, 0, pull.stderr());
  }
  const summary = pull.lines.find((l) => l.event === 'summary');
  assert.equal(summary?.delivered, 12);
});

test('pull --to-inbox (GitHub) --since --type: the matching deliveries of the last hours into the inbox; a restart adds only what is new', async () => {
  const now = Math.floor(Date.now() / 1000);
  const old = Array.from({ length: 150 }, (_, i) =>
    delivery(i % 2 ? 'issues' : 'push', i % 2 ? 'opened' : null, now - 7_200 + i * 10, 200),
  );
  const api = await startGithubApi({ token: TOKEN, hookPath: HOOK, deliveries: old });
  const dir = tempDir();
  const inbox = join(dir, 'inbox.db');
  openSqliteInbox(inbox).close();
  const args = pullArgs(api.url, join(dir, 's.json'), '--to-inbox', inbox, '--type', 'issues');
  try {
    const first = await hookdrill([...args, '--since', '3h'], ENV);
    assert.equal(first.code, 0, first.stderr);
    assert.equal(JSON.parse(first.stdout.trim().split('\n').at(-1) as string).stored, 75, 'the issues deliveries, over two pages');
    api.add(delivery('issues', 'closed', now, 200), delivery('push', null, now, 200));
    const second = await hookdrill(args, ENV);
    assert.equal(JSON.parse(second.stdout.trim().split('\n').at(-1) as string).stored, 1);
    const db = openSqliteInbox(inbox);
    const rows = await db.select({}, { limit: 500 });
    await db.close();
    assert.equal(rows.length, 76);
    assert.ok(rows.every((r) => r.source === 'github' && r.eventType?.startsWith('issues.') && r.headers['x-hookdrill-origin'] === 'pull'));
    assert.ok(
      rows.every((r) => !Object.keys(r.headers).some((h) => h.startsWith('x-hub-signature'))),
      "GitHub's signatures are not kept",
    );
  } finally {
    await api.close();
  }
});

test('pull (GitHub): a primary rate limit is waited out and said; a bad token, an unknown hook, a Link loop and an API that never answers are one line, exit 2', async () => {
  const api = await startGithubApi({
    token: TOKEN,
    hookPath: HOOK,
    deliveries: [delivery('issues', 'opened', undefined, 200)],
    rateLimitOn: [1],
  });
  const dir = tempDir();
  const inbox = join(dir, 'inbox.db');
  openSqliteInbox(inbox).close();
  try {
    const limited = await hookdrill(pullArgs(api.url, join(dir, 'a.json'), '--to-inbox', inbox, '--since', '1h'), ENV);
    assert.equal(limited.code, 0, limited.stderr);
    assert.match(limited.stdout, /the GitHub API answered 403 \(rate limit\): waiting \d+ s, until/);
    assert.equal(JSON.parse(limited.stdout.trim().split('\n').at(-1) as string).stored, 1);

    const bad = await hookdrill(pullArgs(api.url, join(dir, 'b.json'), '--to-inbox', inbox), {
      GITHUB_TOKEN: 'ghp_revoked000000000000000000000000000',
    });
    assert.equal(bad.code, 2);
    assert.equal(bad.stderr.trim(), 'hookdrill: the GitHub API answered 401: Bad credentials');
    const unknown = await hookdrill(
      [
        'pull',
        '--provider',
        'github',
        '--api-base',
        api.url,
        '--repo',
        'acme/shop',
        '--hook-id',
        '8',
        '--to-inbox',
        inbox,
        '--state',
        join(dir, 'c.json'),
      ],
      ENV,
    );
    assert.equal(unknown.code, 2);
    assert.equal(unknown.stderr.trim(), 'hookdrill: the GitHub API answered 404: Not Found');
  } finally {
    await api.close();
  }
  for (const [fault, message] of [
    ['loop', /the GitHub API pointed back to a page it had already given \(cursor v1_\d+\): stopped rather than loop/],
    ['hang', /the GitHub API at http:\/\/127\.0\.0\.1:\d+ did not answer within 1 s \(3 tries\)/],
  ] as const) {
    const many = Array.from({ length: 120 }, () => delivery('issues', 'opened', undefined, 200));
    const broken = await startGithubApi({ token: TOKEN, hookPath: HOOK, deliveries: many, fault: () => fault });
    const r = await hookdrill(
      pullArgs(broken.url, join(dir, `${fault}.json`), '--to-inbox', inbox, '--since', '1h', '--api-timeout', '1s'),
      ENV,
    );
    await broken.close();
    assert.equal(r.code, 2, `${fault}: ${r.stderr}`);
    assert.match(r.stderr, message);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  }
});
