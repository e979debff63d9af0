import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { OAuth2Client } from 'google-auth-library';
import { hookdrill } from './helpers/cli.js';
import { freePort } from './helpers/ports.js';
import { tempDir } from './helpers/tmp.js';

// A team's own platform that signs a JWT (issue 55): declared in its project file with
// signature.scheme jwt, sent by `hookdrill send` as a real process, and judged by a JWT library
// that is not hookdrill's — google-auth-library's verifySignedJwtWithCertsAsync, with the keys the
// local key server served while send ran, the declared issuer and the URL posted to as audience.
const ISSUER = 'https://auth.ledger.example';

const ledger = {
  title: 'Ledger',
  signature: { scheme: 'jwt', issuer: ISSUER, lifetime: '10m', claims: { email: 'webhooks@ledger.example' } },
  id: { body: 'id' },
  eventType: { body: 'type' },
  timeout: '10s',
  retries: ['1m'],
  fixtures: 'webhooks',
  fixture: 'entry.posted',
};

function project(declaration: Record<string, unknown> = ledger): string {
  const dir = tempDir();
  writeFileSync(join(dir, 'hookdrill.config.json'), JSON.stringify({ provider: 'ledger', providers: { ledger: declaration } }));
  mkdirSync(join(dir, 'webhooks'));
  writeFileSync(join(dir, 'webhooks', 'entry.posted.json'), JSON.stringify({ id: 'ent_1', type: 'entry.posted', amount: 4200 }));
  return dir;
}

test('a declared jwt scheme: send posts Authorization: Bearer <RS256 token> that a JWT library verifies with the served keys, for the URL posted to and the declared issuer; another audience is refused', async () => {
  const dir = project();
  const port = await freePort();
  const env = { HOOKDRILL_KEYS_DIR: join(dir, 'keys'), HOOKDRILL_JWKS_PORT: String(port) };
  let seen: { authorization: string; certs: Record<string, string>; jwks: { keys: { kid: string }[] } } | undefined;
  const server = createServer(async (req, res) => {
    // While send waits on this answer its key server runs: the keys are fetched from it, as a receiver would.
    const certs = (await (await fetch(`http://127.0.0.1:${port}/oauth2/v1/certs`)).json()) as Record<string, string>;
    const jwks = (await (await fetch(`http://127.0.0.1:${port}/oauth2/v3/certs`)).json()) as { keys: { kid: string }[] };
    seen = { authorization: String(req.headers.authorization), certs, jwks };
    req.resume();
    res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
    const sent = await hookdrill(['send', '--url', url, '--no-retry'], env, [], dir);
    assert.equal(sent.code, 0, sent.stderr);
    assert.ok(seen);
    assert.match(seen.authorization, /^Bearer [\w-]+\.[\w-]+\.[\w-]+$/);
    const token = seen.authorization.slice('Bearer '.length);
    const google = new OAuth2Client();
    const ticket = await google.verifySignedJwtWithCertsAsync(token, seen.certs, url, [ISSUER]);
    const claims = ticket.getPayload();
    assert.equal(claims?.email, 'webhooks@ledger.example');
    assert.equal((claims?.exp ?? 0) - (claims?.iat ?? 0), 600, 'the declared lifetime');
    await assert.rejects(
      google.verifySignedJwtWithCertsAsync(token, seen.certs, 'https://elsewhere.example/hooks', [ISSUER]),
      /Wrong recipient/,
    );
    await assert.rejects(google.verifySignedJwtWithCertsAsync(token, seen.certs, url, ['https://accounts.google.com']), /Invalid issuer/);
    // `hookdrill keys ledger` prints the JWKS a receiver is configured with: the key the token names.
    const keys = await hookdrill(['keys', 'ledger'], env, [], dir);
    assert.equal(keys.code, 0, keys.stderr);
    const printed = JSON.parse(keys.stdout.split('\n')[0] as string) as { keys: { kid: string }[] };
    assert.deepEqual(
      printed.keys.map((k) => k.kid),
      seen.jwks.keys.map((k) => k.kid),
    );
    assert.ok(!keys.stdout.includes('PRIVATE'), 'the private key is never printed');
  } finally {
    server.close();
  }
});

test('a jwt declaration that cannot be sent is one line naming the field, exit 2', async () => {
  for (const [change, field] of [
    [{ timestamp: { header: 'Ledger-Time' } }, 'providers.ledger.timestamp: a jwt carries its own time'],
    [{ signature: { ...ledger.signature, claims: { aud: 'x' } } }, 'providers.ledger.signature.claims.aud: is written by hookdrill'],
    [{ signature: { ...ledger.signature, algorithm: 'HS256' } }, 'providers.ledger.signature.algorithm: must be RS256'],
    [{ signature: { ...ledger.signature, lifetime: '2d' } }, 'providers.ledger.signature.lifetime: 2d is outside 1m to 1d'],
    [{ signature: { scheme: 'jwt' } }, 'providers.ledger.signature.issuer: must be a non-empty string'],
  ] as const) {
    const r = await hookdrill(['send', '--url', 'http://127.0.0.1:9/'], {}, [], project({ ...ledger, ...change }));
    assert.equal(r.code, 2, r.stderr);
    assert.equal(r.stderr.trim().split('\n').length, 1, r.stderr);
    assert.ok(r.stderr.includes(field), `${field}: ${r.stderr}`);
  }
});
