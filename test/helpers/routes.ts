import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PYTHON } from './python.js';
import { reply, startServer } from './server.js';

/** Secrets of the three providers one listen receives in the routes tests (never real ones). */
export const ROUTE_SECRETS = {
  STRIPE_WEBHOOK_SECRET: 'whsec_routes_test_stripe',
  GITHUB_WEBHOOK_SECRET: 'routes-test-github',
  SLACK_SIGNING_SECRET: 'routes-test-slack-signing',
};

/** What a target service got: the delivery ids and sources listen forwarded to it. */
export interface Target {
  url: string;
  got(): { source: string; deliveryId: string }[];
  close(): Promise<void>;
}

/** A target service in Node: 200 to every POST, each kept. */
export async function nodeTarget(): Promise<Target> {
  const s = await startServer((_req, res) => reply(res, 200, 'ok'));
  return {
    url: s.url,
    got: () =>
      s.requests.map((r) => ({
        source: String(r.headers['x-hookdrill-source']),
        deliveryId: decodeURIComponent(String(r.headers['x-hookdrill-delivery-id'])),
      })),
    close: () => s.close(),
  };
}

/** How the Python target answers: 200, never (it holds the request until the client gives up), or 503. */
export type TargetMode = 'ok' | 'hang' | '503';

const PY_TARGET = fileURLToPath(new URL('../../../test/receivers/route_target.py', import.meta.url));

/** A target service in Python (test/receivers/route_target.py) on a port of the test's choosing: killed and started again there. */
export async function pythonTarget(
  port: number,
  dir: string,
  mode: TargetMode = 'ok',
): Promise<Target & { kill(): Promise<void>; restart(mode?: TargetMode): Promise<void>; mostHeld(): number; requests(): number }> {
  const log = join(dir, `target-${port}.jsonl`);
  let child: ChildProcess | undefined;
  const start = async (m: TargetMode = mode) => {
    const c = spawn(PYTHON, [PY_TARGET, String(port), log, m], { stdio: ['ignore', 'pipe', 'inherit'] });
    child = c;
    await new Promise((ok, fail) => {
      c.stdout?.once('data', ok);
      c.once('exit', () => fail(new Error('the Python target exited before listening')));
    });
  };
  const kill = async () => {
    const c = child;
    // Gone already — exited, or killed by a signal (exitCode is null then): its 'exit' will not come again.
    if (!c || c.exitCode !== null || c.signalCode !== null) return;
    const exited = new Promise((r) => c.once('exit', r));
    c.kill('SIGKILL');
    await exited;
  };
  await start();
  // Every request it took, with how many it held at once at its arrival (route_target.py's LOGFILE.held).
  const held = () =>
    existsSync(`${log}.held`)
      ? readFileSync(`${log}.held`, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { deliveryId: string; held: number })
      : [];
  return {
    url: `http://127.0.0.1:${port}`,
    got: () =>
      existsSync(log)
        ? readFileSync(log, 'utf8')
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l) as { source: string; deliveryId: string })
            .map((l) => ({ source: l.source, deliveryId: decodeURIComponent(l.deliveryId) }))
        : [],
    kill,
    restart: start,
    close: kill,
    mostHeld: () => Math.max(0, ...held().map((h) => h.held)),
    requests: () => held().length,
  };
}

/** hookdrill.config.json for a team receiving Stripe, GitHub and Slack, with five routes. */
export function writeRoutesConfig(dir: string, t: { billing: string; ci: string; support: string }): void {
  const config = {
    receive: {
      stripe: { path: '/stripe', secretEnv: 'STRIPE_WEBHOOK_SECRET' },
      github: { path: '/github', secretEnv: 'GITHUB_WEBHOOK_SECRET' },
      slack: { path: '/slack/events', secretEnv: 'SLACK_SIGNING_SECRET' },
    },
    routes: [
      { name: 'billing', provider: 'stripe', events: ['invoice.*', 'customer.subscription.*'], to: `${t.billing}/billing` },
      { name: 'ci', provider: 'github', events: ['workflow_run', 'check_suite'], to: `${t.ci}/ci` },
      { name: 'support', provider: 'slack', events: 'app_mention', to: `${t.support}/support` },
      { name: 'parked', provider: 'stripe', events: 'charge.*', to: 'hold' },
      { name: 'rest', to: 'drop' },
    ],
  };
  writeFileSync(join(dir, 'hookdrill.config.json'), JSON.stringify(config, null, 2));
}

/**
 * The events sent, by provider, with the route each must take — written out here, not worked out
 * with hookdrill's own matcher, so a wrong matcher fails.
 */
export const ROUTED_EVENTS: Record<'stripe' | 'github' | 'slack', Record<string, string>> = {
  stripe: {
    'invoice.paid': 'billing',
    'invoice.payment_failed': 'billing',
    'customer.subscription.created': 'billing',
    'charge.succeeded': 'parked',
    'customer.created': 'rest',
  },
  github: {
    'workflow_run.completed': 'ci',
    'check_suite.completed': 'ci',
    'issues.opened': 'rest',
    push: 'rest',
  },
  slack: {
    app_mention: 'support',
    message: 'rest',
  },
};
