/**
 * The receiver benchmark's load, run as its own process so that it does not share an event loop
 * with the receiver it measures:
 *
 *   node load.js PORT SECRET CONCURRENCY SECONDS
 *
 * autocannon keeps CONCURRENCY connections busy for SECONDS, each request a distinct Standard
 * Webhooks delivery (fresh webhook-id, current timestamp, its own HMAC) — a receiver that
 * deduplicates must store every one. Prints one JSON line: acks (2xx), other answers, acks/s, p50, p99, the CPU it used.
 */
import { createHmac } from 'node:crypto';
import autocannon from 'autocannon';

const [port, secret, concurrency, seconds] = process.argv.slice(2) as [string, string, string, string];
const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
const run = `${process.pid}-${Date.now().toString(36)}`;
let n = 0;

function signed(): { body: string; headers: Record<string, string> } {
  const id = `msg_${run}_${n++}`;
  const timestamp = String(Math.floor(Date.now() / 1000));
  const body = JSON.stringify({ type: 'invoice.paid', timestamp: new Date().toISOString(), data: { id, amount: 4200, currency: 'eur' } });
  const signature = createHmac('sha256', key).update(`${id}.${timestamp}.${body}`).digest('base64');
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': timestamp,
      'webhook-signature': `v1,${signature}`,
    },
  };
}

const result = await autocannon({
  url: `http://127.0.0.1:${port}/`,
  connections: Number(concurrency),
  duration: Number(seconds),
  requests: [
    {
      method: 'POST',
      setupRequest: (req) => ({ ...req, ...signed() }),
    },
  ],
});
const acks = result['2xx'];
const cpu = process.cpuUsage();
process.stdout.write(
  `${JSON.stringify({
    acks,
    other: result.non2xx + result.errors + result.timeouts,
    acksPerSec: acks / result.duration,
    p50: result.latency.p50,
    p99: result.latency.p99,
    cpuMs: Math.round((cpu.user + cpu.system) / 1000),
  })}\n`,
);
