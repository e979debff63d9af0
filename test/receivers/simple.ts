/**
 * Receivers written only for the chaos tests, each right or wrong in one way. Not verifying
 * signatures is deliberate: what is under test is when they store, not how they verify.
 *
 *   node simple.js ack-first FILE     answers 200, keeps the id in memory, writes it 500 ms later
 *   node simple.js store-first FILE   writes the id and fsyncs, then answers 200
 *   node simple.js ignore-term FILE   store-first, and ignores SIGTERM
 *   node simple.js write-after-reply FILE  answers 200, then stores 2 ms later (a reply sent before an async insert)
 *   node simple.js refuse-duplicates FILE  stores, answers the n-th request 50·n ms later, and 500 to one it already holds
 *   node simple.js escape FILE        starts store-first in a process group of its own, and stays up itself
 *   node simple.js crash              exits at startup with an error on stderr
 *   node simple.js never-listens      stays up but never opens its port
 *
 * Listens on $PORT. The delivery id is the Stripe event id in the body.
 */
import { spawn } from 'node:child_process';
import { appendFileSync, closeSync, existsSync, fsyncSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';

const [mode, file] = process.argv.slice(2) as [string, string];
const port = Number(process.env.PORT);

if (mode === 'crash') {
  process.stderr.write('loading config\nfatal: DATABASE_URL is not set\n');
  process.exit(1);
}
if (mode === 'never-listens') {
  setInterval(() => undefined, 1_000);
} else if (mode === 'escape') {
  // Like a receiver that daemonizes: the listener lives outside the group chaos kills.
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), 'store-first', file], { detached: true, stdio: 'ignore' });
  writeFileSync(`${file}.escaped-pid`, String(child.pid));
  child.unref();
  setInterval(() => undefined, 1_000);
} else {
  if (mode === 'ignore-term') process.on('SIGTERM', () => process.stderr.write('ignoring SIGTERM\n'));
  let served = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = (JSON.parse(Buffer.concat(chunks).toString()) as { id: string }).id;
      if (mode === 'ack-first') {
        res.end('ok');
        setTimeout(() => appendFileSync(file, `${id}\n`), 500);
        return;
      }
      if (mode === 'write-after-reply') {
        res.end('ok', () => setTimeout(() => appendFileSync(file, `${id}\n`), Number(process.env.WRITE_DELAY_MS ?? 2)));
        return;
      }
      if (mode === 'refuse-duplicates' && existsSync(file) && readFileSync(file, 'utf8').split('\n').includes(id)) {
        res.statusCode = 500;
        res.end('already have it');
        return;
      }
      // A duplicate of what is held is answered, not stored again (the file is the dedupe record).
      if (existsSync(file) && readFileSync(file, 'utf8').split('\n').includes(id)) {
        res.end('ok');
        return;
      }
      const fd = openSync(file, 'a');
      writeSync(fd, `${id}\n`);
      fsyncSync(fd);
      closeSync(fd);
      // Stored at once, answered one after another: a kill after the first answer leaves the
      // rest stored and unacknowledged, so their retries are duplicates.
      if (mode === 'refuse-duplicates') setTimeout(() => res.end('ok'), 50 * served++);
      else res.end('ok');
    });
  });
  server.listen(port, '127.0.0.1');
}
