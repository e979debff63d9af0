/**
 * A receiver that checks every request with the provider's official verifier and logs what it
 * saw, for trying `send` by hand:
 *   node dist/test/helpers/official-receiver.js --provider stripe --secret whsec_x --port 3000 [--sleep-ms 5000]
 * It answers 200 when the signature verifies and 401 when it does not; --sleep-ms waits before
 * answering (a slow receiver, to watch timeouts and retries).
 */
import { parseArgs } from 'node:util';
import { reply, startServer } from './server.js';
import { verifyWithOfficialCode } from './official.js';

const { values } = parseArgs({
  options: {
    provider: { type: 'string' },
    secret: { type: 'string' },
    port: { type: 'string', default: '3000' },
    'sleep-ms': { type: 'string', default: '0' },
  },
});
const provider = values.provider ?? 'stripe';
const secret = values.secret ?? process.env.HOOKDRILL_SECRET ?? '';
const sleepMs = Number(values['sleep-ms']);

const server = await startServer(async (req, res, n) => {
  const retry = Object.entries(req.headers)
    .filter(([k]) => k.startsWith('x-slack-retry'))
    .map(([k, v]) => `${k}=${String(v)}`)
    .join(' ');
  try {
    await verifyWithOfficialCode(provider, req.rawBody, req.headers, secret);
    if (sleepMs > 0) await new Promise((r) => setTimeout(r, sleepMs));
    console.log(`#${n} ${provider} verified by the official code (${req.rawBody.length} bytes) ${retry}`.trim());
    if (!res.destroyed) reply(res, 200, 'ok');
  } catch (err) {
    console.log(`#${n} ${provider} REJECTED: ${(err as Error).message}`);
    reply(res, 401, 'bad signature');
  }
}, Number(values.port));
console.log(`official ${provider} receiver on ${server.url}`);
