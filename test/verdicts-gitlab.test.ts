import { test } from 'node:test';
import assert from 'node:assert/strict';
import { run as send } from '../src/delivery/send.js';
import { reply, startServer } from './helpers/server.js';
import { checkReceiver, explain, named, python, SECRET } from './helpers/verdicts.js';
import { hookdrill } from './helpers/cli.js';

/**
 * GitLab (issue 55): a sender that signs nothing — it sends the hook's secret token as it is in
 * X-Gitlab-Token — judged by `check` on the declaration engine's token scheme. A Python receiver
 * right by GitLab's documented rule (the token compared in constant time, each event kept once by
 * its Idempotency-Key) passes; one that compares the token but keys on X-Gitlab-Webhook-UUID, new
 * on every request, stores a resent event twice and fails duplicate, with the reason. (A receiver
 * comparing with `==` is right on the wire: its timing leak is not something check can see.)
 */

const status = (r: Awaited<ReturnType<typeof checkReceiver>>, name: string) => r.cases.find((c) => c.name === name);

test('GitLab: a receiver comparing X-Gitlab-Token in constant time and keyed on Idempotency-Key passes; what a token cannot cover is skipped and said', async () => {
  const r = await checkReceiver('gitlab', python('gitlab'), {
    only: 'valid,duplicate,wrong-secret,missing-signature,wrong-length-signature,flipped-byte,reserialized,stale-timestamp,rotation,related',
  });
  assert.deepEqual(named(r, 'fail'), [], explain(r));
  for (const name of ['valid', 'duplicate', 'wrong-secret', 'missing-signature', 'wrong-length-signature', 'related'])
    assert.equal(status(r, name)?.status, 'pass', `${name}: ${explain(r)}`);
  // A token does not sign the body: a receiver that takes a changed body under the right token is
  // right, so check demands nothing of it, and says why.
  const flipped = status(r, 'flipped-byte');
  assert.equal(flipped?.status, 'skipped');
  assert.match(flipped?.observed ?? '', /does not sign the body.*rightly accepts a body changed in transit/);
  for (const name of ['reserialized', 'stale-timestamp', 'rotation']) {
    assert.equal(status(r, name)?.status, 'skipped', name);
    assert.match(status(r, name)?.observed ?? '', /X-Gitlab-Token, not a signature: the token does not sign the body/, name);
  }
});

test('GitLab: a receiver that compares the token but does not deduplicate fails duplicate: it stores a resent event again', async () => {
  const r = await checkReceiver('gitlab', python('gitlab', 'no-dedupe'), { only: 'valid,duplicate,wrong-secret' });
  assert.equal(status(r, 'valid')?.status, 'pass', explain(r));
  assert.equal(status(r, 'wrong-secret')?.status, 'pass', explain(r));
  const duplicate = status(r, 'duplicate');
  assert.equal(duplicate?.status, 'fail', explain(r));
  assert.match(duplicate?.observed ?? '', /stored 2 times/);
  assert.match(duplicate?.diagnosis ?? '', /stores a copy of a delivery it already holds.*dedupe on GitLab's delivery id/);
});

test('GitLab: a receiver keyed on X-Gitlab-Webhook-UUID (new on every request) is told to key on Idempotency-Key', async () => {
  const r = await checkReceiver('gitlab', python('gitlab', 'gitlab-webhook-uuid-key'), { only: 'valid' });
  const valid = status(r, 'valid');
  assert.equal(valid?.status, 'fail', explain(r));
  assert.match(valid?.diagnosis ?? '', /stores deliveries under X-Gitlab-Webhook-UUID.*key the store on Idempotency-Key/);
});

test("GitLab: send's requests carry what GitLab sends, in build_headers' order, and hold by GitLab's documented rule", async () => {
  const server = await startServer((_req, res) => reply(res, 200));
  const seen = server.requests;
  try {
    const { port } = server;
    await send({
      url: `http://127.0.0.1:${port}/`,
      provider: 'gitlab',
      secrets: [SECRET.gitlab as string],
      fixtures: ['gitlab/push', 'gitlab/issue.open', 'gitlab/merge_request.open', 'gitlab/pipeline'],
      noRetry: true,
    });
    assert.equal(seen.length, 4);
    const events = seen.map((s) => s.headers['x-gitlab-event']);
    assert.deepEqual(events, ['Push Hook', 'Issue Hook', 'Merge Request Hook', 'Pipeline Hook']);
    for (const s of seen) {
      // The documented rule: the token as it is. Nothing else is signed.
      assert.equal(s.headers['x-gitlab-token'], SECRET.gitlab);
      assert.deepEqual(
        s.names.filter((h) => /^(content-type|user-agent|idempotency-key|x-gitlab-)/i.test(h)),
        [
          'Content-Type',
          'User-Agent',
          'Idempotency-Key',
          'X-Gitlab-Event',
          'X-Gitlab-Webhook-UUID',
          'X-Gitlab-Instance',
          'X-Gitlab-Token',
          'X-Gitlab-Event-UUID',
        ],
      );
      assert.equal(s.headers['content-type'], 'application/json');
      assert.match(s.headers['user-agent'] ?? '', /^GitLab\/\d+\.\d+/);
      const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
      for (const h of ['idempotency-key', 'x-gitlab-webhook-uuid', 'x-gitlab-event-uuid']) assert.match(String(s.headers[h]), uuid, h);
      assert.equal(JSON.stringify(JSON.parse(s.rawBody.toString('utf8'))), s.rawBody.toString('utf8'), 'compact JSON');
    }
  } finally {
    await server.close();
  }
});

test('GitLab: a blank token is refused in one line, exit 2, and profiles lists gitlab', async () => {
  const blank = await hookdrill(['send', '--provider', 'gitlab', '--url', 'http://127.0.0.1:9/', '--secret', ' ']);
  assert.equal(blank.code, 2, blank.stderr);
  assert.equal(blank.stderr.trim().split('\n').length, 1, blank.stderr);
  const listed = await hookdrill(['profiles']);
  assert.match(listed.stdout, /^gitlab \(default for gitlab\)$/m);
});
