import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { join } from 'node:path';
import { providers } from '../src/providers/index.js';
import { startListenFor, stopAll } from './helpers/listen.js';
import { tempDir } from './helpers/tmp.js';

/** Issue 54 (nothing forgeable, round three): each item's proof against a real listen on loopback. */

test("Zoom's url_validation is answered with the secret that verified it: during a rotation, the retired one answers only what it signed", async () => {
  const OLD = 'zoom-old-secret-token';
  const NEW = 'zoom-new-secret-token';
  const { p, url } = await startListenFor('zoom', join(tempDir(), 'inbox.db'), OLD, '--secret', NEW);
  try {
    for (const secret of [NEW, OLD]) {
      const plainToken = `token-${secret}`;
      const body = Buffer.from(JSON.stringify({ payload: { plainToken }, event_ts: Date.now(), event: 'endpoint.url_validation' }));
      const headers = providers.zoom.sign(body, [secret], { nowMs: Date.now(), deliveryId: 'x', eventType: 'endpoint.url_validation' });
      const res = await fetch(url, { method: 'POST', body, headers });
      assert.equal(res.status, 200);
      const answer = (await res.json()) as { plainToken: string; encryptedToken: string };
      assert.equal(answer.plainToken, plainToken);
      const expected = createHmac('sha256', secret).update(plainToken).digest('hex');
      assert.equal(answer.encryptedToken, expected, `signed with the ${secret === OLD ? 'old' : 'new'} secret, answered with it`);
    }
  } finally {
    await stopAll(p);
  }
});
