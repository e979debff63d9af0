/**
 * `npm run bench`: signed deliveries per second of `hookdrill send` at concurrency 64 against a
 * local no-op server, beside autocannon hitting the same server with the same body in the same
 * run. The figure that matters is the ratio: both clients run in this process, one after the
 * other, alternating, so a noisy machine slows both alike.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { Pool } from 'undici';
import { run as send } from '../src/delivery/send.js';
import { resolveFixtures, prepareEvent } from '../src/fixtures/index.js';
import { providers } from '../src/providers/index.js';

const CONCURRENCY = 64;
const SECONDS = Number(process.env.BENCH_SECONDS ?? 4);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const TARGET = 0.8;

async function startServer(): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [fileURLToPath(new URL('./noop-server.js', import.meta.url))], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<string>((resolve, reject) => {
    child.stdout?.once('data', (d: Buffer) => resolve(d.toString().trim()));
    child.once('exit', (code) => reject(new Error(`no-op server exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}/webhooks`, child };
}

/** One signed Stripe event, fixed: what the two reference clients send over and over. */
function fixedRequest(): { body: Buffer; headers: Record<string, string> } {
  const [fixture] = resolveFixtures(['invoice.paid'], 'stripe');
  const event = prepareEvent(providers.stripe, fixture!, [], Date.now());
  const headers = providers.stripe.sign(event.rawBody, ['whsec_bench'], {
    nowMs: Date.now(),
    deliveryId: event.deliveryId,
    eventType: event.eventType,
  });
  return { body: event.rawBody, headers };
}

/** autocannon with the same body and headers send would use (one fixed signature: its best case). */
async function autocannonRate(url: string): Promise<number> {
  const { body, headers } = fixedRequest();
  const result = await autocannon({
    url,
    method: 'POST',
    connections: CONCURRENCY,
    pipelining: 1,
    duration: SECONDS,
    body,
    headers,
  });
  return result.requests.total / (result.duration || SECONDS);
}

/**
 * The floor set by the HTTP client alone: undici, as send uses it (a Pool, 64 connections, the
 * dispatcher API), posting one fixed pre-signed request in a tight loop. The gap between this and
 * send is hookdrill's own cost per delivery (a fresh event, a fresh signature, the records).
 */
async function undiciRate(url: string): Promise<number> {
  const { body, headers } = fixedRequest();
  const target = new URL(url);
  const pool = new Pool(target.origin, { connections: CONCURRENCY, pipelining: 1 });
  const total = Math.max(2000, Math.round(lastUndici * SECONDS));
  let next = 0;
  const post = () =>
    new Promise<void>((resolve, reject) => {
      pool.dispatch(
        { origin: target.origin, path: target.pathname, method: 'POST', headers, body },
        {
          onRequestStart: () => undefined,
          onResponseStart: () => undefined,
          onResponseData: () => undefined,
          onResponseEnd: () => resolve(),
          onResponseError: (_c, err) => reject(err),
        },
      );
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next++ < total) await post();
    }),
  );
  const rate = (total * 1000) / (performance.now() - started);
  await pool.close();
  lastUndici = rate;
  return rate;
}
let lastUndici = 5000;

/** send for about SECONDS: a count sized from the previous rate, every event freshly made and signed. */
async function sendRate(url: string, guess: number): Promise<number> {
  const result = await send({
    url,
    provider: 'stripe',
    secrets: ['whsec_bench'],
    count: Math.max(1000, Math.round(guess * SECONDS)),
    concurrency: CONCURRENCY,
    noRetry: true,
  });
  if (!result.ok) throw new Error(`send failed ${result.summary.failed} deliveries`);
  return result.summary.deliveriesPerSec;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)] as number;
}

const { url, child } = await startServer();
try {
  // Warm both paths (JIT, connection pools) before measuring.
  let guess = await sendRate(url, 500);
  await autocannonRate(url);
  await undiciRate(url);
  const ac: number[] = [];
  const un: number[] = [];
  const hd: number[] = [];
  // Each round measures all three back to back; the ratio of medians evens out a noisy machine.
  for (let i = 0; i < ROUNDS; i++) {
    ac.push(await autocannonRate(url));
    un.push(await undiciRate(url));
    guess = await sendRate(url, guess);
    hd.push(guess);
    process.stderr.write(
      `round ${i + 1}/${ROUNDS}: autocannon ${ac.at(-1)?.toFixed(0)}/s, undici ${un.at(-1)?.toFixed(0)}/s, send ${guess.toFixed(0)}/s\n`,
    );
  }
  const ratio = median(hd) / median(ac);
  const floor = median(un) / median(ac);
  const lines = [
    `send (stripe, each event fresh and signed anew, concurrency ${CONCURRENCY}): ${median(hd).toFixed(0)} deliveries/s`,
    `undici alone (one fixed pre-signed request, ${CONCURRENCY} connections):     ${median(un).toFixed(0)} requests/s`,
    `autocannon (the same fixed request, ${CONCURRENCY} connections):             ${median(ac).toFixed(0)} requests/s`,
    `medians of ${ROUNDS} rounds of ${SECONDS}s; ratio send / autocannon ${ratio.toFixed(2)}x (target >= ${TARGET}x: ${ratio >= TARGET ? 'met' : 'NOT met'}); undici alone / autocannon ${floor.toFixed(2)}x`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  const json = {
    bench: 'send',
    sendPerSec: Math.round(median(hd)),
    undiciPerSec: Math.round(median(un)),
    autocannonPerSec: Math.round(median(ac)),
    ratio: Number(ratio.toFixed(3)),
    undiciRatio: Number(floor.toFixed(3)),
    target: TARGET,
  };
  process.stdout.write(`${JSON.stringify(json)}\n`);
} finally {
  child.kill('SIGTERM');
}
