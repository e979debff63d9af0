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
import { run as send } from '../src/commands/send.js';
import { resolveFixtures, prepareEvent } from '../src/fixtures.js';
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

/** autocannon with the same body and headers send would use (one fixed signature: its best case). */
async function autocannonRate(url: string): Promise<number> {
  const [fixture] = resolveFixtures(['invoice.paid'], 'stripe');
  const event = prepareEvent(providers.stripe, fixture!, [], Date.now());
  const headers = providers.stripe.sign(event.rawBody, ['whsec_bench'], { nowMs: Date.now(), deliveryId: event.deliveryId, eventType: event.eventType });
  const result = await autocannon({
    url,
    method: 'POST',
    connections: CONCURRENCY,
    pipelining: 1,
    duration: SECONDS,
    body: event.rawBody,
    headers,
  });
  return result.requests.total / (result.duration || SECONDS);
}

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
  const ac: number[] = [];
  const hd: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    ac.push(await autocannonRate(url));
    guess = await sendRate(url, guess);
    hd.push(guess);
    process.stderr.write(`round ${i + 1}/${ROUNDS}: autocannon ${ac.at(-1)?.toFixed(0)}/s, send ${guess.toFixed(0)}/s\n`);
  }
  const ratio = median(hd) / median(ac);
  const lines = [
    `send (stripe, every request signed anew, concurrency ${CONCURRENCY}): ${median(hd).toFixed(0)} deliveries/s (median of ${ROUNDS})`,
    `autocannon (same body and headers, ${CONCURRENCY} connections):      ${median(ac).toFixed(0)} requests/s (median of ${ROUNDS})`,
    `ratio send / autocannon: ${ratio.toFixed(2)}x (target >= ${TARGET}x) ${ratio >= TARGET ? 'OK' : 'BELOW TARGET'}`,
  ];
  process.stdout.write(`${lines.join('\n')}\n`);
  process.stdout.write(`${JSON.stringify({ bench: 'send', sendPerSec: Math.round(median(hd)), autocannonPerSec: Math.round(median(ac)), ratio: Number(ratio.toFixed(3)), target: TARGET })}\n`);
} finally {
  child.kill('SIGTERM');
}
