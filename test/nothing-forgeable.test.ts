import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, relative } from 'node:path';
import { providers } from '../src/providers/index.js';
import { startListenFor, stopAll } from './helpers/listen.js';
import { spawnHookdrill } from './helpers/spawned.js';
import { hookdrill } from './helpers/cli.js';
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

/** A URL-bound provider's event, signed for `signedFor`, POSTed to `url` with the given extra headers. */
async function postSignedFor(
  provider: 'square' | 'hubspot',
  url: string,
  signedFor: string,
  secret: string,
  extra: Record<string, string>,
) {
  const id = `evt-${Math.random().toString(36).slice(2)}`;
  const body = Buffer.from(
    provider === 'square'
      ? JSON.stringify({ merchant_id: 'M1', type: 'payment.updated', event_id: id, created_at: new Date().toISOString(), data: {} })
      : JSON.stringify([{ eventId: Date.now(), subscriptionType: 'contact.creation', occurredAt: Date.now(), objectId: 1 }]),
  );
  const headers = providers[provider].sign(body, [secret], { nowMs: Date.now(), deliveryId: id, eventType: 'x', url: signedFor });
  const res = await fetch(url, { method: 'POST', body, headers: { ...headers, ...extra } });
  await res.arrayBuffer();
  return res.status;
}

for (const provider of ['square', 'hubspot'] as const) {
  test(`${provider}: no client header chooses the URL a signature is checked against (listen needs --public-url or --trust-proxy; a trusted proxy's value is the right-most)`, async () => {
    const SECRET = `${provider}-signature-key`;
    const OTHER = 'https://other.example.com/webhooks/another-endpoint';
    // Without either, listen does not start: rebuilt from the request, the URL is the client's choice.
    const bare = spawnHookdrill([
      'listen',
      '--json',
      '--port',
      '0',
      '--provider',
      provider,
      '--secret',
      SECRET,
      '--inbox',
      join(tempDir(), 'a.db'),
    ]);
    const started = await Promise.race([
      bare.waitFor((l) => l.event === 'ready', 15_000).catch(() => undefined),
      bare.exit.then(() => undefined),
    ]);
    if (started) {
      // What the old code did: a delivery signed for another endpoint, its URL named by the client.
      const other = new URL(OTHER);
      const status = await postSignedFor(provider, String(started.url), `https://${other.host}/`, SECRET, {
        'X-Forwarded-Proto': 'https',
        'X-Forwarded-Host': other.host,
      });
      bare.child.kill('SIGKILL');
      await bare.exit;
      assert.fail(`listen started with no --public-url and answered a delivery signed for another endpoint ${status}`);
    }
    assert.equal(await bare.exit, 2, bare.stderr());
    assert.match(bare.stderr(), /--public-url/);

    const PUBLIC = 'https://hooks.example.com/square/hooks';
    const fixed = await startListenFor(provider, join(tempDir(), 'b.db'), SECRET, '--public-url', PUBLIC);
    try {
      // Signed for another endpoint, with every header a client can set pointing there: refused.
      const other = new URL(OTHER);
      const forged = { 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': other.host, Host: other.host };
      assert.equal(await postSignedFor(provider, fixed.url, OTHER, SECRET, forged), 401);
      assert.equal(await postSignedFor(provider, fixed.url, PUBLIC, SECRET, {}), 200);
    } finally {
      await stopAll(fixed.p);
    }

    const proxied = await startListenFor(provider, join(tempDir(), 'c.db'), SECRET, '--trust-proxy');
    try {
      const proxy = { proto: 'https', host: 'hooks.example.com' };
      const real = `${proxy.proto}://${proxy.host}/`;
      // A client's own X-Forwarded-* come first; the proxy appends its own: only the last counts.
      const other = new URL(OTHER);
      const chained = { 'X-Forwarded-Proto': `https, ${proxy.proto}`, 'X-Forwarded-Host': `${other.host}, ${proxy.host}` };
      assert.equal(await postSignedFor(provider, proxied.url, `https://${other.host}/`, SECRET, chained), 401);
      assert.equal(await postSignedFor(provider, proxied.url, real, SECRET, chained), 200);
    } finally {
      await stopAll(proxied.p);
    }
  });
}

test("a cloned repository's project file runs no command the flags did not ask for: check --url elsewhere never runs the file's stored, receiver or processed", async () => {
  const dir = tempDir();
  const marker = join(dir, 'ran');
  writeFileSync(
    join(dir, 'hookdrill.config.json'),
    JSON.stringify({
      provider: 'stripe',
      url: 'http://127.0.0.1:1/',
      receiver: `touch ${marker}-receiver; sleep 60`,
      stored: `touch ${marker}-stored; echo none`,
      processed: `touch ${marker}-processed; echo none`,
    }),
  );
  const SECRET = 'whsec_Y2xvbmVkLXJlcG8tc2VjcmV0';
  const { p, url } = await startListenFor('stripe', join(tempDir(), 'inbox.db'), SECRET);
  try {
    const r = await hookdrill(['check', '--url', url, '--provider', 'stripe', '--secret', SECRET, '--only', 'valid'], {}, [], dir, 60_000);
    for (const what of ['receiver', 'stored', 'processed']) assert.ok(!existsSync(`${marker}-${what}`), `the file's ${what} command ran`);
    assert.equal(r.code, 0, r.stdout + r.stderr);
  } finally {
    await stopAll(p);
  }
});

test("a declared provider's fixtures folder stays inside the project: an absolute path, a ../ path or a link out is refused, nothing is sent", async () => {
  const outside = tempDir();
  writeFileSync(join(outside, 'private.json'), JSON.stringify({ type: 'x', token: 'not-for-you' }));
  const received: string[] = [];
  const app = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      received.push(body);
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => app.listen(0, '127.0.0.1', r));
  const target = `http://127.0.0.1:${(app.address() as AddressInfo).port}/`;
  const declaration = (fixtures: string) => ({
    signature: { header: 'Acme-Signature', algorithm: 'sha256', encoding: 'hex', content: '{body}' },
    id: { header: 'Acme-Delivery' },
    eventType: { body: 'type' },
    timeout: '5s',
    fixtures,
  });
  try {
    for (const [what, fixtures, link] of [
      ['an absolute path', outside, undefined],
      ['a ../ path', relative(tempDir(), outside), undefined],
      ['a folder that is a link out', 'hooks', 'dir'],
      ['a file that is a link out', 'hooks', 'file'],
    ] as const) {
      const dir = tempDir();
      let folder = fixtures;
      if (what === 'a ../ path') folder = relative(dir, outside);
      if (link === 'dir') symlinkSync(outside, join(dir, 'hooks'));
      if (link === 'file') {
        mkdirSync(join(dir, 'hooks'));
        symlinkSync(join(outside, 'private.json'), join(dir, 'hooks', 'private.json'));
      }
      writeFileSync(join(dir, 'hookdrill.config.json'), JSON.stringify({ providers: { acme: declaration(folder) } }));
      const r = await hookdrill(['send', 'acme/private', '--url', target, '--secret', 'acme-secret', '--no-retry'], {}, [], dir, 30_000);
      assert.equal(r.code, 2, `${what}: ${r.stdout}${r.stderr}`);
      assert.match(r.stderr, /outside the project|link out/, what);
      assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    }
    assert.deepEqual(received, [], 'nothing was posted');
  } finally {
    app.close();
  }
});

test('every command that takes --secret takes it from a variable or a file too, and a listen given one carries no secret in its argv', async () => {
  for (const command of ['send', 'check', 'chaos', 'listen', 'replay', 'verify', 'ui', 'keys', 'scenario', 'pull', 'reconcile']) {
    const help = await hookdrill([command, '--help']);
    assert.match(help.stdout, /--secret-env <name>/, command);
    assert.match(help.stdout, /--secret-file <path>/, command);
    assert.match(help.stdout.replace(/\s+/g, ' '), /visible to every local user/, command);
  }
  const SECRET = 'whsec_c2VjcmV0LWZyb20tYS1maWxl';
  const dir = tempDir();
  writeFileSync(join(dir, 'secret'), `${SECRET}\n`, { mode: 0o600 });
  const p = spawnHookdrill([
    'listen',
    '--json',
    '--port',
    '0',
    '--provider',
    'stripe',
    '--secret-file',
    join(dir, 'secret'),
    '--inbox',
    join(dir, 'i.db'),
  ]);
  try {
    const ready = await p.waitFor((l) => l.event === 'ready', 15_000);
    const argv = readFileSync(`/proc/${p.child.pid}/cmdline`, 'utf8');
    assert.ok(!argv.includes(SECRET), 'the secret is not in the process list');
    const sent = await hookdrill(
      ['send', '--provider', 'stripe', '--secret-env', 'MY_STRIPE_SECRET', '--url', String(ready.url), '--no-retry'],
      {
        MY_STRIPE_SECRET: SECRET,
      },
    );
    assert.equal(sent.code, 0, sent.stdout + sent.stderr);
    await p.waitFor((l) => l.event === 'request' && l.result === 'stored', 10_000);
    const unset = await hookdrill(['send', '--provider', 'stripe', '--secret-env', 'NOT_SET_HERE', '--url', String(ready.url)]);
    assert.equal(unset.code, 2);
    assert.match(unset.stderr, /^hookdrill: --secret-env NOT_SET_HERE: the variable is not set\n$/);
  } finally {
    await stopAll(p);
  }
});

test('an imported capture whose signature is garbage is forwarded unsigned and marked, never re-signed with the real secret; one whose captured signature verifies is signed anew', async () => {
  const SECRET = 'whsec_aW1wb3J0ZWQtY2FwdHVyZXMtc2VjcmV0';
  const dir = tempDir();
  const capturedAt = Date.parse('2026-11-30T03:04:05.000Z');
  const entry = (signature: string, body: string) => ({
    startedDateTime: new Date(capturedAt).toISOString(),
    request: {
      method: 'POST',
      url: 'https://example.com/hooks',
      headers: [
        { name: 'Content-Type', value: 'application/json' },
        { name: 'Stripe-Signature', value: signature },
      ],
      postData: { mimeType: 'application/json', text: body },
    },
  });
  const event = (id: string) => JSON.stringify({ id, object: 'event', type: 'charge.refunded', data: { object: { amount: 999999 } } });
  const real = event('evt_captured_real');
  const realSig = providers.stripe.sign(Buffer.from(real), [SECRET], {
    nowMs: capturedAt,
    deliveryId: 'evt_captured_real',
    eventType: 'charge.refunded',
  });
  const har = {
    log: {
      version: '1.2',
      entries: [
        entry('t=1764471845,v1=0000000000000000000000000000000000000000000000000000000000000000', event('evt_forged')),
        entry(String(realSig['Stripe-Signature']), real),
      ],
    },
  };
  writeFileSync(join(dir, 'capture.har'), JSON.stringify(har));
  const inbox = join(dir, 'inbox.db');
  const imported = await hookdrill(['import', join(dir, 'capture.har'), '--inbox', inbox, '--provider', 'stripe']);
  assert.equal(imported.code, 0, imported.stdout + imported.stderr);

  const got = new Map<string, Record<string, string | string[] | undefined> & { body: string }>();
  const app = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      got.set(JSON.parse(body).id, { ...req.headers, body });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => app.listen(0, '127.0.0.1', r));
  const { p } = await startListenFor('stripe', inbox, SECRET, '--forward-to', `http://127.0.0.1:${(app.address() as AddressInfo).port}/`);
  try {
    for (let i = 0; i < 300 && got.size < 2; i++) await new Promise((r) => setTimeout(r, 100));
    const forged = got.get('evt_forged');
    assert.ok(forged, 'the forged capture was forwarded');
    assert.equal(forged['stripe-signature'], undefined, 'with no signature');
    assert.match(String(forged['x-hookdrill-unverified']), /imported/);
    const kept = got.get('evt_captured_real');
    assert.ok(kept);
    assert.equal(kept['x-hookdrill-unverified'], undefined);
    assert.doesNotThrow(() => providers.stripe.verify(Buffer.from(kept.body), kept, [SECRET]), 'signed anew, verifying now');
  } finally {
    await stopAll(p);
    app.close();
  }
});

test('verify and "why?" judge a URL-bound signature over the URL: a Square capture is VALID over its own URL, and one signed for another URL is told so, by verify and by listen --ui', async () => {
  const SECRET = 'square-signature-key';
  const PUBLIC = 'https://shop.example.com/square/hooks';
  const body = Buffer.from(JSON.stringify({ merchant_id: 'M1', type: 'payment.updated', event_id: 'e-1', data: {} }));
  const sign = (url: string) =>
    providers.square.sign(body, [SECRET], { nowMs: Date.now(), deliveryId: 'e-1', eventType: 'payment.updated', url });
  const dir = tempDir();
  const har = (url: string, signedFor: string) => {
    const file = join(dir, `${Math.random().toString(36).slice(2)}.har`);
    const headers = Object.entries(sign(signedFor)).map(([name, value]) => ({ name, value: String(value) }));
    writeFileSync(
      file,
      JSON.stringify({
        log: {
          version: '1.2',
          entries: [{ request: { method: 'POST', url, headers, postData: { mimeType: 'application/json', text: body.toString() } } }],
        },
      }),
    );
    return file;
  };
  const ok = await hookdrill(['verify', har(PUBLIC, PUBLIC), '--provider', 'square', '--secret', SECRET]);
  assert.equal(ok.code, 0, ok.stdout + ok.stderr);
  assert.match(ok.stdout, /shop\.example\.com\/square\/hooks/);
  const told = await hookdrill([
    'verify',
    har(PUBLIC, PUBLIC),
    '--provider',
    'square',
    '--secret',
    SECRET,
    '--public-url',
    'https://shop.example.com/other',
  ]);
  assert.equal(told.code, 1, told.stdout + told.stderr);
  assert.match(told.stdout, /signed for https:\/\/shop\.example\.com\/square\/hooks, not for https:\/\/shop\.example\.com\/other/);

  const { p, url } = await startListenFor('square', join(dir, 'inbox.db'), SECRET, '--public-url', PUBLIC, '--ui', '0', '--no-worker');
  try {
    for (let i = 0; i < 100 && !/the inbox in a browser: http/.test(p.stderr()); i++) await new Promise((r) => setTimeout(r, 100));
    const pageUrl = /the inbox in a browser: (http:\/\/\S+)/.exec(p.stderr())?.[1] as string;
    // Signed for another endpoint, its URL named by the client's own X-Forwarded-* (the audit's forgery).
    const OTHER = 'https://other.example.com/';
    const forged = { ...sign(OTHER), 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'other.example.com' };
    assert.equal((await fetch(url, { method: 'POST', body, headers: forged })).status, 401);
    const token = new URL(pageUrl).searchParams.get('token') as string;
    const detail = (await (await fetch(new URL('/api/refused/r1', pageUrl), { headers: { 'x-hookdrill-token': token } })).json()) as {
      explanation: { code: string; findings: string[] };
    };
    assert.match(detail.explanation.findings.join('\n'), new RegExp(`signed for ${OTHER}, not for ${PUBLIC}`));
    // From a terminal, the token from the environment rather than argv.
    const cli = await hookdrill(
      ['verify', '--ui', new URL(pageUrl).origin, '--refused', 'r1', '--secret', SECRET, '--public-url', PUBLIC],
      {
        HOOKDRILL_UI_TOKEN: token,
      },
    );
    assert.equal(cli.code, 1, cli.stderr);
    assert.match(cli.stdout, /signed for https:\/\/other\.example\.com\/, not for/);
  } finally {
    await stopAll(p);
  }
});
