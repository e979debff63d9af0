/**
 * `npm run bench` (last part): how long `pull --follow` takes, at its default interval, from an
 * event appearing in the provider's API (the test stand-ins, on loopback) to its 2xx at a
 * receiver that verifies the signature — and how many API requests it makes an hour at the
 * defaults. The baseline is the poll interval itself: an event appearing at a random moment waits
 * half an interval for the next poll on average, so the ratio `median / (interval / 2)` says what
 * pull adds beyond the polling it is set to (1.0: nothing). Events appear at random moments, one
 * at a time (BENCH_PULL_EVENTS, default 40 for Stripe and 12 for GitHub). Writes bench-pull.json.
 */
import { spawn } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { providers } from '../src/providers/index.js';
import { PULL_DEFAULTS } from '../src/pull/defaults.js';
import { percentile } from '../src/util/stats.js';
import { startStripeApi } from '../test/helpers/stripe-api.js';
import { startGithubApi } from '../test/helpers/github-api.js';

const BIN = fileURLToPath(new URL('../../bin/hookdrill', import.meta.url));
const STRIPE_KEY = 'sk_test_51Bench00000000000000000000pull';
const GITHUB_TOKEN = 'ghp_Bench000000000000000000000000000pull';
const STRIPE_SECRET = `whsec_${Buffer.from('bench-pull-secret-000000000').toString('base64')}`;
const GITHUB_SECRET = 'bench-pull-secret';

/** A receiver that verifies each delivery and records when it answered 2xx, by id. */
async function receiver(verify: (body: Buffer, headers: IncomingHttpHeaders) => string) {
  const answeredAt = new Map<string, number>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      try {
        const id = verify(Buffer.concat(chunks), req.headers);
        res.writeHead(200).end();
        if (!answeredAt.has(id)) answeredAt.set(id, Date.now());
      } catch {
        res.writeHead(401).end();
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    answeredAt,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

interface Measured {
  provider: string;
  intervalMs: number;
  events: number;
  medianMs: number;
  p99Ms: number;
  /** median / (interval / 2): 1.0 is the polling alone. */
  ratioToHalfInterval: number;
  apiRequestsPerHour: number;
  /** With no events at all: the cost of following alone. */
  idleRequestsPerHour: number;
}

async function measure(
  provider: 'stripe' | 'github',
  api: { url: string; requests(): number; appearedAt: Map<string, number>; close(): Promise<void> },
  add: () => string,
  count: number,
  args: string[],
  env: Record<string, string>,
  r: Awaited<ReturnType<typeof receiver>>,
): Promise<Measured> {
  const intervalMs = PULL_DEFAULTS.intervalMs[provider];
  const state = join(mkdtempSync(join(tmpdir(), 'hookdrill-bench-pull-')), 'state.json');
  const child = spawn(
    process.execPath,
    [BIN, 'pull', '--provider', provider, '--api-base', api.url, '--to', r.url, '--state', state, '--follow', ...args],
    {
      env: { ...process.env, CI: 'true', ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  await new Promise<void>((resolve) => child.stdout.once('data', () => resolve()));
  // Idle first: requests over three intervals with nothing to deliver.
  const idleFrom = api.requests();
  const idleStart = Date.now();
  await new Promise((res) => setTimeout(res, intervalMs * 3));
  const idleRequestsPerHour = Math.round(((api.requests() - idleFrom) / (Date.now() - idleStart)) * 3_600_000);
  const from = api.requests();
  const start = Date.now();
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    // A random moment within the next interval and a half: the phase against the poll is random.
    await new Promise((res) => setTimeout(res, Math.random() * intervalMs * 1.5));
    ids.push(add());
  }
  const deadline = Date.now() + intervalMs * 3 + 10_000;
  while (ids.some((id) => !r.answeredAt.has(id)) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 20));
  const elapsed = Date.now() - start;
  const requests = api.requests() - from;
  child.kill('SIGINT');
  await new Promise((res) => child.on('exit', res));
  const latencies = ids.map((id) => (r.answeredAt.get(id) ?? Number.NaN) - (api.appearedAt.get(id) ?? Number.NaN)).sort((a, b) => a - b);
  if (latencies.some((l) => Number.isNaN(l))) throw new Error(`${provider}: not every event arrived`);
  const medianMs = Math.round(percentile(latencies, 50) ?? Number.NaN);
  return {
    provider,
    intervalMs,
    events: count,
    medianMs,
    p99Ms: Math.round(percentile(latencies, 99) ?? Number.NaN),
    ratioToHalfInterval: Number((medianMs / (intervalMs / 2)).toFixed(2)),
    apiRequestsPerHour: Math.round((requests / elapsed) * 3_600_000),
    idleRequestsPerHour,
  };
}

const results: Measured[] = [];
{
  const api = await startStripeApi({ key: STRIPE_KEY, events: [] });
  const r = await receiver((body, headers) => {
    providers.stripe.verify(body, headers as Record<string, string>, [STRIPE_SECRET]);
    return (JSON.parse(body.toString()) as { id: string }).id;
  });
  const add = () => {
    const id = `evt_1${randomBytes(12).toString('hex')}`;
    api.add({ id, type: 'invoice.paid', created: Math.floor(Date.now() / 1000), delivered: true });
    return id;
  };
  results.push(
    await measure(
      'stripe',
      api,
      add,
      Number(process.env.BENCH_PULL_EVENTS ?? 40),
      ['--secret', STRIPE_SECRET],
      { STRIPE_API_KEY: STRIPE_KEY },
      r,
    ),
  );
  await r.close();
  await api.close();
}
{
  const api = await startGithubApi({ token: GITHUB_TOKEN, hookPath: '/repos/acme/shop/hooks/7', deliveries: [] });
  const r = await receiver((body, headers) => {
    providers.github.verify(body, headers as Record<string, string>, [GITHUB_SECRET]);
    return String(headers['x-github-delivery']);
  });
  const add = () => {
    const guid = randomUUID();
    api.add({ guid, event: 'issues', action: 'opened', at: Math.floor(Date.now() / 1000), statusCode: 0, payload: { action: 'opened' } });
    return guid;
  };
  results.push(
    await measure(
      'github',
      api,
      add,
      Number(process.env.BENCH_PULL_EVENTS ?? 12),
      ['--repo', 'acme/shop', '--hook-id', '7', '--secret', GITHUB_SECRET],
      { GITHUB_TOKEN },
      r,
    ),
  );
  await r.close();
  await api.close();
}

console.log('\npull --follow at the default interval: an event appearing in the API → its 2xx at the receiver');
console.log('| provider | interval | events | median ms | p99 ms | median ÷ (interval/2) | API requests/h (events arriving) | idle |');
console.log('|---|---|---|---|---|---|---|---|');
for (const m of results)
  console.log(
    `| ${m.provider} | ${m.intervalMs / 1000} s | ${m.events} | ${m.medianMs} | ${m.p99Ms} | ${m.ratioToHalfInterval} | ${m.apiRequestsPerHour.toLocaleString('en')} | ${m.idleRequestsPerHour.toLocaleString('en')} |`,
  );
writeFileSync('bench-pull.json', `${JSON.stringify(results, null, 2)}\n`);
