import { mock, test } from 'node:test';
import assert from 'node:assert/strict';
import { setLongTimeout, sleep, waitUntil } from '../src/util/wait.js';

const DAY = 86_400_000;

test("setLongTimeout waits past Node's 24.8-day timer limit, in steps, and clear() stops it after a step", () => {
  mock.timers.enable({ apis: ['setTimeout', 'Date'] });
  try {
    let fired = 0;
    setLongTimeout(() => fired++, 40 * DAY);
    mock.timers.tick(2 ** 31 - 1); // where a plain setTimeout of 40 days would already have fired
    assert.equal(fired, 0);
    mock.timers.tick(40 * DAY - (2 ** 31 - 1) - 1);
    assert.equal(fired, 0, 'not a millisecond early');
    mock.timers.tick(1);
    assert.equal(fired, 1);
    let cleared = 0;
    const t = setLongTimeout(() => cleared++, 30 * DAY);
    mock.timers.tick(2 ** 31 - 1); // re-armed for the rest
    t.clear();
    mock.timers.tick(30 * DAY);
    assert.equal(cleared, 0);
  } finally {
    mock.timers.reset();
  }
});

test('sleep resolves false when aborted; waitUntil throws naming what it waited for', async () => {
  const controller = new AbortController();
  const pending = sleep(60 * DAY, controller.signal);
  controller.abort();
  assert.equal(await pending, false);
  await assert.rejects(
    waitUntil(() => false, 30, 'the moon'),
    /timed out after 30 ms waiting for the moon/,
  );
});

test('an attempt interrupted before it begins sends nothing and says so', async () => {
  const { attempt } = await import('../src/delivery/attempt.js');
  const { TargetDispatcher } = await import('../src/delivery/dispatcher.js');
  const { Interrupt } = await import('../src/util/wait.js');
  const { startServer, reply } = await import('./helpers/server.js');
  const server = await startServer((_req, res) => reply(res, 200));
  const dispatcher = new TargetDispatcher(new URL(server.url).origin, 1);
  const controller = new AbortController();
  controller.abort();
  try {
    const res = await attempt({
      url: new URL(server.url),
      headers: {},
      body: Buffer.from('{}'),
      timeoutMs: 1_000,
      maxRedirects: 0,
      dispatcher,
      interrupt: new Interrupt(controller.signal),
    });
    assert.equal(res.error, 'interrupted');
    assert.equal(server.requests.length, 0);
  } finally {
    await dispatcher.close();
    await server.close();
  }
});
