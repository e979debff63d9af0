// hookdrill verify on requests as users' receivers saw them: each receiver (Python, wrong in one
// way) writes the request it verified; verify must name what was done to it, and say nothing false.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createServer } from 'node:net';
import type { Socket } from 'node:net';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { getProvider } from '../src/providers/index.js';
import { toRawHttp } from '../src/verify/request.js';
import { hookdrill } from './helpers/cli.js';
import { PY, SECRET } from './helpers/verdicts.js';
import { freePort } from './helpers/ports.js';
import { PYTHON } from './helpers/python.js';
import { tempDir } from './helpers/tmp.js';
import { until } from './helpers/until.js';

/** One delivery sent by `hookdrill send` to the Python receiver with this flaw; the request it verified, as raw HTTP. */
async function captured(provider: string, flaw: string, secret = SECRET[provider] as string, fixture?: string): Promise<string> {
  const dir = tempDir();
  const dump = join(dir, 'dump');
  mkdirSync(dump);
  const port = await freePort();
  const child = spawn(
    PYTHON,
    [
      PY,
      'serve',
      '--provider',
      provider,
      '--secret',
      SECRET[provider] as string,
      '--port',
      String(port),
      '--store',
      join(dir, 's.txt'),
      '--dump',
      dump,
      ...(flaw ? ['--flaw', flaw] : []),
    ],
    { stdio: 'ignore' },
  );
  try {
    const url = `http://127.0.0.1:${port}/`;
    await until(
      async () =>
        fetch(url, { method: 'GET' }).then(
          () => true,
          () => false,
        ),
      'the receiver listening',
    );
    await hookdrill(['send', ...(fixture ? [fixture] : []), '--provider', provider, '--secret', secret, '--url', url, '--no-retry']);
    const [file] = readdirSync(dump);
    assert.ok(file, 'the receiver wrote no request');
    return join(dump, file);
  } finally {
    child.kill('SIGKILL');
  }
}

async function verify(args: string[]) {
  const r = await hookdrill(['verify', ...args]);
  return {
    ...r,
    json:
      r.code === 2 || !args.includes('--json')
        ? undefined
        : (JSON.parse(r.stdout) as { ok: boolean; code: string; findings: string[]; secret?: number }),
  };
}

const rows: { provider: string; flaw: string; code: string; says: RegExp }[] = [
  { provider: 'stripe', flaw: '', code: 'valid', says: /^signed as Stripe signs, \d+ s old now/ },
  { provider: 'stripe', flaw: 'crlf-lines', code: 'transformed', says: /its line ends were changed from \\n to \\r\\n/ },
  { provider: 'stripe', flaw: 'reserialize-json', code: 'transformed', says: /it was parsed and written again/ },
  { provider: 'stripe', flaw: 'latin1-text', code: 'transformed', says: /read as Latin-1 and written as UTF-8/ },
  { provider: 'github', flaw: 'latin1-text', code: 'transformed', says: /read as Latin-1 and written as UTF-8/ },
  { provider: 'github', flaw: 'reserialize-json', code: 'transformed', says: /it was parsed and written again/ },
  { provider: 'slack', flaw: 'reserialize-json', code: 'transformed', says: /it was parsed and written again/ },
  { provider: 'svix', flaw: 'crlf-lines', code: 'valid', says: /^signed as Svix signs/ },
];

for (const row of rows) {
  test(`verify names what a ${row.provider} receiver with ${row.flaw || 'no flaw'} did to the request it refused: ${row.code}`, async () => {
    const file = await captured(row.provider, row.flaw);
    const r = await verify([file, '--secret', SECRET[row.provider] as string, '--json']);
    assert.equal(r.code, row.code === 'valid' ? 0 : 1, r.stderr + r.stdout);
    assert.equal(r.json?.code, row.code);
    assert.match(r.json?.findings[0] ?? '', row.says);
    // Never the secret, whatever the verdict.
    assert.ok(!r.stdout.includes(SECRET[row.provider] as string));
  });
}

// Every provider: a request its receiver refused, explained. Standard's and Svix's default events
// are ASCII, so the flaws that re-encode text leave them alone: theirs is refused for its secret.
test("verify explains a refused request for every provider: Shopify's order re-encoded as Latin-1; Standard's and Svix's signed with the other secret of a rotation", async () => {
  const order = await captured('shopify', 'latin1-text', undefined, 'shopify/orders/create');
  const shopify = await verify([order, '--secret', SECRET.shopify as string, '--json']);
  assert.equal(shopify.code, 1, shopify.stderr);
  assert.equal(shopify.json?.code, 'transformed');
  assert.match(shopify.json?.findings[0] ?? '', /read as Latin-1 and written as UTF-8/);
  for (const provider of ['standard', 'svix']) {
    const rolled = 'whsec_cm9sbGVkLXNlY3JldC1mb3ItdGhlLXRlc3Q=';
    const file = await captured(provider, '', rolled);
    const one = await verify([file, '--secret', SECRET[provider] as string, '--json']);
    assert.equal(one.code, 1, `${provider}: ${one.stderr}`);
    assert.equal(one.json?.code, 'no_match');
    assert.match(one.json?.findings[1] ?? '', /the secret is not the one that signed it/);
    const both = await verify([file, '--secret', SECRET[provider] as string, '--secret', rolled]);
    assert.equal(both.code, 0, `${provider}: ${both.stdout}`);
    assert.match(both.stdout, /with secret 2 of 2 \(not the first\)/);
  }
});

test('verify: another secret, the second of two, a stale capture judged as of its arrival, a cut body, another provider', async () => {
  const file = await captured('stripe', '');
  const wrong = await verify([file, '--secret', 'whsec_someone_else', '--json']);
  assert.equal(wrong.code, 1);
  assert.equal(wrong.json?.code, 'no_match');
  assert.match(wrong.json?.findings[1] ?? '', /the secret is not the one that signed it/);

  const second = await verify([file, '--secret', 'whsec_old', '--secret', SECRET.stripe as string]);
  assert.equal(second.code, 0);
  assert.match(second.stdout, /^VALID signed as Stripe signs with secret 2 of 2 \(not the first\)/);

  const later = await verify([file, '--secret', SECRET.stripe as string, '--at', new Date(Date.now() + 3_600_000).toISOString()]);
  assert.equal(later.code, 1);
  assert.match(
    later.stdout,
    /^INVALID stale when it arrived: the signature matches the body, but the timestamp is 60 min old \(the tolerance is 300 s\)/,
  );

  const raw = readFileSync(file);
  const cut = join(tempDir(), 'cut.http');
  writeFileSync(cut, raw.subarray(0, raw.length - 40));
  const short = await verify([cut, '--secret', SECRET.stripe as string, '--json']);
  assert.equal(short.json?.code, 'truncated');
  assert.match(short.json?.findings[0] ?? '', /^the body is \d+ bytes but Content-Length says \d+ — it was cut short/);

  const asGithub = await verify([file, '--secret', SECRET.stripe as string, '--provider', 'github', '--json']);
  assert.equal(asGithub.json?.code, 'other_provider');
  assert.match(
    asGithub.json?.findings[0] ?? '',
    /it carries Stripe-Signature, not X-Hub-Signature-256 — it is Stripe's \(give --provider stripe\)/,
  );
});

test('verify: a HAR entry judged as of its startedDateTime; bad input is one line and exit 2', async () => {
  const file = await captured('github', '');
  const raw = readFileSync(file);
  const split = raw.indexOf('\r\n\r\n');
  const lines = raw.subarray(0, split).toString('latin1').split('\r\n').slice(1);
  const har = {
    log: {
      entries: [
        { startedDateTime: new Date().toISOString(), request: { method: 'GET', url: 'http://x/', headers: [] } },
        {
          startedDateTime: new Date().toISOString(),
          request: {
            method: 'POST',
            url: 'http://x/',
            headers: lines.map((l) => ({ name: l.slice(0, l.indexOf(':')), value: l.slice(l.indexOf(':') + 1).trim() })),
            postData: { mimeType: 'application/json', text: raw.subarray(split + 4).toString('utf8') },
          },
        },
      ],
    },
  };
  const harFile = join(tempDir(), 'capture.har');
  writeFileSync(harFile, JSON.stringify(har));
  const r = await verify([harFile, '--secret', SECRET.github as string]);
  assert.equal(r.code, 0, r.stderr);
  assert.match(r.stdout, /from .*capture\.har#entry 2/);
  // Fiddler writes a UTF-8 BOM first: still a HAR file, not a raw request with a strange first line.
  const bomFile = join(tempDir(), 'fiddler.har');
  writeFileSync(bomFile, `\uFEFF${JSON.stringify(har)}`);
  const bom = await verify([bomFile, '--secret', SECRET.github as string]);
  assert.equal(bom.code, 0, bom.stderr);
  assert.match(bom.stdout, /from .*fiddler\.har#entry 2/);

  const none = await hookdrill(['verify', '--secret', 'x'], {});
  assert.equal(none.code, 2);
  const garbage = join(tempDir(), 'x.http');
  writeFileSync(garbage, 'hello\n\nworld');
  const bad = await hookdrill(['verify', garbage, '--secret', 'x']);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /^hookdrill: .*x\.http: the first line is not an HTTP request line/);
  assert.doesNotMatch(bad.stderr, /at .*\.js:\d+/);
});

test("listen's refused list holds whole requests within a byte budget: the oldest bodies go first, a body over the per-request cap is listed but not held", async () => {
  const { RefusedLog } = await import('../src/ui/refused.js');
  const log = new RefusedLog(100, 3_000, 1_500);
  const capture = (n: number) => ({ method: 'POST', path: '/', headers: {}, body: Buffer.alloc(n, 'x'), arrivedAtMs: Date.now() });
  const entry = { at: Date.now(), status: 401, result: 'rejected' as const, reason: 'no match' };
  const ids = [1_000, 1_000, 1_000, 2_000].map((n) => log.add(entry, capture(n)).id);
  assert.deepEqual(ids, ['r1', 'r2', 'r3', 'r4']);
  assert.equal(log.add(entry, capture(1_000)).id, 'r5');
  // r4 (2,000 bytes) is over the 1,500 cap: listed, not held; r1 went to keep 3 × 1,000 within 3,000.
  const kept = Object.fromEntries(log.view().recent.map((r) => [r.id, r.kept]));
  assert.deepEqual(kept, { r5: true, r4: false, r3: true, r2: true, r1: false });
  assert.equal(log.capture('r1'), undefined);
  assert.equal(log.capture('r5')?.body.length, 1_000);
});

test('a final line end added on the way (curl --data-binary "$body<newline>", a heredoc) is named as that, not as a re-serialised body', async () => {
  const { providers } = await import('../src/providers/index.js');
  const secret = SECRET.github as string;
  const body = Buffer.from('{"action":"opened","zen":"hi"}');
  const headers = providers.github.sign(body, [secret], { nowMs: Date.now(), deliveryId: 'd-final-lf', eventType: 'issues' });
  const raw = `POST / HTTP/1.1\r\n${Object.entries(headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\r\n')}\r\ncontent-length: ${body.length + 1}\r\n\r\n${body}\n`;
  const file = join(tempDir(), 'request.http');
  writeFileSync(file, raw);
  const r = await hookdrill(['verify', file, '--secret', secret, '--json']);
  assert.equal(r.code, 1, r.stderr);
  const v = JSON.parse(r.stdout) as { code: string; transformation: string };
  assert.equal(v.code, 'transformed');
  assert.match(v.transformation, /a line end was added at its end/);
});

test('verify reads a chunked body as RFC 9112 writes one: a chunk size is hex digits (extensions after ";"), anything else is one line and exit 2, never a loop', async () => {
  const head = 'POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nStripe-Signature: t=1,v1=ab\r\n\r\n';
  const dir = tempDir();
  // A negative size once stepped back and read the same chunk for ever (1 GB within 30 s).
  for (const size of ['-6', '+6', '0x6', ' 6', '', '6 ', '00000000000000006', 'g']) {
    const file = join(dir, 'bad.http');
    writeFileSync(file, `${head}${size}\r\nabcdef\r\n0\r\n\r\n`);
    const r = await hookdrill(['verify', file, '--secret', 'whsec_x'], {}, [], undefined, 20_000);
    assert.equal(r.code, 2, `size ${JSON.stringify(size)}: ${r.stderr}`);
    assert.match(r.stderr, /^hookdrill: .*bad\.http: a chunk size .*\n$/, `size ${JSON.stringify(size)}`);
  }
  // Sizes and extensions as RFC 9112 allows them are read: the verdict is on the joined body.
  const file = join(dir, 'ok.http');
  writeFileSync(file, `${head}3;name=value\r\nabc\r\nA\r\n0123456789\r\n0\r\n\r\n`);
  const ok = await hookdrill(
    ['verify', file, '--secret', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw', '--provider', 'stripe', '--json'],
    {},
    [],
    undefined,
    20_000,
  );
  assert.equal(ok.code, 1, ok.stderr);
});

/** A request `provider` signed at `signedAtSec` (Unix seconds), as a raw HTTP file. */
function signedAt(provider: string, signedAtSec: number): string {
  const body = Buffer.from(JSON.stringify({ id: 'event_01', event: 'user.created', event_id: 'evt_01', event_type: 'x', data: {} }));
  const headers = getProvider(provider).sign(body, [SECRET[provider] as string], {
    nowMs: signedAtSec * 1000,
    deliveryId: 'd1',
    eventType: 'x',
    url: 'https://example.com/hooks',
  });
  const file = join(tempDir(), `${provider}.http`);
  writeFileSync(file, toRawHttp('POST', '/hooks', { Host: 'example.com', ...headers }, body));
  return file;
}

test("verify states each provider's age and tolerance in its own unit: WorkOS's and HubSpot's milliseconds, Paddle's 5 s, WorkOS's 180 s", async () => {
  const t = 1_800_000_000;
  const rows: { provider: string; at: number; ok: boolean; says?: RegExp }[] = [
    // A millisecond timestamp read as seconds was "20772809 days in the future".
    { provider: 'workos', at: t + 60, ok: true, says: /^signed as WorkOS signs, 60 s old when it arrived \(the tolerance is 180 s\)$/ },
    { provider: 'workos', at: t + 600, ok: false, says: /the timestamp is 10 min old \(the tolerance is 180 s\)$/ },
    { provider: 'paddle', at: t + 60, ok: false, says: /the timestamp is 60 s old \(the tolerance is 5 s\)$/ },
    // HubSpot's milliseconds too, its signature judged over the URL the request line and Host give.
    {
      provider: 'hubspot',
      at: t + 60,
      ok: true,
      says: /^signed as HubSpot signs over https:\/\/example\.com\/hooks, 60 s old when it arrived \(the tolerance is 300 s\)$/,
    },
    { provider: 'stripe', at: t + 60, ok: true, says: /, 60 s old when it arrived \(the tolerance is 300 s\)$/ },
  ];
  for (const row of rows) {
    const r = await verify([signedAt(row.provider, t), '--secret', SECRET[row.provider] as string, '--at', String(row.at), '--json']);
    assert.equal(r.code, row.ok ? 0 : 1, `${row.provider}: ${r.stderr}${r.stdout}`);
    if (row.says) assert.match(r.json?.findings[0] ?? '', row.says, row.provider);
    assert.equal((r.json as { ageSec?: number } | undefined)?.ageSec, row.at - t, row.provider);
  }
});

test('verify --ui takes an http(s) inspector URL only, and an inspector that never answers is one line, exit 2, not a 300 s wait', async () => {
  for (const url of ['javascript:alert(1)?token=x', 'file:///etc/passwd?token=x', 'data:text/plain,hi?token=x']) {
    const r = await hookdrill(['verify', '--ui', url, '--refused', 'r1', '--secret', 'whsec_x']);
    assert.equal(r.code, 2, `${url}: ${r.stderr}`);
    assert.match(r.stderr, /^hookdrill: --ui .*: not an http\(s\) URL/, url);
  }
  // Accepts the connection and never answers: a listen stopped with ^Z, a port someone else holds.
  const sockets: Socket[] = [];
  const silent = createServer((socket) => void sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  try {
    const { port } = silent.address() as { port: number };
    const r = await hookdrill(
      ['verify', '--ui', `http://127.0.0.1:${port}/?token=t`, '--refused', 'r1', '--secret', 'whsec_x'],
      {},
      [],
      undefined,
      60_000,
    );
    assert.equal(r.code, 2, r.stderr);
    assert.match(r.stderr, /^hookdrill: --ui http:\/\/127\.0\.0\.1:\d+: the inspector did not answer within 10 s/);
  } finally {
    for (const s of sockets) s.destroy();
    silent.close();
  }
});
