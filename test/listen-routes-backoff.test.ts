import { test } from 'node:test';
import assert from 'node:assert/strict';
import { BACKENDS } from './helpers/backends.js';
import { hookdrill } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { spawnHookdrill } from './helpers/spawned.js';
import { tempDir } from './helpers/tmp.js';
import { until } from './helpers/until.js';
import { ROUTE_SECRETS, nodeTarget, pythonTarget, writeRoutesConfig } from './helpers/routes.js';

type Line = Record<string, unknown>;

/**
 * Issue 56: a route whose service hangs (or answers 503) must not hold back the other routes' rows. The CI service
 * (test/receivers/route_target.py in hang mode: it takes each request and never answers) holds
 * every forward until listen's 5 s forward timeout; with 4 forwards at once, without a backoff
 * per route the CI rows take every slot and billing's rows wait behind them. Proved by counting
 * what the CI service held at once, not by timing.
 */
const CASES = [
  { mode: 'hang', says: 'hangs' },
  // A service that answers 503 fails fast and often: enough attempts that none is buried while it does.
  { mode: '503', says: 'answers 503' },
] as const;

for (const backend of BACKENDS)
  for (const { mode, says } of CASES) {
    test(`${backend.name}: a route whose service ${says} holds one forward at a time; the other route's rows all flow; its rows wait with their attempts unspent and go once it answers`, {
      timeout: 240_000,
    }, async (t) => {
      const missing = await backend.missing();
      if (missing) return t.skip(missing);
      const dir = tempDir();
      const inbox = backend.target();
      const billing = await nodeTarget();
      const ci = await pythonTarget(await freePort(), dir, mode);
      const support = await nodeTarget();
      t.after(() => Promise.all([billing.close(), ci.close(), support.close()]));
      writeRoutesConfig(dir, { billing: billing.url.replace(/\/$/, ''), ci: ci.url, support: support.url.replace(/\/$/, '') });
      const listen = spawnHookdrill(
        [
          'listen',
          '--json',
          '--port',
          '0',
          '--inbox',
          inbox.url,
          '--concurrency',
          '4',
          '--forward-timeout',
          '5s',
          '--backoff-base',
          '200ms',
          '--backoff-max',
          '400ms',
          ...(mode === '503' ? ['--max-attempts', '1000'] : []),
        ],
        ROUTE_SECRETS,
        [],
        dir,
      );
      t.after(async () => {
        listen.child.kill('SIGTERM');
        const timer = setTimeout(() => listen.child.kill('SIGKILL'), 20_000);
        const code = await listen.exit;
        clearTimeout(timer);
        await inbox.drop();
        assert.notEqual(listen.child.signalCode, 'SIGKILL', `listen did not stop on SIGTERM (exit ${code}): ${listen.stderr()}`);
      });
      const ready = await listen.waitFor((l) => l.event === 'ready', 30_000);
      const url = (p: string) => (ready.providers as { provider: string; url: string }[]).find((m) => m.provider === p)?.url ?? '';
      // 20 CI rows and 20 billing rows, sent at once: interleaved in the inbox.
      const sends = await Promise.all([
        hookdrill(
          [
            'send',
            'github/workflow_run.completed',
            '--provider',
            'github',
            '--secret',
            ROUTE_SECRETS.GITHUB_WEBHOOK_SECRET,
            '--url',
            url('github'),
            '--count',
            '20',
            '--rate',
            '20/s',
            '--no-retry',
          ],
          {},
          [],
          dir,
          60_000,
        ),
        hookdrill(
          [
            'send',
            'stripe/invoice.paid',
            '--provider',
            'stripe',
            '--secret',
            ROUTE_SECRETS.STRIPE_WEBHOOK_SECRET,
            '--url',
            url('stripe'),
            '--count',
            '20',
            '--rate',
            '20/s',
            '--no-retry',
          ],
          {},
          [],
          dir,
          60_000,
        ),
      ]);
      for (const r of sends) assert.equal(r.code, 0, r.stdout + r.stderr);
      const stored = listen.lines.filter((l) => l.event === 'request' && l.result === 'stored');
      assert.equal(stored.length, 40);
      const ciIds = stored
        .filter((l) => l.source === 'github')
        .map((l) => String(l.deliveryId))
        .sort();

      // Every billing row forwarded while the CI service hangs, and it never held more than one.
      await until(() => billing.got().length === 20, 'every billing row forwarded', 120_000);
      assert.ok(ci.requests() >= 1, 'the CI service was tried');
      assert.equal(ci.mostHeld(), 1, `the CI service held ${ci.mostHeld()} forwards at once: the failing route took slots from the others`);
      const processed = (p: (l: Line) => boolean) => listen.lines.filter((l) => l.event === 'processed' && p(l));
      assert.equal(processed((l) => l.source === 'stripe' && l.outcome !== 'done').length, 0, 'a billing row failed or was retried');
      await until(
        () => listen.lines.some((l) => l.event === 'route' && l.route === 'ci' && l.state === 'paused'),
        'the CI route paused',
        30_000,
      );
      const metrics = await (await fetch(`${String(ready.url)}metrics`, { signal: AbortSignal.timeout(15_000) })).text();
      assert.match(metrics, /hookdrill_route_paused\{provider="github",route="ci"\} 1/);

      // Back up, answering: every CI row forwarded, none dead, and only tried rows spent attempts.
      await ci.kill();
      await ci.restart('ok');
      await until(() => new Set(ci.got().map((g) => g.deliveryId)).size === 20, 'every CI row forwarded once the service answers', 150_000);
      assert.deepEqual([...new Set(ci.got().map((g) => g.deliveryId))].sort(), ciIds);
      assert.equal(processed((l) => l.outcome === 'dead').length, 0, 'a row was buried');
      await until(
        () => listen.lines.some((l) => l.event === 'route' && l.route === 'ci' && l.state === 'resumed'),
        'the CI route resumed',
        30_000,
      );
      await until(() => processed((l) => l.source === 'github' && l.outcome === 'done').length === 20, 'every CI row done', 30_000);
      // Each failed forward spent one attempt of one row; a row that waited while its route was
      // paused spent none: the attempts the done rows record beyond their first are the failures.
      const failures = processed((l) => l.source === 'github' && l.outcome === 'retry').length;
      const extra = processed((l) => l.source === 'github' && l.outcome === 'done').reduce((n, l) => n + Number(l.attempt) - 1, 0);
      assert.equal(extra, failures);
      if (mode === 'hang') assert.ok(failures < 20, `${failures} failed forwards for 20 rows: paused rows were tried`);
      // A scrape is rendered at most once a second (metrics.ts): asked again until the new one comes.
      let after = '';
      await until(
        async () => {
          after = await (await fetch(`${String(ready.url)}metrics`, { signal: AbortSignal.timeout(15_000) })).text();
          return /hookdrill_route_paused\{provider="github",route="ci"\} 0/.test(after);
        },
        'the CI route shown resumed in /metrics',
        30_000,
      );
    });
  }
