/**
 * The observers of the observation benchmark (bench/observe.ts), as their own process:
 *
 *   node observe-load.js scrape PORT CONNECTIONS SECONDS
 *   node observe-load.js inspector-open|inspector-typing PAGE_URL SECONDS
 *
 * `scrape`: CONNECTIONS loops each GET listen's /metrics again as soon as it is answered — a
 * flood far beyond any Prometheus, which scrapes every 15 s. `inspector-open`: what an open page
 * asks; `inspector-typing`: that while someone types a filter (see below). Prints one JSON line: answers by status, and
 * the observers' own p50 and max in ms.
 */
import { connect } from 'node:net';

const [kind, target, third, fourth] = process.argv.slice(2) as [string, string, string, string | undefined];
const seconds = Number(kind === 'scrape' ? fourth : third);
const until = Date.now() + seconds * 1000;
const answers: Record<string, number> = {};
const took: number[] = [];

async function get(url: string, headers: Record<string, string> = {}): Promise<void> {
  const t0 = performance.now();
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(Math.max(1, until - Date.now()) + 30_000) });
    await res.arrayBuffer();
    answers[res.status] = (answers[res.status] ?? 0) + 1;
  } catch {
    answers.failed = (answers.failed ?? 0) + 1;
  }
  took.push(performance.now() - t0);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * One keep-alive connection scraping back to back, over a raw socket: fetch costs the observer
 * ten times the CPU a Prometheus spends, and on a machine of two cores that CPU is taken from the
 * receiver being measured, not from the observer.
 */
function scraper(port: number): Promise<void> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let buffered = Buffer.alloc(0);
    let t0 = 0;
    const ask = () => {
      if (Date.now() >= until) {
        socket.end();
        return resolve();
      }
      t0 = performance.now();
      socket.write(`GET ${process.env.OBSERVE_PATH ?? '/metrics'} HTTP/1.1\r\nhost: 127.0.0.1\r\n\r\n`);
    };
    socket.on('data', (d: Buffer) => {
      buffered = Buffer.concat([buffered, d]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffered.subarray(0, end).toString('latin1');
      const length = Number(/content-length: (\d+)/i.exec(head)?.[1] ?? 0);
      if (buffered.length < end + 4 + length) return;
      const status = /^HTTP\/1\.1 (\d{3})/.exec(head)?.[1] ?? 'unreadable';
      answers[status] = (answers[status] ?? 0) + 1;
      took.push(performance.now() - t0);
      buffered = buffered.subarray(end + 4 + length);
      ask();
    });
    socket.on('error', () => {
      answers.failed = (answers.failed ?? 0) + 1;
      resolve();
    });
    socket.once('connect', ask);
  });
}

if (kind === 'scrape') {
  await Promise.all(Array.from({ length: Number(third) }, () => scraper(Number(target))));
} else {
  // inspector-open: the page's live refresh as app.js does it (the overview, the refused and the
  // latest 200 rows together, then again 2 s after they end, or four times as long as they took if
  // that is longer); inspector-typing: that, and the rows for a filter being typed every 300 ms
  // (the page's debounce).
  const page = new URL(target);
  const headers = { 'x-hookdrill-token': page.searchParams.get('token') ?? '' };
  const api = (path: string) => `${page.origin}${path}`;
  const typed = 'invoice.paid';
  await Promise.all([
    (async () => {
      while (Date.now() < until) {
        const t0 = Date.now();
        await Promise.all([
          get(api('/api/overview'), headers),
          get(api('/api/refused'), headers),
          get(api('/api/rows?limit=200'), headers),
        ]);
        await sleep(Math.max(2_000, 4 * (Date.now() - t0)));
      }
    })(),
    (async () => {
      if (kind !== 'inspector-typing') return;
      for (let i = 1; Date.now() < until; i = (i % typed.length) + 1) {
        const t0 = Date.now();
        await get(api(`/api/rows?${new URLSearchParams({ type: typed.slice(0, i), limit: '200' })}`), headers);
        await sleep(Math.max(0, 300 - (Date.now() - t0)));
      }
    })(),
  ]);
}
took.sort((a, b) => a - b);
process.stdout.write(
  `${JSON.stringify({
    answers,
    p50: Math.round(took[Math.floor(took.length / 2)] ?? 0),
    max: Math.round(took[took.length - 1] ?? 0),
  })}\n`,
);
