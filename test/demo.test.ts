import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { hookdrill } from './helpers/cli.js';

test('demo --json: the figures measured in the run show each contrast', async () => {
  const before = new Set(readdirSync(tmpdir()).filter((f) => f.startsWith('hookdrill-demo-')));
  const r = await hookdrill(['demo', '--json']);
  assert.equal(r.code, 0, r.stderr);
  const d = JSON.parse(r.stdout);
  assert.equal(d.ok, true, d.surprises?.join('; '));
  // 1. Inline: every attempt timed out and each one updated the CRM; queue-first: one and one.
  assert.equal(d.inlineVsQueue.inline.attempts, 4);
  assert.equal(d.inlineVsQueue.inline.timedOut, 4);
  assert.equal(d.inlineVsQueue.inline.crmUpdates, 4);
  assert.equal(d.inlineVsQueue.queueFirst.attempts, 1);
  assert.equal(d.inlineVsQueue.queueFirst.answered2xx, 1);
  assert.equal(d.inlineVsQueue.queueFirst.pendingBeforeWorker, 1);
  assert.equal(d.inlineVsQueue.queueFirst.doneAfterWorker, 1);
  assert.equal(d.inlineVsQueue.queueFirst.crmUpdates, 1);
  // 2. Killed after the acks: ack-first loses them all, store-first none.
  assert.deepEqual(d.ackVsStore.ackFirst, { sent: 3, acknowledged: 3, processed: 0 });
  assert.deepEqual(d.ackVsStore.storeFirst, { sent: 3, acknowledged: 3, processed: 3 });
  // 3. Unsigned flood: only the store-then-verify receiver keeps it.
  assert.equal(d.verifyOrder.storeThenVerify.rows, 200);
  assert.ok(d.verifyOrder.storeThenVerify.bytes > 200 * 200);
  assert.equal(d.verifyOrder.verifyThenStore.rows, 0);
  assert.equal(d.verifyOrder.verifyThenStore.answered2xx, 0);
  // The temporary directory is gone.
  const after = readdirSync(tmpdir()).filter((f) => f.startsWith('hookdrill-demo-') && !before.has(f));
  assert.deepEqual(after, []);
});

test('demo as a person reads it: each contrast printed as it is measured, nothing wider than 80 columns, every row of the third section says what it shows, and the end points at check and chaos', async () => {
  const { spawnHookdrill } = await import('./helpers/spawned.js');
  const p = spawnHookdrill(['demo'], { NO_COLOR: '1' });
  const text = () => p.lines.map((l) => String(l.text ?? '')).join('\n');
  // The first contrast is on screen while the rest still runs: the footer is not there yet.
  await p.waitFor((l) => /^1\. Inline work vs queue-first/.test(String(l.text)), 30_000);
  await p.waitFor((l) => /^ {2}queue-first/.test(String(l.text)), 30_000);
  assert.doesNotMatch(text(), /The safe order/, 'section 1 was printed before the demo ended');
  assert.equal(await p.exit, 0, p.stderr());
  const out = `${text()}\n`;
  assert.deepEqual(
    out.split('\n').filter((l) => [...l].length > 80),
    [],
    'every line fits 80 columns',
  );
  const third = out.slice(out.indexOf('3. Store-then-verify'));
  assert.match(third, /store-then-verify +200 +[\d.]+ KiB\n +refused every one, and kept them:\n +anyone can fill your inbox/);
  assert.match(third, /verify-then-store +0 +0 B\n +refused every one before a byte was written/);
  assert.doesNotMatch(third, /answered 2xx/, 'no column that reads 0 on both sides');
  assert.match(out, /\n {2}hookdrill check --receiver "node server\.js" \\\n {4}--url \S+ --provider stripe --secret whsec_…\n/);
  assert.match(out, /\n {2}hookdrill chaos --receiver "node server\.js" \\\n.*\n {4}--stored "<prints stored ids>"\n$/);
  assert.doesNotMatch(out, /send --help/);
});
