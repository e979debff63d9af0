/**
 * Receivers written only for the chaos tests, each right or wrong in one way. Not verifying
 * signatures is deliberate: what is under test is when they store, not how they verify.
 *
 *   node simple.js ack-first FILE     answers 200, keeps the id in memory, writes it 500 ms later
 *   node simple.js store-first FILE   writes the id and fsyncs, then answers 200
 *   node simple.js ignore-term FILE   store-first, and ignores SIGTERM
 *   node simple.js crash              exits at startup with an error on stderr
 *   node simple.js never-listens      stays up but never opens its port
 *
 * Listens on $PORT. The delivery id is the Stripe event id in the body.
 */
import { appendFileSync, closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';

const [mode, file] = process.argv.slice(2) as [string, string];
const port = Number(process.env.PORT);

if (mode === 'crash') {
  process.stderr.write('loading config\nfatal: DATABASE_URL is not set\n');
  process.exit(1);
}
if (mode === 'never-listens') {
  setInterval(() => undefined, 1_000);
} else {
  if (mode === 'ignore-term') process.on('SIGTERM', () => process.stderr.write('ignoring SIGTERM\n'));
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
      const fd = openSync(file, 'a');
      writeSync(fd, `${id}\n`);
      fsyncSync(fd);
      closeSync(fd);
      res.end('ok');
    });
  });
  server.listen(port, '127.0.0.1');
}
