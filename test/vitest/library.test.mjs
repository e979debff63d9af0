// A Vitest suite as a user writes one: only `hookdrill`'s exports, options in JavaScript's shapes.
// test/api.test.ts runs it with Vitest inside a user's project (node_modules/hookdrill).
import { createServer } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageError, assertSendPassed, check, send, startReceiver } from 'hookdrill';

const secret = `whsec_${Buffer.from('vitest-library-secret-000').toString('base64')}`;
const requests = [];
let server;
let url;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      requests.push({ headers: req.headers, body: Buffer.concat(chunks).toString() });
      // The first request fails, so the retry schedule is put to use.
      res.statusCode = requests.length === 1 ? 500 : 200;
      res.end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${server.address().port}/webhooks`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

describe('send', () => {
  it('takes headers and sets as objects, retryDelays as milliseconds, a bare number timeout as milliseconds', async () => {
    const result = await send({
      fixtures: 'stripe/invoice.paid',
      url,
      secrets: secret,
      headers: { 'X-Env': 'vitest' },
      sets: { 'data.object.amount_paid': 1234 },
      retryDelays: [0, 50],
      timeout: 2000,
    });
    assertSendPassed(result);
    expect(result.timing.timeoutMs).toBe(2000);
    expect(result.summary.attempts).toBe(2);
    const last = requests.at(-1);
    expect(last.headers['x-env']).toBe('vitest');
    expect(JSON.parse(last.body).data.object.amount_paid).toBe(1234);
  });

  it('refuses an option of the wrong shape with a UsageError that names it', async () => {
    await expect(send({ fixtures: ['stripe/invoice.paid'], url, secrets: [secret], retryDelays: 100 })).rejects.toThrow(UsageError);
    await expect(send({ fixtures: ['stripe/invoice.paid'], url, secrets: [secret], headers: 'X-Env: ci' })).rejects.toThrow(
      /^option headers: expected/,
    );
  });
});

describe('check', () => {
  it('takes only and skip as arrays of case names', async () => {
    const result = await check({ url, provider: 'stripe', secrets: [secret], only: ['duplicate', 'retry'], skip: ['retry'] });
    expect(result.cases.filter((c) => c.status !== 'skipped').map((c) => c.name)).toEqual(['duplicate']);
  });
});

describe('startReceiver', () => {
  it('takes readyTimeout as a duration string', async () => {
    const port = server.address().port + 1;
    await expect(startReceiver({ command: 'sleep 30', url: `http://127.0.0.1:${port}/`, readyTimeout: '200ms' })).rejects.toThrow(
      /within 200 ms/,
    );
  });
});
