/**
 * The flood of the receiver-flood benchmark, as its own process:
 *
 *   node flood-load.js PORT KIND CONNECTIONS MIB SECONDS
 *
 * CONNECTIONS sockets each send, over and over for SECONDS, a POST of a MIB-MiB body as fast as
 * the receiver takes it. KIND `unsigned`: no signature header, what anyone who can reach the port
 * can send; `forged`: a Standard Webhooks signature that is well-formed and fresh but wrong, what
 * a forger sends to be read in full. A connection the receiver cuts is opened again. Prints one
 * JSON line: requests begun, answers by status, the CPU it used.
 */
import { connect } from 'node:net';
import { randomBytes } from 'node:crypto';

const [port, kind, connections, mib, seconds] = process.argv.slice(2) as [string, string, string, string, string];
const size = Number(mib) * 1024 * 1024;
const chunk = Buffer.alloc(1024 * 1024, 0x20);
const until = Date.now() + Number(seconds) * 1000;
const answers: Record<string, number> = {};
let begun = 0;

function head(): string {
  const sig =
    kind === 'forged'
      ? `webhook-id: msg_${randomBytes(8).toString('hex')}\r\nwebhook-timestamp: ${Math.floor(Date.now() / 1000)}\r\nwebhook-signature: v1,${randomBytes(32).toString('base64')}\r\n`
      : '';
  return `POST / HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-type: application/json\r\n${sig}content-length: ${size}\r\nconnection: close\r\n\r\n`;
}

/** One request on a new connection: the head, then the body a MiB at a time while the socket takes it. */
function once(): Promise<void> {
  return new Promise((resolve) => {
    begun++;
    const socket = connect(Number(port), '127.0.0.1');
    let sent = 0;
    let text = '';
    const done = () => {
      const status = /^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 'cut';
      answers[status] = (answers[status] ?? 0) + 1;
      socket.destroy();
      resolve();
    };
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
    });
    socket.once('close', done);
    socket.on('error', () => undefined);
    const pump = () => {
      while (sent < size) {
        sent += chunk.length;
        if (!socket.write(chunk)) return void socket.once('drain', pump);
      }
    };
    socket.once('connect', () => {
      socket.write(head());
      pump();
    });
  });
}

await Promise.all(
  Array.from({ length: Number(connections) }, async () => {
    while (Date.now() < until) await once();
  }),
);
const cpu = process.cpuUsage();
process.stdout.write(`${JSON.stringify({ begun, answers, cpuMs: Math.round((cpu.user + cpu.system) / 1000) })}\n`);
