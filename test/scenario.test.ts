import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../src/scenario/run.js';
import { startReceiver } from '../src/harness/receiver-process.js';
import { listScenarios } from '../src/scenario/load.js';
import { hookdrill } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { PYTHON } from './helpers/python.js';
import { tempDir } from './helpers/tmp.js';

// A receiver in another language (Python), written the naive way and the right way.
const PY = fileURLToPath(new URL('../../test/receivers/state_receiver.py', import.meta.url));
const SECRET = 'whsec_scenario_tests';

async function receiver(mode: 'naive' | 'ordered' | 'queued', provider: string) {
  const state = join(tempDir(), 'state.json');
  const port = await freePort();
  const handle = await startReceiver({
    command: `${PYTHON} ${PY} serve ${mode} ${provider} ${SECRET} ${port} ${state}`,
    url: `http://127.0.0.1:${port}/`,
  });
  return { handle, url: handle.url, state: `${PYTHON} ${PY} state ${state}` };
}

test('every shipped scenario: a handler that trusts arrival order is caught; one that orders by the event’s own time passes', async () => {
  const names = listScenarios();
  assert.ok(names.length >= 3, names.join(', '));
  for (const name of names) {
    const provider = name.split('/')[0] as string;
    for (const mode of ['naive', 'ordered'] as const) {
      const r = await receiver(mode, provider);
      try {
        const result = await run({
          scenario: name,
          url: r.url,
          secrets: [SECRET],
          state: r.state,
          settle: '300ms',
          late: '100ms',
          seed: 7,
        });
        const byOrder = Object.fromEntries(result.orderings.map((o) => [o.order, o.ok]));
        assert.equal(byOrder['in-order'], true, `${name} ${mode}: in order must pass`);
        if (mode === 'ordered') assert.equal(result.ok, true, `${name} ordered: ${JSON.stringify(result.orderings)}`);
        else {
          assert.equal(result.ok, false, `${name} naive passed every ordering: the scenario proves nothing`);
          assert.equal(byOrder.reversed, false);
          const failed = result.orderings.find((o) => !o.ok);
          assert.match(String(failed?.problem), /ended in .* expected/);
        }
      } finally {
        await r.handle.stop();
      }
    }
  }
});

test('scenario on the command line: exit 1 with the ordering named when the state is wrong; bad input is one line, exit 2', async () => {
  const r = await receiver('naive', 'stripe');
  try {
    const cli = await hookdrill([
      'scenario',
      'stripe/payment-retry',
      '--url',
      r.url,
      '--secret',
      SECRET,
      '--state',
      r.state,
      '--orders',
      'in-order,reversed',
      '--settle',
      '300ms',
    ]);
    assert.equal(cli.code, 1, cli.stderr);
    assert.match(cli.stdout, /✓ in-order/);
    assert.match(cli.stdout, /✗ reversed .*\n.*ended in .*"paid":false.* expected .*"paid":true/);
  } finally {
    await r.handle.stop();
  }
  const dir = tempDir();
  writeFileSync(join(dir, 'one.json'), JSON.stringify({ provider: 'stripe', events: [{ fixture: 'stripe/invoice.paid' }], expect: {} }));
  for (const [args, message] of [
    [
      ['scenario', 'stripe/no-such-thing', '--url', 'http://127.0.0.1:1/', '--secret', 's', '--state', 'true'],
      /no scenario stripe\/no-such-thing/,
    ],
    [['scenario', join(dir, 'one.json'), '--url', 'http://127.0.0.1:1/', '--secret', 's', '--state', 'true'], /at least two events/],
    [
      ['scenario', 'stripe/payment-retry', '--url', 'http://127.0.0.1:1/', '--secret', 's', '--state', 'true', '--orders', 'sideways'],
      /--orders sideways/,
    ],
    [['scenario', 'stripe/payment-retry', '--url', 'http://127.0.0.1:1/', '--secret', 's'], /--state is required/],
  ] as const) {
    const bad = await hookdrill([...args]);
    assert.equal(bad.code, 2, bad.stderr);
    assert.equal(bad.stderr.trim().split('\n').length, 1, bad.stderr);
    assert.match(bad.stderr, message);
  }
});

test('scenario judges the state once it has settled: a worker that passes through the right state on its way to a wrong one fails', async () => {
  const r = await receiver('queued', 'stripe');
  try {
    const result = await run({
      scenario: 'stripe/payment-retry',
      url: r.url,
      secrets: [SECRET],
      state: r.state,
      orders: ['in-order', 'reversed'],
      settle: '900ms',
    });
    const byOrder = Object.fromEntries(result.orderings.map((o) => [o.order, o]));
    assert.equal(byOrder['in-order']?.ok, true, JSON.stringify(byOrder['in-order']));
    assert.equal(byOrder.reversed?.ok, false, 'the reversed ordering ends unpaid after passing through paid');
    assert.equal(result.ok, false);
  } finally {
    await r.handle.stop();
  }
});

test('scenario refuses what would compare nothing: no ordering, or a --state that prints the expected state whatever happens', async () => {
  await assert.rejects(
    run({ scenario: 'stripe/payment-retry', url: 'http://127.0.0.1:1/', secrets: [SECRET], state: 'true', orders: [] }),
    /--orders names no ordering/,
  );
  const constant = `node -e 'console.log(JSON.stringify({ invoice: process.env.HOOKDRILL_VAR_INVOICE, paid: true }))'`;
  await assert.rejects(
    run({ scenario: 'stripe/payment-retry', url: 'http://127.0.0.1:1/', secrets: [SECRET], state: constant }),
    /--state already prints the expected state before anything was sent/,
  );
});
