import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { openSqliteInbox } from '../src/inbox/sqlite/index.js';
import { startUi } from '../src/ui/server.js';
import { tempDir } from './helpers/tmp.js';

// The inspector's "copy as curl" signs a stored delivery now and shows the command on the page.
// For a scheme that signs, the command holds a signature and never the secret. For one whose
// request carries the secret itself (GitLab's X-Gitlab-Token, Basic credentials, Graph's
// clientState) the command would be the secret in the page and in the shell's history: none is made.
const SECRET = 'glpat-like-token-which-must-not-be-printed';

async function curlFor(provider: string, id: string, body: string): Promise<{ status: number; text: string }> {
  const path = join(tempDir(), 'inbox.db');
  const inbox = openSqliteInbox(path);
  await inbox.put({ source: provider, deliveryId: id, eventType: 'push', body: Buffer.from(body), headers: {}, receivedAt: Date.now() });
  await inbox.close();
  const ui = await startUi({ inbox: path, port: 0, token: 'tok', provider, secrets: [SECRET] });
  try {
    const res = await fetch(`${ui.url}api/curl?id=${encodeURIComponent(id)}&to=${encodeURIComponent('http://127.0.0.1:9/hook')}`, {
      headers: { 'x-hookdrill-token': 'tok' },
    });
    return { status: res.status, text: await res.text() };
  } finally {
    await ui.close();
  }
}

test('copy as curl: a GitLab delivery (its token is the secret) gets no command, and says why, the token nowhere', async () => {
  const r = await curlFor('gitlab', 'd-1', '{"object_kind":"push"}');
  assert.equal(r.status, 400, r.text);
  assert.match(r.text, /sends the secret itself \(X-Gitlab-Token\), not a signature: no curl command is shown/);
  assert.ok(!r.text.includes(SECRET), r.text);
});

test('copy as curl: a Stripe delivery gets a command with a fresh signature, not the secret', async () => {
  const r = await curlFor('stripe', 'evt_1', '{"id":"evt_1","type":"invoice.paid"}');
  assert.equal(r.status, 200, r.text);
  assert.match(r.text, /stripe-signature: t=\d+,v1=[0-9a-f]{64}/i);
  assert.ok(!r.text.includes(SECRET), r.text);
});
