/**
 * The target for `npm run bench`: a no-op HTTP server in its own process, so that the clients
 * being compared (autocannon and hookdrill send) never share a core with it. It reads each body
 * and answers 200 with an empty body, and prints its port on stdout when ready.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    res.writeHead(200, { 'content-length': '0' });
    res.end();
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
