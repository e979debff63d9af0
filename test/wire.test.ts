/**
 * hookdrill's requests beside real deliveries: test/wire/<provider>.json records, with a source
 * line for each fact, what each provider's deliveries look like on the wire — header names, their
 * casing and order, their values, the body's format — and every request `send` makes is held to it
 * field by field. A new difference, either way, fails here.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { run as send } from '../src/delivery/send.js';
import { getProvider, providerNames } from '../src/providers/index.js';
import { SECRETS, verifyWithOfficialCode } from './helpers/official.js';

const WIRE = fileURLToPath(new URL('../../test/wire/', import.meta.url));

interface Kind {
  fixture: string;
  /** [name as sent, pattern of its value], in the order the provider sends them. */
  headers: [string, string][];
  body:
    | 'pretty'
    | 'compact'
    | 'compact-sorted'
    | 'sendgrid-crlf'
    | 'compact-slashes'
    | 'compact-capital-escapes'
    | 'jackson'
    | 'compact-newline'
    | 'form'
    | 'form-payload'
    | 'form-json'
    | 'pretty-spaced-colons';
  /**
   * false where no capture shows the provider's order (Paddle's docs name the headers, not their
   * order): the names and values are held, the order is not.
   */
  orderKnown?: false;
  /** Fields set for this kind (`send --set`): a value the comparison needs, such as a control character. */
  sets?: Record<string, string>;
  /** A GitHub hook's content type, where not json. */
  contentType?: 'form';
  /** The envelope's top-level keys in order (Stripe). */
  keys?: string[];
  /** What a retry adds, in order (Slack's Events API); [] where the provider never adds any. */
  retried?: [string, string][];
  /** Headers a retry carries with the first attempt's values (Square's initial delivery time, Zoom's ids). */
  sameOnRetry?: string[];
  /** Headers whose values must differ (Shopify's event id and webhook id). */
  distinct?: string[];
  /** Which body field the X-GitHub-Hook-* values equal. */
  targetIdIs?: string;
  hookIdIs?: string;
  /** `send --hook-owner`: who owns the hook that sends. */
  hookOwner?: string;
}

interface Profile {
  provider: string;
  sources: string[];
  kinds: Kind[];
}

/** Added by any HTTP client, not by the provider's own code: left out of the comparison. */
const TRANSPORT = new Set(['host', 'connection', 'content-length']);

interface Seen {
  rawHeaders: [string, string][];
  body: Buffer;
  headers: Record<string, string | string[] | undefined>;
}

/** A real server that keeps each request's headers as they came: names in their casing, in their order. */
async function capture(statuses: number[]): Promise<{ url: string; seen: Seen[]; close: () => Promise<void> }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const rawHeaders: [string, string][] = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2) rawHeaders.push([req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string]);
      seen.push({ rawHeaders, body: Buffer.concat(chunks), headers: req.headers });
      res.statusCode = statuses[seen.length - 1] ?? 200;
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/`, seen, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

const at = (body: unknown, path: string): unknown =>
  path.split('.').reduce<unknown>((v, k) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[k] : undefined), body);

function payloadOf(kind: Kind, body: Buffer): unknown {
  if (kind.body === 'form-payload' || kind.body === 'form-json')
    return JSON.parse(new URLSearchParams(body.toString()).get('payload') ?? 'null');
  if (kind.body === 'form') return Object.fromEntries(new URLSearchParams(body.toString()));
  return JSON.parse(body.toString());
}

/** A `\u` escape (not an escaped backslash before a `u`), in capital or lower-case hex. */
const capitalEscape = /(?<!\\)(?:\\\\)*\\u[0-9A-F]{4}/g;
const lowerEscape = /(?<!\\)(?:\\\\)*\\u(?=[0-9a-fA-F]{4})[0-9A-F]*[a-f]/;

/** Every object's keys sorted, arrays in their order (SendGrid's and Discord's bodies). */
function sortedKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortedKeys);
  if (typeof v !== 'object' || v === null) return v;
  return Object.fromEntries(
    Object.keys(v)
      .sort()
      .map((k) => [k, sortedKeys((v as Record<string, unknown>)[k])]),
  );
}

/** Jackson's DefaultPrettyPrinter as its documentation shows it, written apart from src/. */
function jacksonPretty(v: unknown, level: number): string {
  if (Array.isArray(v)) return v.length ? `[ ${v.map((x) => jacksonPretty(x, level)).join(', ')} ]` : '[ ]';
  if (typeof v !== 'object' || v === null) return JSON.stringify(v);
  const entries = Object.entries(v);
  if (!entries.length) return '{ }';
  const inner = entries.map(([k, x]) => `${'  '.repeat(level + 1)}${JSON.stringify(k)} : ${jacksonPretty(x, level + 1)}`);
  return `{\n${inner.join(',\n')}\n${'  '.repeat(level)}}`;
}

const profiles = readdirSync(WIRE)
  .filter((f) => f.endsWith('.json'))
  .map((f) => JSON.parse(readFileSync(`${WIRE}${f}`, 'utf8')) as Profile);

test('every provider has a wire profile with its sources', () => {
  // Every built-in provider (a new one without its profile fails here); Standard Webhooks' wire is Svix's, under its own names.
  assert.deepEqual(profiles.map((p) => p.provider).sort(), providerNames.filter((n) => n !== 'standard').sort());
  for (const p of profiles) assert.ok(p.sources.length > 0 && p.kinds.length > 0, p.provider);
});

test('send --hook-owner sends only from a kind of hook GitHub sends the event from, and says which', async () => {
  const at = { provider: 'github', secrets: ['s'], url: 'http://127.0.0.1:9/', noRetry: true } as const;
  await assert.rejects(send({ ...at, fixtures: ['github/push'], hookOwner: 'marketplace' }), {
    name: 'UsageError',
    message:
      "--hook-owner marketplace: GitHub sends push only from repository, organization, app hooks (its description's supported-webhook-types)",
  });
  await assert.rejects(send({ ...at, fixtures: ['github/push'], hookOwner: 'team' }), {
    name: 'UsageError',
    message: /expected one of repository, organization, app/,
  });
  await assert.rejects(send({ ...at, provider: 'stripe', fixtures: ['stripe/invoice.paid'], hookOwner: 'app' }), {
    name: 'UsageError',
    message: /GitHub's/,
  });
});

for (const profile of profiles) {
  for (const kind of profile.kinds) {
    test(`${profile.provider}/${kind.fixture} goes out as ${profile.provider}'s own deliveries do: headers, their order and casing, the body's format`, async () => {
      const retried = kind.retried !== undefined;
      const server = await capture(retried ? [500, 200] : [200]);
      try {
        const r = await send({
          provider: profile.provider,
          secrets: [SECRETS[profile.provider] as string],
          url: server.url,
          fixtures: [`${profile.provider}/${kind.fixture}`],
          ...(retried ? { retryDelays: [0] } : { noRetry: true }),
          ...(kind.contentType ? { contentType: kind.contentType } : {}),
          ...(kind.hookOwner ? { hookOwner: kind.hookOwner } : {}),
          ...(kind.sets ? { sets: kind.sets } : {}),
        });
        assert.equal(r.ok, true, JSON.stringify(r.deliveries));
        const [first, second] = server.seen;
        assert.ok(first);
        const sent = first.rawHeaders.filter(([name]) => !TRANSPORT.has(name.toLowerCase()));
        const order = kind.orderKnown === false ? (names: string[]) => [...names].sort() : (names: string[]) => names;
        assert.deepEqual(
          order(sent.map(([name]) => name)),
          order(kind.headers.map(([name]) => name)),
          "the provider's headers, in its order and casing, and nothing else",
        );
        for (const [i, [name, pattern]] of kind.headers.entries()) {
          const value = kind.orderKnown === false ? sent.find(([n]) => n === name)?.[1] : sent[i]?.[1];
          assert.match(value ?? '', new RegExp(pattern), name);
        }
        // What the provider's own verifier says of it.
        await verifyWithOfficialCode(profile.provider, first.body, first.headers, SECRETS[profile.provider] as string, server.url);

        const text = first.body.toString('utf8');
        if (kind.body === 'pretty') {
          assert.match(text, /^\{\n {2}"/, 'pretty-printed, two spaces');
          assert.ok(!text.includes('\r'), '\\n line ends only');
          assert.equal(text, JSON.stringify(JSON.parse(text), null, 2));
        } else if (kind.body === 'pretty-spaced-colons') {
          // SNS's: two spaces in, a space before each key's colon ("Type" : "Notification").
          assert.equal(text, JSON.stringify(JSON.parse(text), null, 2).replace(/^( *"(?:[^"\\]|\\.)*"):/gm, '$1 :'), "SNS's layout");
        } else if (kind.body === 'compact') {
          assert.equal(text, JSON.stringify(JSON.parse(text)), 'compact JSON');
        } else if (kind.body === 'jackson') {
          // Jackson's DefaultPrettyPrinter (Intercom): `" : "`, two spaces a level, `{ }`, arrays on one line.
          assert.equal(text, jacksonPretty(JSON.parse(text), 0), "Jackson's pretty printer");
        } else if (kind.body === 'compact-newline') {
          assert.equal(text, `${JSON.stringify(JSON.parse(text))}\n`, 'compact JSON, then a newline (Pub/Sub push)');
        } else if (kind.body === 'compact-sorted') {
          assert.equal(text, JSON.stringify(sortedKeys(JSON.parse(text))), "compact JSON, every object's keys sorted");
        } else if (kind.body === 'sendgrid-crlf') {
          // [{…},\r\n{…}]\r\n: CRLF after each event and after the array, each event compact with its keys sorted.
          const events = JSON.parse(text) as unknown[];
          assert.equal(text, `[${events.map((e) => JSON.stringify(sortedKeys(e))).join(',\r\n')}]\r\n`, "SendGrid's layout");
        } else if (kind.body === 'compact-capital-escapes') {
          assert.equal(
            text.replace(capitalEscape, (e) => e.toLowerCase()),
            JSON.stringify(JSON.parse(text)),
            'compact JSON',
          );
          if (kind.sets) assert.match(text, /\\u001B/, 'a control character written \\u001B, as GitHub writes it');
          assert.doesNotMatch(text, lowerEscape, 'no \\u escape in lower-case hex');
        } else if (kind.body === 'compact-slashes') {
          assert.equal(text, JSON.stringify(JSON.parse(text)).replace(/\//g, '\\/'), 'compact JSON, every / as \\/');
          assert.ok(text.includes('\\/'), 'the body has a / to escape');
        } else if (kind.body === 'form-json') {
          const payload = new URLSearchParams(text).get('payload') ?? '';
          assert.equal(text, new URLSearchParams({ payload }).toString(), 'one field, payload, form-encoded');
          assert.equal(
            payload.replace(capitalEscape, (e) => e.toLowerCase()),
            JSON.stringify(JSON.parse(payload)),
            'holding compact JSON',
          );
          assert.doesNotMatch(payload, lowerEscape, 'no \\u escape in lower-case hex');
          // And hookdrill's own receiver reads the event from it as from JSON.
          assert.equal(getProvider(profile.provider).eventTypeOf(first.headers, first.body), 'push');
        } else {
          assert.match(text, /^[A-Za-z_]+=/, 'form-encoded');
          assert.ok(!text.includes('*') && !text.includes("'") && !text.includes(' '), "* ' and space encoded as %2A %27 +");
        }
        if (kind.body === 'form-payload') {
          const payload = new URLSearchParams(text).get('payload') ?? '';
          assert.ok(payload.includes('\\/') && !/[^\\]\//.test(payload), 'every / inside payload= escaped as \\/');
        }
        const body = payloadOf(kind, first.body);
        if (kind.keys) assert.deepEqual(Object.keys(body as object), kind.keys);
        const header = (name: string) => sent.find(([n]) => n === name)?.[1];
        if (kind.targetIdIs) assert.equal(header('X-GitHub-Hook-Installation-Target-ID'), String(at(body, kind.targetIdIs)));
        if (kind.hookIdIs) assert.equal(header('X-GitHub-Hook-ID'), String(at(body, kind.hookIdIs)));
        if (kind.distinct) assert.equal(new Set(kind.distinct.map(header)).size, kind.distinct.length, kind.distinct.join(' and '));

        if (retried) {
          assert.ok(second, 'the retry arrived');
          const again = second.rawHeaders.filter(([name]) => !TRANSPORT.has(name.toLowerCase()));
          const added = again.slice(kind.headers.length);
          assert.deepEqual(
            added.map(([name]) => name),
            (kind.retried ?? []).map(([name]) => name),
            'what a retry adds',
          );
          for (const [i, [name, pattern]] of (kind.retried ?? []).entries()) assert.match(added[i]?.[1] ?? '', new RegExp(pattern), name);
          assert.ok(second.body.equals(first.body), 'a retry carries the same body');
          const again2 = (name: string) => again.find(([n]) => n === name)?.[1];
          for (const name of kind.sameOnRetry ?? []) assert.equal(again2(name), header(name), `${name} the same on a retry`);
        }
      } finally {
        await server.close();
      }
    });
  }
}
