import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkReceiver, explain, official, python } from './helpers/verdicts.js';
import { tempDir } from './helpers/tmp.js';

/**
 * Every provider fact a message states comes from that provider's own description (its profile's
 * retries, its verifier rules), never from a sentence written for another: Discord never sends an
 * interaction again, GitHub sends a `ping`, and a Go receiver has no express.raw.
 */

const findings = (r: Awaited<ReturnType<typeof checkReceiver>>) =>
  r.cases.map((c) => `${c.name}: ${c.observed} ${c.diagnosis ?? ''}`).join('\n');

test('Discord: a receiver refusing unknown interaction types is told Discord does not retry them — no retries, no disabled hook', async () => {
  const r = await checkReceiver('discord', python('discord', 'refuse-unknown-types'), { only: ['valid', 'other-types'] });
  const other = r.cases.find((c) => c.name === 'other-types');
  assert.equal(other?.status, 'fail', explain(r));
  assert.match(other?.diagnosis ?? '', /Discord does not retry it/);
  assert.doesNotMatch(findings(r), /retries|retried|for days|disable/);
});

test('Stripe: the same finding says how long Stripe retries, from its profile', async () => {
  const r = await checkReceiver('stripe', python('stripe', 'refuse-unknown-types'), { only: ['valid', 'other-types'] });
  const other = r.cases.find((c) => c.name === 'other-types');
  assert.equal(other?.status, 'fail', explain(r));
  assert.match(other?.diagnosis ?? '', /Stripe retries it for \d+d\d+h/);
});

test('GitHub sends a ping: the PING case skips it as Discord\'s endpoint check, not with "GitHub sends no PING"', async () => {
  const r = await checkReceiver('github', python('github'), { only: ['valid', 'ping'] });
  const ping = r.cases.find((c) => c.name === 'ping');
  assert.equal(ping?.status, 'skipped');
  assert.doesNotMatch(ping?.observed ?? '', /sends no PING/);
  assert.match(ping?.observed ?? '', /Discord's endpoint check/);
});

test("malformed-json names the code that parses the body (Discord's verifyKeyMiddleware), not verifyKey, which only verifies", async () => {
  // The receiver on discord-interactions itself: verifyKeyMiddleware refuses a body it cannot parse.
  const r = await checkReceiver('discord', official('discord'), { only: ['valid', 'malformed-json'] });
  const c = r.cases.find((x) => x.name === 'malformed-json');
  assert.equal(c?.status, 'pass', explain(r));
  assert.match(c?.observed ?? '', /^400: refused, as discord-interactions' verifyKeyMiddleware does/);
});

test("a Go receiver's raw-body fix is Go's (io.ReadAll), not express.raw, Flask or Django", async () => {
  // `go run .` on a PATH whose go is this stand-in: the receiver is the Python one, joining lines.
  const bin = tempDir();
  const go = join(bin, 'go');
  const receiver = python('stripe', 'join-lines');
  writeFileSync(go, `#!/bin/sh\nexec ${receiver.command}\n`);
  chmodSync(go, 0o755);
  const r = await checkReceiver(
    'stripe',
    { command: `PATH=${bin}:$PATH go run ./cmd/webhooks`, stored: receiver.stored },
    { only: ['valid'] },
  );
  const valid = r.cases.find((c) => c.name === 'valid');
  assert.equal(valid?.status, 'fail', explain(r));
  assert.match(valid?.diagnosis ?? '', /io\.ReadAll\(r\.Body\)/);
  assert.doesNotMatch(valid?.diagnosis ?? '', /express|Flask|Django/);
});

test('chaos: for a provider whose profile never retries (GitHub), what was acknowledged after the restart is a redelivery, not "a retry"', async () => {
  const { run: chaos } = await import('../src/chaos/run.js');
  const { renderChaos } = await import('../src/render/chaos.js');
  const { freePort } = await import('./helpers/ports.js');
  const { SECRET } = await import('./helpers/verdicts.js');
  const r = python('github');
  const port = await freePort();
  const result = await chaos({
    receiver: r.command,
    url: `http://127.0.0.1:${port}/`,
    provider: 'github',
    secrets: [SECRET.github as string],
    stored: r.stored,
    rounds: 1,
    events: 5,
  });
  // Whether a kill cut a delivery off before its answer is the machine's timing: the words are
  // judged on a round as it is when one was.
  const cut = { ...result, rounds: result.rounds.map((x) => ({ ...x, acknowledgedAfterRestart: 2 })) };
  const text = renderChaos(cut);
  assert.match(text, /\(2 on a redelivery after the restart, as a person would press Redeliver\)/);
  assert.doesNotMatch(text, /on a retry after the restart/);
});
