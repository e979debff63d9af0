/**
 * Issue 53: false verdicts a new user met on a first day, each held to what the provider would say,
 * with a Python receiver wrong (or merely different) in exactly that way.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SECRET, checkReceiver, explain, named, python } from './helpers/verdicts.js';
import { freePort } from './helpers/ports.js';
import { live } from './helpers/live.js';
import { tempDir } from './helpers/tmp.js';
import { run as chaos } from '../src/chaos/run.js';

/** The file of ids the Python receiver's command stores into. */
const storeOf = (command: string) => /--store (\S+)/.exec(command)?.[1] as string;
const held = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean).length : 0);

test('a GitHub receiver that verifies only the legacy X-Hub-Signature (SHA-1), which GitHub still sends, passes check with a warning to move to SHA-256', async () => {
  const r = await checkReceiver('github', python('github', 'sha1-only'));
  // Every forgery it took carried no valid SHA-1 signature: as GitHub would judge it, it works.
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  assert.equal(r.ok, true);
  assert.deepEqual(named(r, 'warn'), ['legacy-signature'], explain(r));
  const warn = r.cases.find((c) => c.name === 'legacy-signature');
  assert.match(warn?.diagnosis ?? '', /X-Hub-Signature \(HMAC-SHA1\).*X-Hub-Signature-256/, explain(r));
  // The right receiver (SHA-256) passes the same case without a warning.
  const right = await checkReceiver('github', python('github'), { only: 'valid,wrong-secret,legacy-signature,missing-signature' });
  assert.deepEqual(named(right, 'warn'), [], explain(right));
  assert.deepEqual(named(right, 'fail'), [], explain(right));
});

test('oversized-body: a receiver with no body cap of its own (behind a proxy that holds it) passes with a warning, not a failure', async () => {
  const r = await checkReceiver('github', python('github', 'no-body-cap'), { only: 'valid,oversized-body' });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  assert.equal(r.ok, true);
  const c = r.cases.find((x) => x.name === 'oversized-body');
  assert.equal(c?.status, 'warn', explain(r));
  assert.match(c?.diagnosis ?? '', /GitHub sends at most 25 MB/, explain(r));
  assert.match(c?.diagnosis ?? '', /proxy/, explain(r));
});

test('a GitHub receiver keyed on X-GitHub-Hook-ID, not X-GitHub-Delivery, is a finding against it (exit 1), named so — not bad input', async () => {
  const r = await checkReceiver('github', python('github', 'hook-id-key'));
  assert.equal(r.ok, false);
  assert.deepEqual(named(r, 'fail'), ['valid'], explain(r));
  const valid = r.cases.find((c) => c.name === 'valid');
  assert.match(valid?.diagnosis ?? '', /stores deliveries under X-GitHub-Hook-ID/, explain(r));
  assert.match(valid?.diagnosis ?? '', /X-GitHub-Delivery/, explain(r));
  assert.match(valid?.diagnosis ?? '', /X-GitHub-Hook-ID is the same on distinct deliveries.*drop every other as a duplicate/, explain(r));
});

test('a receiver that answers 200 and stores the delivery after it is told so, not that it stores nothing', async () => {
  // The store lands half a second after the 200 (a slow insert of a large row, off the request's thread).
  const r = await checkReceiver('github', python('github', 'ack-first', '--store-after 0.5'), { only: 'valid,large-body' });
  assert.equal(r.ok, false);
  const failed = r.cases.filter((c) => c.status === 'fail');
  assert.ok(failed.length > 0, explain(r));
  for (const c of failed) {
    assert.match(c.diagnosis ?? '', /answered 2xx before storing/, explain(r));
    assert.doesNotMatch(c.diagnosis ?? '', /does not store/, explain(r));
  }
});

for (const [sig, code] of [
  ['SIGINT', 130],
  ['SIGTERM', 143],
] as const) {
  test(`chaos against a right receiver stopped by ${sig} mid-run: exit ${code}, said to be interrupted, nothing it did not finish counted lost or never acknowledged, the JUnit marks it skipped`, async () => {
    // Slow enough (20 ms an answer, two at a time) that a round's sending is under way when the signal comes.
    const r = python('stripe', '', '--answer-after 0.02');
    const file = storeOf(r.command);
    const junit = join(tempDir(), 'chaos.xml');
    const port = await freePort();
    const p = live(
      [
        'chaos',
        '--receiver',
        r.command,
        '--url',
        `http://127.0.0.1:${port}/`,
        '--provider',
        'stripe',
        '--stored',
        r.stored,
        '--events',
        '40',
        '--concurrency',
        '2',
        '--rounds',
        '10000',
        '--junit',
        junit,
      ],
      SECRET.stripe as string,
    );
    const deadline = Date.now() + 30_000;
    while (held(file) < 45) {
      assert.ok(Date.now() < deadline, `chaos never got going: ${p.err()}`);
      await new Promise((res) => setTimeout(res, 20));
    }
    p.child.kill(sig);
    assert.equal(await p.exit, code, p.out() + p.err());
    const out = p.out();
    assert.match(out, /interrupted/);
    // A right receiver is blamed for nothing: no loss, no refusal, no "it refused what it already had".
    assert.doesNotMatch(out, /[1-9]\d* (lost|never acknowledged)|refused what it already had/, out);
    assert.doesNotMatch(out, /^FAIL /m, out);
    assert.match(out, /not judged/, out);
    const xml = readFileSync(junit, 'utf8');
    assert.doesNotMatch(xml, /<failure/, xml);
    assert.match(xml, /<skipped message="not judged: interrupted/, xml);
    assert.doesNotMatch(execFileSync('ps', ['-eo', 'args']).toString(), new RegExp(file));
  });
}

test("chaos with its defaults catches a receiver that answers 200 and stores ~2 ms later (Go's `go save()`): several kills, a loss named", async () => {
  // No --rounds, no --events: what a new user runs first, and what the demo's closing hint gives.
  const r = python('stripe', 'ack-first');
  const port = await freePort();
  const result = await chaos({
    receiver: r.command,
    url: `http://127.0.0.1:${port}/`,
    provider: 'stripe',
    secrets: [SECRET.stripe as string],
    stored: r.stored,
  });
  // One kill is one chance, which a store 2 ms after the 200 escapes about one run in ten.
  assert.ok(result.totals.kills > 1, `${result.totals.kills} kills`);
  assert.equal(result.ok, false, JSON.stringify(result.totals));
  assert.ok(result.totals.lost.length > 0, JSON.stringify(result.rounds.map((x) => x.lost.length)));
  assert.ok(
    result.problems.some((p) => /acknowledged deliver(y was|ies were) lost/.test(p)),
    result.problems.join('\n'),
  );
});
