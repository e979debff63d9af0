import assert from 'node:assert/strict';
import { connect } from 'node:net';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { providerNames, providers } from '../src/providers/index.js';
import type { OutgoingHeaders, Provider } from '../src/providers/index.js';
import { headerRefusal } from '../src/receiver/admission.js';
import { hookdrill } from './helpers/cli.js';
import { postSignedStripe, startListen, stopAll } from './helpers/listen.js';
import type { Spawned } from './helpers/spawned.js';
import { tempDir } from './helpers/tmp.js';
import { SECRETS, publicKeyOf } from './helpers/official.js';

/**
 * What listen refuses before it reads a body: anyone who can reach it can send one, and a body is
 * memory while it is read. Each case is against a real `listen` child, over a raw socket, so what
 * is asserted is what was (or was not) written on the wire.
 */

const SECRET = 'whsec_test_admission';
const STANDARD_SECRET = `whsec_${Buffer.from('a key of twenty-four bytes').toString('base64')}`;
/** What a provider signs with here: a secret of its shape (Discord: a private key's seed). */
const signingSecret = (p: Provider) =>
  p.name === 'standard' || p.name === 'svix' ? STANDARD_SECRET : p.keyPair ? (SECRETS[p.name] as string) : 'a-secret';
const running: Spawned[] = [];
after(() => stopAll(...running));

async function listen(...more: string[]): Promise<{ url: URL }> {
  const { p, url } = await startListen(join(tempDir(), 'inbox.db'), SECRET, ...more);
  running.push(p);
  return { url: new URL(url) };
}

/** Open a connection and write a request head (no body): what a sender's first packet holds. */
function openWithHead(url: URL, headers: Record<string, string>): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname, () => {
      const lines = [`POST / HTTP/1.1`, `host: ${url.host}`, ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`), '', ''];
      socket.write(lines.join('\r\n'));
      resolve(socket);
    });
    socket.once('error', reject);
  });
}

/** What the server wrote on this socket until it has written `until` or closed, within ms. */
function readUntil(socket: Socket, until: RegExp, ms = 5_000): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const done = () => {
      clearTimeout(timer);
      resolve(text);
    };
    const timer = setTimeout(done, ms);
    socket.on('data', (d: Buffer) => {
      text += d.toString('latin1');
      if (until.test(text)) done();
    });
    socket.once('close', done);
    socket.once('error', done);
  });
}

function stripeHeaders(nowMs: number, body: Buffer): OutgoingHeaders {
  return providers.stripe.sign(body, [SECRET], { nowMs, deliveryId: 'evt_x', eventType: 'invoice.paid' });
}

describe('refused before the body is read', () => {
  it('an unsigned request declaring 30 MiB gets its 401 before a byte of the body is sent', async () => {
    const { url } = await listen();
    const socket = await openWithHead(url, { 'content-type': 'application/json', 'content-length': String(30 * 1024 * 1024) });
    const answer = await readUntil(socket, /\r\n\r\n/);
    socket.destroy();
    // The old receiver read (and waited for) the whole body before looking at the header: no answer.
    assert.match(answer, /^HTTP\/1\.1 401 /, `no 401 before the body: got ${JSON.stringify(answer.slice(0, 80))}`);
    assert.match(answer, /connection: close/i, 'a connection whose body was not read cannot carry another request');
  });

  it('a Stripe-Signature 56 years stale is refused on its header, before the body', async () => {
    const { url } = await listen();
    const body = Buffer.alloc(20 * 1024 * 1024, 0x20);
    const headers = stripeHeaders(Date.UTC(1970, 0, 2), body);
    const socket = await openWithHead(url, { ...headers, 'content-length': String(body.length) });
    const answer = await readUntil(socket, /\r\n\r\n[\s\S]*\}/);
    socket.destroy();
    assert.match(answer, /^HTTP\/1\.1 401 /);
    assert.match(answer, /stale_timestamp/);
  });

  it('Expect: 100-continue with a Content-Length over --max-bytes gets 413 and no 100 Continue', async () => {
    const { url } = await listen('--max-bytes', '1000');
    const body = Buffer.alloc(5000, 0x20);
    const socket = await openWithHead(url, { ...stripeHeaders(Date.now(), body), 'content-length': '5000', expect: '100-continue' });
    const answer = await readUntil(socket, /\r\n\r\n[\s\S]*\}/);
    socket.destroy();
    // Node answers 100 Continue on its own unless the server judges the request first.
    assert.doesNotMatch(answer, /100 Continue/, `told to send a body it will refuse: ${JSON.stringify(answer.slice(0, 60))}`);
    assert.match(answer, /^HTTP\/1\.1 413 /);
  });

  it('Expect: 100-continue without a signature gets 401 and no 100 Continue', async () => {
    const { url } = await listen();
    const socket = await openWithHead(url, { 'content-type': 'application/json', 'content-length': '100', expect: '100-continue' });
    const answer = await readUntil(socket, /\r\n\r\n[\s\S]*\}/);
    socket.destroy();
    assert.doesNotMatch(answer, /100 Continue/);
    assert.match(answer, /^HTTP\/1\.1 401 /);
  });

  it('a valid delivery sent with Expect: 100-continue is told to go on, and stored', async () => {
    const { url } = await listen();
    const body = Buffer.from(JSON.stringify({ id: 'evt_continue_1', object: 'event', type: 'invoice.paid', data: { object: {} } }));
    const socket = await openWithHead(url, {
      ...stripeHeaders(Date.now(), body),
      'content-type': 'application/json',
      'content-length': String(body.length),
      expect: '100-continue',
    });
    const go = await readUntil(socket, /100 Continue\r\n\r\n/);
    assert.match(go, /^HTTP\/1\.1 100 Continue/);
    socket.write(body);
    const answer = await readUntil(socket, /"ok":true/);
    socket.destroy();
    assert.match(answer, /HTTP\/1\.1 200 [\s\S]*evt_continue_1/);
  });
});

describe('body bytes in flight are capped across connections', () => {
  it('while forged bodies hold the cap, another is answered 503 with Retry-After; once they go, deliveries are stored', async () => {
    const { url } = await listen('--max-bytes', '1048576', '--max-bytes-in-flight', '2097152');
    // Well-formed and fresh, so they cannot be refused on their headers: each holds 1 MiB of the cap.
    const forged = (n: number) => ({
      'stripe-signature': `t=${Math.floor(Date.now() / 1000)},v1=${'ab'.repeat(32)}`,
      'content-type': 'application/json',
      'content-length': String(n),
    });
    const holders = await Promise.all([openWithHead(url, forged(1_048_576)), openWithHead(url, forged(1_048_576))]);
    // Both heads are read before the next request: poll until the cap is full.
    let third = '';
    for (let i = 0; i < 50 && !/^HTTP\/1\.1 503/.test(third); i++) {
      const s = await openWithHead(url, forged(1000));
      third = await readUntil(s, /\r\n\r\n/, 2_000);
      s.destroy();
    }
    assert.match(third, /^HTTP\/1\.1 503 /, `the third body was admitted past the cap: ${JSON.stringify(third.slice(0, 60))}`);
    assert.match(third, /retry-after: 1/i);
    for (const h of holders) h.destroy();
    // The cap is given back when those connections close: a valid delivery is stored again.
    let status = 0;
    for (let i = 0; i < 50 && status !== 200; i++) {
      status = (await postSignedStripe(url.href, `evt_after_cap_${i}`, SECRET)).status;
      if (status !== 200) await new Promise((r) => setTimeout(r, 50));
    }
    assert.equal(status, 200);
  });

  it('unsigned bodies hold none of it: a valid delivery is stored while 20 of them are being sent', async () => {
    const { url } = await listen('--max-bytes', '1048576', '--max-bytes-in-flight', '1048576');
    const unsigned = await Promise.all(
      Array.from({ length: 20 }, () => openWithHead(url, { 'content-type': 'application/json', 'content-length': '1048576' })),
    );
    for (const s of unsigned) s.write(Buffer.alloc(64 * 1024, 0x20));
    const res = await postSignedStripe(url.href, 'evt_beside_flood', SECRET);
    for (const s of unsigned) s.destroy();
    assert.equal(res.status, 200, 'a verified delivery refused for unsigned traffic');
  });

  it('--max-bytes-in-flight below --max-bytes is a usage error', async () => {
    const r = await hookdrill([
      'listen',
      '--provider',
      'stripe',
      '--secret',
      SECRET,
      '--port',
      '0',
      '--inbox',
      join(tempDir(), 'i.db'),
      '--max-bytes',
      '2000',
      '--max-bytes-in-flight',
      '1000',
    ]);
    assert.equal(r.code, 2);
    assert.match(r.stderr, /--max-bytes-in-flight 1000 is below --max-bytes 2000/);
    assert.equal(r.stderr.trim().split('\n').length, 1);
  });
});

/** Requests whose headers a provider's verify refuses, and one it must read the body for. */
function headerCases(p: Provider, nowMs: number): { what: string; headers: Record<string, string> }[] {
  const body = Buffer.from('{"id":"evt_1","type":"x"}');
  const secret = signingSecret(p);
  const signed = lower(p.sign(body, [secret], { nowMs, deliveryId: p.newDeliveryId(), eventType: 'x' }));
  const cases = [{ what: 'signed', headers: signed }];
  for (const name of p.signedHeaders) {
    const without = { ...signed };
    delete without[name.toLowerCase()];
    cases.push({ what: `without ${name}`, headers: without });
    cases.push({ what: `${name} garbled`, headers: { ...signed, [name.toLowerCase()]: 'garbled,=v9' } });
  }
  if (p.timestamped) {
    const stale = lower(p.sign(body, [secret], { nowMs: nowMs - 3_600_000, deliveryId: p.newDeliveryId(), eventType: 'x' }));
    cases.push({ what: 'stale', headers: stale });
  }
  return cases;
}

function lower(h: OutgoingHeaders): Record<string, string> {
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k.toLowerCase(), v]));
}

describe('every provider judges its headers before its body', () => {
  for (const name of providerNames) {
    it(`${name}: what verify refuses for the headers alone, it refuses over an empty body with the same code`, () => {
      const p = providers[name];
      // What the receiver holds: the secret, or for a key pair its public key.
      const secret = publicKeyOf(signingSecret(p), name);
      const nowMs = Date.now();
      for (const c of headerCases(p, nowMs)) {
        for (const body of [Buffer.from('{"id":"evt_1","type":"x"}'), Buffer.alloc(3000, 0x41)]) {
          let code: string | undefined;
          try {
            p.verify(body, c.headers, [secret], { nowMs });
          } catch (err) {
            code = (err as { code?: string }).code;
          }
          const early = headerRefusal(p, c.headers, [secret], { nowMs });
          // A signature in the body (Mailgun's) is all in the body: nothing is refused from the headers.
          if (p.bodySignature) {
            assert.equal(early, undefined, `${c.what}: ${name}'s signature is in the body, yet the headers alone refused it`);
            continue;
          }
          // A shared token (GitLab's X-Gitlab-Token) is all in the headers: a wrong one is refused
          // before a body is read, so its no_match comes from the headers alone too. So is a JWT
          // (Pub/Sub push's): it signs its claims, not the body; a JWT with the body's hash in a claim
          // (Plaid's) is judged with the body, as an HMAC is. So is a certificate URL off the
          // pinned host (PayPal's PAYPAL-CERT-URL): its certificate is never fetched, whatever the body.
          const offHost = /on the certificate host/.test(early?.message ?? '');
          if (code === undefined || (code === 'no_match' && !p.tokenOnly && !(p.jwt && !p.jwt.bodyHash) && !offHost))
            assert.equal(early, undefined, `${c.what}: refused on its headers, yet verify reads the body`);
          else assert.equal(early?.code, code, `${c.what}: verify says ${code}, the headers alone ${early?.code}`);
        }
      }
    });
  }
});
