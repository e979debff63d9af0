import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { JsonValue } from '../src/providers/index.js';
import { isCardNumber, luhnValid, redact } from '../src/fixtures/redact/index.js';
import { assertSameShape } from './helpers/json-shape.js';

/** Every string and number of a JSON value, with its path. */
function leaves(value: JsonValue, path = ''): [string, string | number][] {
  if (typeof value === 'string' || typeof value === 'number') return [[path, value]];
  if (Array.isArray(value)) return value.flatMap((v, i) => leaves(v, `${path}.${i}`));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => leaves(v, path ? `${path}.${k}` : k));
  return [];
}

const stripeCustomer = {
  id: 'evt_1QhZ',
  object: 'event',
  type: 'customer.created',
  created: 1764460800,
  livemode: false,
  data: {
    object: {
      id: 'cus_Q1w2',
      object: 'customer',
      name: 'Ada Lovelace',
      email: 'ada.lovelace@gmail.com',
      phone: '+44 20 7946 0958',
      description: 'VIP since 2024: Ada Lovelace (ada.lovelace@gmail.com)',
      currency: 'gbp',
      address: { line1: '12 St James Square', line2: 'Flat 3', city: 'London', postal_code: 'SW1Y 4JH', state: null, country: 'GB' },
      shipping: {
        name: 'Charles Babbage',
        phone: '(415) 555-2671',
        address: { line1: '1 Analytical Way', line2: null, city: 'London', postal_code: 'EC1A 1BB', state: 'LND', country: 'GB' },
      },
      metadata: { backup_card: '4000 0566 5566 5556', order: '5623819026617', note: 'ring 4000-0566-5566-5556 first' },
    },
  },
} satisfies JsonValue;

test('emails are replaced everywhere, inside longer strings too, the same email by the same fake', () => {
  const { value, counts } = redact({
    email: 'Ada@Example.org',
    text: 'write to ada@example.org or <mailto:bob.smith@corp.io|bob.smith@corp.io>.',
    receipt_email: 'bob.smith@corp.io',
    url: 'https://example.org/unsubscribe?to=ada@example.org',
    ssh_url: 'git@github.com:acme/widgets.git',
  });
  const v = value as Record<string, string>;
  assert.match(v.email!, /^[a-z]+\.[a-z]+@example\.com$/);
  assert.ok(v.text!.includes(v.email!), 'the same email (in any case) is the same fake');
  assert.ok(v.text!.includes(`<mailto:${v.receipt_email}|${v.receipt_email}>.`));
  assert.notEqual(v.email, v.receipt_email);
  assert.equal(v.url, `https://example.org/unsubscribe?to=${v.email}`);
  assert.equal(v.ssh_url, 'git@github.com:acme/widgets.git', 'an scp-style git URL is no email');
  assert.equal(counts.email, 6);
  assert.doesNotMatch(JSON.stringify(value), /ada@|bob\.smith|corp\.io/i);
});

test('a Stripe customer: names, address, phones, cards replaced; ids, enums, codes and shape kept', () => {
  const { value, counts } = redact(stripeCustomer);
  assertSameShape(stripeCustomer, value);
  const text = JSON.stringify(value);
  for (const original of [
    'Ada',
    'Lovelace',
    'Charles',
    'Babbage',
    'ada.lovelace',
    '7946',
    '555-2671',
    'St James',
    'Flat 3',
    'London',
    'SW1Y',
    'EC1A',
    'Analytical',
    '4000 0566 5566 5556',
    '4000-0566-5566-5556',
  ]) {
    assert.ok(!text.includes(original), `${original} is still there: ${text}`);
  }
  const o = (value as typeof stripeCustomer).data.object;
  assert.deepEqual(
    [o.id, o.object, o.currency, o.address.country, o.address.state, o.shipping.address.state, o.shipping.address.line2],
    ['cus_Q1w2', 'customer', 'gbp', 'GB', null, 'LND', null],
  );
  assert.equal((value as typeof stripeCustomer).id, 'evt_1QhZ');
  assert.equal((value as typeof stripeCustomer).created, 1764460800);
  // Plausible fakes: a name, a street, a phone in the 555-01xx range, a postal code of the same shape.
  assert.match(o.name, /^[A-Z][a-z]+ [A-Z][a-z]+$/);
  assert.match(o.address.line1, /^\d+ [A-Z][a-z]+ [A-Z][a-z]+$/);
  assert.match(o.phone, /^\+1 \d{3}-555-01\d\d$/);
  assert.match(o.shipping.phone, /^\(\d{3}\) 555-01\d\d$/);
  assert.match(o.address.postal_code, /^[A-Z]{2}\d[A-Z] \d[A-Z]{2}$/);
  // The same value is the same fake wherever it is: the name and email inside the description.
  assert.equal(o.description, `VIP since 2024: ${o.name} (${o.email})`);
  assert.equal(o.address.city, o.shipping.address.city, 'London twice is one fake city');
  // An email made of the name's words follows the fake name.
  assert.equal(o.email, `${o.name.toLowerCase().replace(' ', '.')}@example.com`);
  assert.equal(o.metadata.backup_card, '4242 4242 4242 4242', 'a test card of the same length and layout');
  assert.equal(o.metadata.note, 'ring 4242-4242-4242-4242 first', 'the same card number again is the same fake');
  assert.ok(luhnValid(o.metadata.backup_card.replaceAll(' ', '')));
  assert.equal(o.metadata.order, '5623819026617', 'an order number that fails Luhn stays');
  assert.ok(counts.name >= 3 && counts.address >= 7 && counts.phone === 2 && counts.card === 2, JSON.stringify(counts));
});

test('card numbers: Luhn and a card prefix, not any long number', () => {
  assert.ok(isCardNumber('4111111111111111'));
  assert.ok(isCardNumber('378282246310005'), 'Amex, 15 digits');
  assert.ok(!isCardNumber('4111111111111112'), 'fails Luhn');
  // A millisecond timestamp can pass Luhn; it never starts as a card does.
  const ms = '1764460800006';
  assert.ok(luhnValid(ms), 'the timestamp chosen passes Luhn (else this proves nothing)');
  assert.ok(!isCardNumber(ms));
  const { value, counts } = redact({
    amount: 4242424242424241, // fails Luhn
    card_number: 5555555555554444,
    created_ms: 1764460800006,
    order_id: '4111111111111111', // an id is never a card
    tracking: '9400111899223197428490', // 22 digits
    lines: ['1764460800006', 'order 5623819026617'],
    number: '6011 0009 9013 9424',
    short: '4242 4242 42',
  });
  const { number: fake, ...rest } = value as { number: string };
  assert.deepEqual(rest, {
    amount: 4242424242424241,
    card_number: 4242424242424242,
    created_ms: 1764460800006,
    order_id: '4111111111111111',
    tracking: '9400111899223197428490',
    lines: ['1764460800006', 'order 5623819026617'],
    short: '4242 4242 42',
  });
  assert.match(fake, /^\d{4} \d{4} \d{4} \d{4}$/, 'laid out as the original');
  assert.ok(luhnValid(fake.replaceAll(' ', '')) && fake !== '6011 0009 9013 9424');
  assert.notEqual(fake, '4242 4242 4242 4242', 'two card numbers, two fakes');
  assert.equal(counts.card, 2);
});

test('a card that is already a test card still gets another number', () => {
  const { value } = redact({ note: 'card 4242424242424242' });
  assert.notEqual((value as { note: string }).note, 'card 4242424242424242');
  assert.ok(luhnValid((value as { note: string }).note.slice(5)));
});

test('phones: by key (string or number), and values that are phone numbers; not dates or ids', () => {
  const { value, counts } = redact({
    phone: '+14155552671',
    mobile: '07700 900123',
    customer_phone: '415.555.2671',
    phone_number: 14155552671,
    contact: '+1 (415) 555-2671',
    notes: 'call +44 20 7946 0958 after 5',
    date: '2026-11-30',
    release: '2026-11-30T12:00:00Z',
    phone_country_code: '+1',
  });
  const v = value as Record<string, string | number>;
  assert.equal(v.phone, '+12025550100');
  assert.equal(v.contact, '+1 202-555-0100', 'the same digits are the same fake, in its own layout');
  assert.match(String(v.mobile), /^\d{3}-555-01\d\d$/);
  assert.equal(v.phone_number, 12025550100);
  assert.match(String(v.notes), /^call \+1 \d{3}-555-01\d\d after 5$/);
  assert.equal(v.date, '2026-11-30');
  assert.equal(v.release, '2026-11-30T12:00:00Z');
  assert.equal(v.phone_country_code, '+1');
  assert.equal(counts.phone, 6);
});

test('nested addresses (Shopify): every level, coordinates too; country and province codes kept', () => {
  const order = {
    id: 5623819026618,
    name: '#9999',
    email: 'jon@example.com',
    browser_ip: '203.0.113.77',
    customer: {
      id: 7230461395134,
      first_name: 'John',
      last_name: 'Smith',
      default_address: {
        name: 'John Smith',
        address1: '123 Elm St',
        address2: 'Apt 4',
        city: 'Ottawa',
        zip: 'K2P 1L4',
        province_code: 'ON',
        country_code: 'CA',
      },
    },
    billing_address: {
      first_name: 'John',
      last_name: 'Smith',
      name: 'John Smith',
      company: 'Acme',
      address1: '123 Elm St',
      city: 'Ottawa',
      zip: 'K2P 1L4',
      latitude: 45.4215,
      longitude: -75.6972,
      province: 'Ontario',
      country: 'Canada',
    },
    line_items: [{ id: 1, name: 'IPod Nano - 8GB', title: 'IPod Nano - 8GB' }],
  } satisfies JsonValue;
  const { value, counts } = redact(order);
  assertSameShape(order, value);
  const o = value as typeof order;
  assert.equal(o.name, '#9999', "an order's name is no person's");
  assert.equal(o.line_items[0]?.name, 'IPod Nano - 8GB', "a product's name is no person's");
  assert.equal(o.billing_address.company, 'Acme');
  assert.deepEqual(
    [
      o.billing_address.province,
      o.billing_address.country,
      o.customer.default_address.province_code,
      o.customer.default_address.country_code,
    ],
    ['Ontario', 'Canada', 'ON', 'CA'],
  );
  assert.equal(o.billing_address.name, `${o.billing_address.first_name} ${o.billing_address.last_name}`, 'the parts of a name agree');
  assert.equal(o.customer.default_address.address1, o.billing_address.address1);
  assert.match(o.customer.default_address.zip, /^[A-Z]\d[A-Z] \d[A-Z]\d$/);
  assert.match(o.browser_ip, /^192\.0\.2\.\d+$/);
  assert.notEqual(o.billing_address.latitude, 45.4215);
  assert.notEqual(o.billing_address.longitude, -75.6972);
  assert.ok(Math.abs(o.billing_address.latitude) <= 90 && Math.abs(o.billing_address.longitude) <= 180);
  assert.doesNotMatch(JSON.stringify(value), /John|Smith|Elm|Ottawa|K2P|203\.0\.113|jon@/);
  assert.equal(counts.ip, 1);
  assert.equal(counts.location, 2);
});

test('GitHub: logins (in URLs, owner/repo and @mentions too), commit authors; organizations and bots kept', () => {
  const push = {
    ref: 'refs/heads/main',
    repository: {
      id: 1,
      name: 'widgets',
      full_name: 'octocat/widgets',
      html_url: 'https://github.com/octocat/widgets',
      owner: {
        name: 'octocat',
        email: '583231+octocat@users.noreply.github.com',
        login: 'octocat',
        type: 'User',
        location: '7 Kew Gardens Road, Richmond',
        url: 'https://api.github.com/users/octocat',
      },
    },
    organization: { login: 'acme', url: 'https://api.github.com/orgs/acme' },
    pusher: { name: 'octocat', email: 'octo@github.com' },
    sender: { login: 'dependabot[bot]', type: 'Bot' },
    head_commit: {
      id: '7d1a3b5c',
      message: 'Fix retries (thanks @octocat)\n\nCo-authored-by: Grace Hopper <grace@navy.mil>',
      author: { name: 'Grace Hopper', email: 'grace@navy.mil', username: 'ghopper' },
    },
  } satisfies JsonValue;
  const { value } = redact(push);
  assertSameShape(push, value);
  const p = value as typeof push;
  const login = p.repository.owner.login;
  assert.match(login, /^[a-z]+-[a-z]+$/);
  assert.equal(p.repository.full_name, `${login}/widgets`);
  assert.equal(p.repository.html_url, `https://github.com/${login}/widgets`);
  assert.equal(p.repository.owner.url, `https://api.github.com/users/${login}`);
  assert.equal(p.pusher.name, login, 'the same login is the same fake, under `name` too');
  assert.equal(p.repository.name, 'widgets');
  assert.equal(p.ref, 'refs/heads/main');
  assert.equal(p.organization.login, 'acme');
  assert.equal(p.sender.login, 'dependabot[bot]');
  assert.equal(p.head_commit.id, '7d1a3b5c');
  assert.equal(
    p.head_commit.message,
    `Fix retries (thanks @${login})\n\nCo-authored-by: ${p.head_commit.author.name} <${p.head_commit.author.email}>`,
  );
  assert.match(p.repository.owner.location, /^\d+ [A-Z][a-z]+ [A-Z][a-z]+$/);
  assert.doesNotMatch(JSON.stringify(value), /octocat|Grace|Hopper|ghopper|navy\.mil|octo@|Kew/);
});

test('Slack profiles: real and display names, email, phone', () => {
  const event = {
    type: 'event_callback',
    event: {
      type: 'user_change',
      user: {
        id: 'U123',
        name: 'spengler',
        real_name: 'Egon Spengler',
        profile: {
          real_name: 'Egon Spengler',
          display_name: 'spengler',
          email: 'spengler@ghostbusters.example.com',
          phone: '555-867-5309',
          title: 'Scientist',
        },
      },
    },
  } satisfies JsonValue;
  const { value } = redact(event);
  const u = (value as typeof event).event.user;
  assert.equal(u.id, 'U123');
  assert.equal(u.profile.title, 'Scientist');
  assert.equal(u.real_name, u.profile.real_name);
  assert.equal(u.name, u.profile.display_name);
  assert.doesNotMatch(JSON.stringify(value), /Egon|spengler|Spengler|867-5309|ghostbusters/);
});

test('deterministic: the same input gives the same output; fakes never equal an original', () => {
  assert.deepEqual(redact(stripeCustomer), redact(stripeCustomer));
  // Originals that look like fakes: each must still change, and no fake may be another original.
  const tricky = {
    customer: {
      name: 'Jordan Lee',
      email: 'jordan.lee@example.com',
      phone: '+1 202-555-0100',
      address: { line1: '123 Example Street', city: 'Springfield' },
    },
    shipping: {
      name: 'Casey Rivera',
      email: 'casey.rivera@example.com',
      phone: '+1 202-555-0101',
      address: { line1: '124 Sample Avenue', city: 'Riverton' },
    },
  } satisfies JsonValue;
  const { value } = redact(tricky);
  const before = new Map(leaves(tricky));
  const originals = new Set([...before.values()].map((v) => String(v).toLowerCase()));
  for (const [path, after] of leaves(value)) {
    assert.notEqual(after, before.get(path), `${path} kept its value`);
    assert.ok(!originals.has(String(after).toLowerCase()), `${path}: the fake ${after} is an original`);
  }
});

test('keys named __proto__ stay keys; empty and null values stay as they are', () => {
  const input = JSON.parse('{"__proto__": {"email": "a@b.co"}, "name": "", "customer": {"name": null, "email": ""}}') as JsonValue;
  const { value } = redact(input);
  assert.deepEqual(Object.keys(value as object), ['__proto__', 'name', 'customer']);
  const own = Object.getOwnPropertyDescriptor(value, '__proto__')?.value as { email: string };
  assert.notEqual(own.email, 'a@b.co');
  assert.equal(JSON.stringify(value), JSON.stringify(input).replace('a@b.co', own.email));
});

test('redact: shapes a review found leaking — a PR head label, a login or a name in any case in free text, a legacy Stripe card, a numeric zip; a phone count is no phone', () => {
  const body = {
    pull_request: {
      user: { login: 'octocat', name: 'Ada Lovelace', email: 'ada@x.io' },
      head: { label: 'octocat:patch-1' },
      body: 'thanks Octocat, ADA LOVELACE rocks',
    },
    charge: { source: { object: 'card', name: 'Grace Hopper', address_city: 'Springfield', address_zip: '62701' } },
    shipping: { address: { zip: 94107, city: 'Boston' } },
    stats: { phone_count: 3 },
  };
  const { value } = redact(body);
  const text = JSON.stringify(value);
  for (const original of ['octocat', 'Octocat', 'Ada Lovelace', 'ADA LOVELACE', 'Grace Hopper', 'Springfield', '62701', '94107', 'Boston'])
    assert.ok(!text.includes(original), `${original} remains: ${text}`);
  const v = value as { shipping: { address: { zip: unknown } }; stats: { phone_count: unknown } };
  assert.equal(typeof v.shipping.address.zip, 'number', 'a number stays a number');
  assert.equal(String(v.shipping.address.zip).length, 5);
  assert.equal(v.stats.phone_count, 3);
});
