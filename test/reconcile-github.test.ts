import { test } from 'node:test';
import assert from 'node:assert/strict';
import { generateKeyPairSync, createVerify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { hookdrill } from './helpers/cli.js';
import { startGithubApi } from './helpers/github-api.js';
import type { GithubDelivery } from './helpers/github-api.js';
import { startListen, stopAll } from './helpers/listen.js';
import { reply, startServer } from './helpers/server.js';
import { tempDir } from './helpers/tmp.js';

const TOKEN = 'ghp_Reconcile0000000000000000000000000abcd';
const HOOK = '/repos/acme/shop/hooks/7';
const now = Math.floor(Date.now() / 1000);
const guid = (i: number) => `0e5a${String(i).padStart(4, '0')}-b361-11eb-836d-0e4f3503ccbe`;

/** 600 events in the last 100 minutes; every 50th failed first and was redelivered; 400 older ones. */
function deliveries(): GithubDelivery[] {
  const out: GithubDelivery[] = [];
  for (let i = 0; i < 600; i++) {
    const base = {
      guid: guid(i),
      event: i % 3 ? 'issues' : 'push',
      action: i % 3 ? 'opened' : null,
      payload: { ...(i % 3 ? { action: 'opened' } : {}), n: i, sender: { login: 'octocat' } },
    };
    if (i % 50 === 0) {
      out.push({ ...base, at: now - 6_000 + i * 10, statusCode: 502 });
      out.push({ ...base, at: now - 6_000 + i * 10 + 5, statusCode: 200 });
    } else out.push({ ...base, at: now - 6_000 + i * 10, statusCode: i % 97 === 1 ? 0 : 200 });
  }
  for (let i = 0; i < 400; i++)
    out.push({ guid: `old-${i}`, event: 'push', action: null, at: now - 3 * 3600 - i, statusCode: 200, payload: {} });
  return out;
}
const MISSING = new Set([guid(3), guid(50), guid(98), guid(599)]);
const DEAD = new Set([guid(10)]);

async function inboxWithout(missing: Set<string>): Promise<string> {
  const path = join(tempDir(), 'inbox.db');
  const inbox = openSqliteInbox(path);
  for (let i = 0; i < 600; i++) {
    if (missing.has(guid(i))) continue;
    await inbox.put({
      source: 'github',
      deliveryId: guid(i),
      eventType: 'issues.opened',
      body: Buffer.from('{}'),
      headers: {},
      receivedAt: Date.now(),
    });
  }
  const rows = await inbox.claim({ limit: 1_000, leaseMs: 60_000 });
  await inbox.settle(
    rows.map((r) =>
      DEAD.has(r.deliveryId) ? { key: r, fence: r.fence, outcome: 'dead', error: 'crm down' } : { key: r, fence: r.fence, outcome: 'done' },
    ),
  );
  await inbox.close();
  return path;
}

const args = (api: string, ...more: string[]) => [
  'reconcile',
  '--provider',
  'github',
  '--repo',
  'acme/shop',
  '--hook-id',
  '7',
  '--since',
  '2h',
  '--api-base',
  api,
  ...more,
];

test('reconcile github: a repository hook over many cursor pages (one rate-limited) — exactly the missing guids, redeliveries counted once, paging stops at --since', async () => {
  // Served under /api/v3, as GitHub Enterprise serves it: the base's path is kept.
  const api = await startGithubApi({
    token: TOKEN,
    hookPath: `/api/v3${HOOK}`,
    deliveries: deliveries(),
    rateLimitOn: [2],
    secondaryOn: [5],
  });
  try {
    const inbox = await inboxWithout(MISSING);
    const junit = join(tempDir(), 'reconcile.xml');
    const r = await hookdrill([...args(`${api.url}/api/v3`, '--inbox', inbox, '--json', '--junit', junit)], { GITHUB_TOKEN: TOKEN });
    assert.equal(r.code, 1, r.stderr);
    const result = JSON.parse(r.stdout) as {
      sent: number;
      held: number;
      missing: { id: string; type: string; status: string }[];
      dead: { id: string }[];
      hook: string;
    };
    assert.equal(result.sent, 600, 'one event per guid, however many attempts');
    assert.deepEqual(new Set(result.missing.map((e) => e.id)), MISSING);
    assert.deepEqual(new Set(result.dead.map((e) => e.id)), DEAD);
    assert.equal(result.missing.find((e) => e.id === guid(50))?.status, 'OK', 'the newest attempt (the redelivery) says how it went');
    assert.equal(result.missing.find((e) => e.id === guid(98))?.type, 'issues.opened');
    assert.equal(result.missing.find((e) => e.id === guid(99))?.type, undefined);
    assert.equal(result.hook, 'repo acme/shop hook 7');
    assert.deepEqual(api.rateLimited, [2, 5], 'the primary and the secondary rate limit were met and waited out');
    // 612 attempts in range = 7 pages, + the first page reaching past --since, + two rate-limited retries; never the 400 older ones' pages.
    assert.ok(api.requests() <= 10, `stopped paging at --since (${api.requests()} requests)`);
    const xml = readFileSync(junit, 'utf8');
    assert.match(xml, /<testsuite name="hookdrill reconcile github" tests="6" failures="4"/);
    assert.match(xml, new RegExp(`name="push ${guid(3)}"[^]*?type="missing"`));
    assert.doesNotMatch(r.stdout + r.stderr + xml, /ghp_Reconcile/);

    const pushes = await hookdrill([...args(`${api.url}/api/v3`, '--inbox', inbox, '--type', 'push', '--json')], { GITHUB_TOKEN: TOKEN });
    const p = JSON.parse(pushes.stdout) as { sent: number; missing: { id: string }[] };
    assert.equal(p.sent, 200, '--type push: the push events only');
    assert.deepEqual(
      p.missing.map((e) => e.id),
      [guid(3)],
    );

    const failedOnly = await hookdrill([...args(`${api.url}/api/v3`, '--inbox', inbox, '--only-failed', '--json')], {
      GITHUB_TOKEN: TOKEN,
    });
    const f = JSON.parse(failedOnly.stdout) as { sent: number; missing: { id: string }[] };
    // status=failure: the first attempts of every 50th (redelivered) and the 0-status ones.
    assert.equal(f.sent, 12 + 7);
    assert.deepEqual(new Set(f.missing.map((e) => e.id)), new Set([guid(50), guid(98)]));
  } finally {
    await api.close();
  }
});

test('reconcile github --fix: payloads fetched for the missing ones only (one gone meanwhile: said, the rest still fixed), listen forwards each once, a second reconcile finds only the gone one', async () => {
  const api = await startGithubApi({ token: TOKEN, hookPath: HOOK, deliveries: deliveries(), gone: [guid(599)] });
  const app = await startServer((_req, res) => reply(res, 200, 'ok'));
  const inbox = await inboxWithout(MISSING);
  const { p: listen } = await startListen(inbox, 'gh-secret', '--provider', 'github', '--forward-to', app.url);
  try {
    const fixed = await hookdrill([...args(api.url, '--inbox', inbox, '--fix', '--json')], { GITHUB_TOKEN: TOKEN });
    assert.equal(fixed.code, 1, fixed.stderr);
    const result = JSON.parse(fixed.stdout) as { fixed: number; unfetched: { id: string; error: string }[] };
    assert.equal(result.fixed, MISSING.size - 1);
    assert.deepEqual(
      result.unfetched.map((u) => u.id),
      [guid(599)],
    );
    assert.match(result.unfetched[0]?.error ?? '', /answered 404: Not Found/);
    assert.equal(api.detailFetches.length, MISSING.size - 1, 'a payload request per missing event, none for the held ones');
    for (let i = 0; app.requests.length < MISSING.size - 1; i++) {
      if (i > 200) assert.fail(`forwarded ${app.requests.length} of ${MISSING.size - 1}`);
      await new Promise((r) => setTimeout(r, 25));
    }
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(app.requests.length, MISSING.size - 1, 'each processed once');
    const push = app.requests.find((r) => r.headers['x-hookdrill-delivery-id'] === guid(3));
    assert.ok(push, 'the missing guid was forwarded under its own id');
    assert.deepEqual(JSON.parse(push.rawBody.toString()), { n: 3, sender: { login: 'octocat' } });
    const again = await hookdrill([...args(api.url, '--inbox', inbox, '--json')], { GITHUB_TOKEN: TOKEN });
    assert.equal(again.code, 1, again.stdout);
    assert.deepEqual(
      (JSON.parse(again.stdout) as { missing: { id: string }[] }).missing.map((e) => e.id),
      [guid(599)],
    );
  } finally {
    await stopAll(listen);
    await app.close();
    await api.close();
  }
});

test('reconcile github --redeliver-to: signed as GitHub signs, verified and stored by listen; --dry-run sends nothing; a receiver that refuses fails the run', async () => {
  const api = await startGithubApi({ token: TOKEN, hookPath: HOOK, deliveries: deliveries() });
  const held = await inboxWithout(MISSING);
  const target = join(tempDir(), 'target.db');
  const { p: listen, url } = await startListen(target, 'gh-secret', '--provider', 'github');
  const refusing = await startServer((_req, res) => reply(res, 500, 'no'));
  try {
    const dry = await hookdrill([...args(api.url, '--inbox', held, '--redeliver-to', url, '--secret', 'gh-secret', '--dry-run')], {
      GITHUB_TOKEN: TOKEN,
    });
    assert.equal(dry.code, 1, dry.stderr);
    assert.match(dry.stdout, /--dry-run: 4 missing events would be signed and delivered; nothing sent/);
    const sent = await hookdrill([...args(api.url, '--inbox', held, '--redeliver-to', url, '--secret', 'gh-secret', '--json')], {
      GITHUB_TOKEN: TOKEN,
    });
    const result = JSON.parse(sent.stdout) as { redelivered: { summary: { events: number }; failed: unknown[] } };
    assert.equal(result.redelivered.summary.events, 4);
    assert.deepEqual(result.redelivered.failed, [], sent.stderr);
    assert.doesNotMatch(sent.stdout + sent.stderr, /gh-secret|ghp_Reconcile/);
    await stopAll(listen);
    const target_ = openSqliteInbox(target);
    const rows = await target_.select({}, { limit: 100 });
    await target_.close();
    assert.deepEqual(new Set(rows.map((r) => r.deliveryId)), MISSING, 'listen verified each signature and stored it under its guid');
    assert.equal(rows.find((r) => r.deliveryId === guid(98))?.eventType, 'issues.opened');

    const failing = await hookdrill([...args(api.url, '--inbox', held, '--redeliver-to', refusing.url, '--secret', 'gh-secret')], {
      GITHUB_TOKEN: TOKEN,
    });
    assert.equal(failing.code, 1);
    assert.match(failing.stdout, /REDELIVERY FAILED 0 of 4 missing events/);
  } finally {
    await stopAll(listen);
    await refusing.close();
    await api.close();
  }
});

test('reconcile github --app --app-id: a JWT made from the private key and signed RS256; bad input and a bad token are one line, exit 2, never the token', async () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const seen: { iss?: string; alg?: string }[] = [];
  const api = await startGithubApi({
    token: '',
    hookPath: '/app/hook',
    deliveries: deliveries().slice(0, 20),
    acceptToken: (jwt) => {
      const [h, p, s] = jwt.split('.');
      if (!h || !p || !s) return false;
      const ok = createVerify('RSA-SHA256').update(`${h}.${p}`).verify(publicKey, Buffer.from(s, 'base64url'));
      const claims = JSON.parse(Buffer.from(p, 'base64url').toString()) as { iss: string; exp: number; iat: number };
      seen.push({ iss: claims.iss, alg: (JSON.parse(Buffer.from(h, 'base64url').toString()) as { alg: string }).alg });
      // GitHub refuses a JWT that expires more than 10 minutes after it was issued.
      return ok && claims.exp > Date.now() / 1000 && claims.iat <= Date.now() / 1000 && claims.exp - claims.iat <= 600;
    },
  });
  try {
    const stored = join(tempDir(), 'ids.txt');
    const { writeFileSync } = await import('node:fs');
    writeFileSync(stored, '');
    const base = [
      'reconcile',
      '--provider',
      'github',
      '--app',
      '--since',
      '2h',
      '--api-base',
      api.url,
      '--stored',
      `cat ${stored}`,
      '--json',
    ];
    const r = await hookdrill([...base, '--app-id', '12345'], { GITHUB_APP_PRIVATE_KEY: pem });
    assert.equal(r.code, 1, r.stderr);
    assert.ok((JSON.parse(r.stdout) as { sent: number }).sent > 0);
    assert.deepEqual(seen[0], { iss: '12345', alg: 'RS256' });
    assert.doesNotMatch(r.stdout + r.stderr, /PRIVATE KEY/);

    // The private key where a token belongs (no --app-id): refused by name, never printed (fetch would quote it whole).
    const pemAsToken = await hookdrill(base, { GITHUB_TOKEN: pem });
    assert.equal(pemAsToken.code, 2);
    assert.equal(pemAsToken.stderr.trim().split('\n').length, 1, pemAsToken.stderr);
    assert.match(pemAsToken.stderr, /GITHUB_TOKEN holds spaces, line breaks .* give --app-id/);
    assert.doesNotMatch(pemAsToken.stderr + pemAsToken.stdout, /PRIVATE KEY|MII/);
    const wrong = await hookdrill(base, { GITHUB_TOKEN: 'ghp_NotAJwt000000000000000000000000000wxyz' });
    assert.equal(wrong.code, 2);
    assert.match(wrong.stderr, /the GitHub API answered 401: Bad credentials/);
    assert.doesNotMatch(wrong.stderr, /ghp_NotAJwt/);
    for (const [bad, message] of [
      [
        ['reconcile', '--provider', 'github', '--since', '2h', '--stored', 'true'],
        /--repo OWNER\/NAME --hook-id N, --org NAME --hook-id N, or --app/,
      ],
      [['reconcile', '--provider', 'github', '--repo', 'acme/shop', '--since', '2h', '--stored', 'true'], /--repo needs --hook-id/],
      [
        ['reconcile', '--provider', 'github', '--repo', 'acme', '--hook-id', '7', '--since', '2h', '--stored', 'true'],
        /expected OWNER\/NAME/,
      ],
      [
        ['reconcile', '--provider', 'github', '--app', '--app-id', '1', '--since', '2h', '--stored', 'true'],
        /GITHUB_APP_PRIVATE_KEY is not set/,
      ],
      [['reconcile', '--provider', 'stripe', '--repo', 'acme/shop', '--since', '2h', '--stored', 'true'], /not for --provider stripe/],
      [
        ['reconcile', '--provider', 'github', '--app', '--since', '2h', '--stored', 'true', '--redeliver-to', 'http://127.0.0.1:1/'],
        /a secret is required/,
      ],
      [
        [
          'reconcile',
          '--provider',
          'github',
          '--app',
          '--since',
          '2h',
          '--inbox',
          'x.db',
          '--fix',
          '--redeliver-to',
          'http://127.0.0.1:1/',
        ],
        /choose one/,
      ],
    ] as const) {
      const out = await hookdrill([...bad], { GITHUB_TOKEN: TOKEN, GITHUB_APP_PRIVATE_KEY: '' });
      assert.equal(out.code, 2, `${bad.join(' ')}: ${out.stderr}`);
      assert.equal(out.stderr.trim().split('\n').length, 1, out.stderr);
      assert.match(out.stderr, message);
    }
  } finally {
    await api.close();
  }
});
