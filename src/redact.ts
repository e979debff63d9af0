import { isIP } from 'node:net';
import type { JsonObject, JsonValue } from './providers/types.js';

/*
 * Redaction of personal data in a webhook body, for a fixture made from a real delivery
 * (`fixtures capture --redact`). Pure: no I/O, no randomness — the same body always gives the same
 * result, and within one call the same original value always becomes the same fake, wherever it
 * appears. Fakes are assigned in the order the originals first appear, never derived from the
 * original (a hash of an email would let anyone holding the fixture confirm a guess), and never
 * equal to any value of the body. The JSON's structure, key order, keys and value types are kept.
 *
 * What is personal is decided by the key a value sits under and the object around it, as Stripe,
 * GitHub, Shopify and Slack lay them out; a few shapes are recognised anywhere (an email inside any
 * string, a card number that passes Luhn, a phone number). Ids, timestamps, enum-like fields
 * (`object`, `currency`, `status`, `type`, country and state codes) and URLs are left alone, but
 * for the emails in them and, in URLs, the path segments that are a replaced login.
 */

export type RedactionKind = 'email' | 'name' | 'login' | 'address' | 'phone' | 'card' | 'ip' | 'location';

export const REDACTION_KINDS: readonly RedactionKind[] = ['email', 'name', 'login', 'address', 'phone', 'card', 'ip', 'location'];

export interface RedactResult {
  value: JsonValue;
  /** How many values (or parts of values) were replaced, by kind. */
  counts: Record<RedactionKind, number>;
}

// ---- what a key means -------------------------------------------------------------------------

/** `customerName` and `customer_name` are one key. */
function snake(key: string): string {
  return key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase();
}

/** Ids, hashes, tokens and times: never personal by shape (only an email inside one is replaced). */
const ID_OR_TIME =
  /(^|_)(id|ids|uuid|guid|sha|hash|fingerprint|ts|timestamp|at|date|time|created|updated|token|key|secret|nonce|signature)$/;

/** Enum-like fields and codes: kept as they are. */
const PROTECTED = new Set([
  'object',
  'currency',
  'status',
  'state',
  'type',
  'action',
  'event',
  'kind',
  'livemode',
  'api_version',
  'country',
  'country_code',
  'country_name',
  'province',
  'province_code',
  'state_code',
  'locale',
  'language',
  'timezone',
  'time_zone',
  'brand',
  'funding',
  'network',
  'mode',
  'role',
  'visibility',
  'default_branch',
  'ref',
  'base_ref',
  'method',
]);

/** Keys that always hold a person's name (or part of one). */
const NAME_KEYS: Readonly<Record<string, NameRole>> = {
  first_name: 'first',
  given_name: 'first',
  middle_name: 'first',
  last_name: 'last',
  family_name: 'last',
  full_name: 'full',
  customer_name: 'full',
  cardholder_name: 'full',
  account_holder_name: 'full',
  billing_name: 'full',
  shipping_name: 'full',
  contact_name: 'full',
  recipient_name: 'full',
  author_name: 'full',
  committer_name: 'full',
  real_name: 'full',
  real_name_normalized: 'full',
  display_name: 'full',
  display_name_normalized: 'full',
};

/** A username: GitHub's `login`, a commit author's `username`. */
const LOGIN_KEYS = new Set(['login', 'username', 'user_login', 'screen_name']);

/** Objects under these keys describe a person (or a person's address): their `name` is a person's. */
const PERSON_CONTAINERS = new Set([
  'customer',
  'customer_details',
  'customer_shipping',
  'billing_details',
  'billing',
  'shipping',
  'shipping_details',
  'billing_address',
  'shipping_address',
  'default_address',
  'addresses',
  'author',
  'committer',
  'pusher',
  'user',
  'users',
  'owner',
  'sender',
  'assignee',
  'assignees',
  'creator',
  'merged_by',
  'requested_reviewer',
  'requested_reviewers',
  'reviewer',
  'member',
  'cardholder',
  'individual',
  'person',
  'representative',
  'profile',
  'contact',
  'recipient',
  'buyer',
  'payer',
  'account_holder',
]);

/** Objects under these keys are not people, whatever their fields (a GitHub organization has a login). */
const NOT_PEOPLE = new Set(['organization', 'org', 'enterprise', 'repository', 'repo', 'app', 'team', 'installation', 'label', 'labels']);

/** Siblings that make an object a person's record (so a name-like `name` in it is a person's). */
const PERSON_SIBLINGS = ['email', 'phone', 'first_name', 'last_name', 'login', 'username'];

const LINE1_KEYS = new Set([
  'line1',
  'line_1',
  'address1',
  'address_1',
  'address_line1',
  'address_line_1',
  'street',
  'street1',
  'street_address',
  'street_line1',
  'address',
]);
const LINE2_KEYS = new Set(['line2', 'line_2', 'address2', 'address_2', 'address_line2', 'address_line_2', 'street2', 'street_line2']);
const CITY_KEYS = new Set(['city', 'town', 'locality', 'address_city']);
const POSTAL_KEYS = new Set(['postal_code', 'postcode', 'post_code', 'zip', 'zip_code', 'zipcode', 'postalcode', 'address_zip']);
const ADDRESS_KEYS = new Set([...LINE1_KEYS, ...LINE2_KEYS, ...CITY_KEYS, ...POSTAL_KEYS]);
const COORDINATE_KEYS = new Set(['latitude', 'longitude', 'lat', 'lng', 'lon']);
// The key names a number itself (`phone`, `billing_phone`, `phone_number`), not a count of them (`phone_count`).
const PHONE_KEY = /(^|_)(phone|phones|mobile|telephone|tel|cell|cellphone|fax)(_number|_no|_e164)?$/;
const IP_KEYS = new Set(['ip', 'ip_address', 'browser_ip', 'client_ip', 'remote_ip', 'customer_ip', 'user_ip']);

type NameRole = 'first' | 'last' | 'full';
type AddressPart = 'line1' | 'line2' | 'city' | 'postal';

/** What to do with one value, decided from its key and the object around it. */
type Plan =
  | { kind: 'name'; role: NameRole }
  | { kind: 'login' }
  | { kind: 'address'; part: AddressPart }
  | { kind: 'phone' }
  | { kind: 'ip' }
  | { kind: 'location'; axis: 'lat' | 'lng' }
  /** Free text (or a URL): emails, card numbers, phone numbers and logins inside it. */
  | { kind: 'text'; url: boolean; cards: boolean }
  /** An id, a time or an enum: only an email inside it is replaced. */
  | { kind: 'emails-only' };

interface Holder {
  obj: JsonObject;
  /** The key the object sits under (for an array's items, the array's key). */
  container: string | undefined;
  /** An organization, a bot, a repository: its name and login are not a person's. */
  notPerson: boolean;
  /** It holds an address: its coordinates are a person's whereabouts. */
  address: boolean;
}

const PERSON_NAME = /^[\p{L}\p{M}][\p{L}\p{M}' .,()’-]*$/u;
const URL_LIKE = /^(?:[a-z][a-z0-9+.-]*:\/\/|[\w.-]+@[\w.-]+:)/i;

function holderOf(obj: JsonObject, container: string | undefined): Holder {
  const type = obj.type;
  const login = obj.login;
  const notPerson =
    (container !== undefined && NOT_PEOPLE.has(snake(container))) ||
    type === 'Organization' ||
    type === 'Bot' ||
    type === 'Enterprise' ||
    (typeof login === 'string' && login.endsWith('[bot]'));
  const address = Object.keys(obj).some((k) => ADDRESS_KEYS.has(snake(k)) && typeof obj[k] === 'string');
  return { obj, container: container === undefined ? undefined : snake(container), notPerson, address };
}

function hasPersonSibling(holder: Holder): boolean {
  return PERSON_SIBLINGS.some((k) => Object.hasOwn(holder.obj, k));
}

/** An object that is a person's record: under a person's key, or with a person's fields beside. */
function isPersonRecord(holder: Holder): boolean {
  return (holder.container !== undefined && PERSON_CONTAINERS.has(holder.container)) || hasPersonSibling(holder);
}

function planFor(value: string | number, rawKey: string | undefined, holder: Holder | undefined): Plan | undefined {
  const key = rawKey === undefined ? '' : snake(rawKey);
  if (typeof value === 'number') {
    if (PHONE_KEY.test(key) && !ID_OR_TIME.test(key)) return { kind: 'phone' };
    // A postal code written as a number (`zip: 94107`): replaced with one of the same digits' count.
    if (POSTAL_KEYS.has(key)) return { kind: 'address', part: 'postal' };
    if (COORDINATE_KEYS.has(key) && holder?.address) return { kind: 'location', axis: key.startsWith('lat') ? 'lat' : 'lng' };
    if (ID_OR_TIME.test(key) || PROTECTED.has(key)) return undefined;
    return { kind: 'text', url: false, cards: true };
  }
  if (value === '') return undefined;
  if (PROTECTED.has(key) || ID_OR_TIME.test(key)) return { kind: 'emails-only' };
  if (URL_LIKE.test(value)) return { kind: 'text', url: true, cards: false };
  const person = holder !== undefined && !holder.notPerson;
  if (LOGIN_KEYS.has(key)) return person && !value.endsWith('[bot]') ? { kind: 'login' } : { kind: 'emails-only' };
  const role = NAME_KEYS[key];
  if (role !== undefined)
    return person && !value.includes('/') && !value.includes('@') ? { kind: 'name', role } : { kind: 'text', url: false, cards: false };
  if (key === 'name' && holder && person && !value.includes('@')) {
    const container = holder.container !== undefined && PERSON_CONTAINERS.has(holder.container);
    const personObject = holder.obj.object === 'customer' || holder.obj.object === 'person' || holder.obj.object === 'card';
    if (container || personObject || (hasPersonSibling(holder) && PERSON_NAME.test(value))) return { kind: 'name', role: 'full' };
  }
  // Where a person lives, as a user profile says it (GitHub's `location`); elsewhere `location` is often an id.
  if (key === 'location' && holder && person && isPersonRecord(holder)) return { kind: 'address', part: 'line1' };
  if (PHONE_KEY.test(key)) return digits(value).length >= 5 ? { kind: 'phone' } : undefined;
  if (IP_KEYS.has(key)) return isIP(value.trim()) ? { kind: 'ip' } : { kind: 'text', url: false, cards: false };
  if (LINE1_KEYS.has(key)) return { kind: 'address', part: 'line1' };
  if (LINE2_KEYS.has(key)) return { kind: 'address', part: 'line2' };
  if (CITY_KEYS.has(key)) return { kind: 'address', part: 'city' };
  if (POSTAL_KEYS.has(key)) return { kind: 'address', part: 'postal' };
  return { kind: 'text', url: false, cards: true };
}

// ---- shapes found anywhere --------------------------------------------------------------------

/** An email address; not the `git@github.com:` of an scp-style git URL, not a piece of a longer word. */
const EMAIL =
  /(?<![\w.%+-])[A-Za-z0-9][\w.%+-]*@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*\.[A-Za-z]{2,}(?![\w-]|\.[A-Za-z0-9]|:[^\s])/g;

/** 13 to 19 digits, optionally grouped by single spaces or dashes, not part of a longer number or word. */
const DIGIT_RUN = /(?<![\p{L}\p{N}])\d(?:[ -]?\d){12,18}(?![\p{L}\p{N}])/gu;

/** A phone number written out as one: `+44 20 7946 0958`, `(415) 555-2671`, `415-555-2671`. */
const PHONE_WHOLE = /^(?:\+\d[\d ().-]{5,20}\d|\(\d{3}\) ?\d{3}[ .-]\d{4}|\d{3}[ .-]\d{3}[ .-]\d{4})$/;
/** Inside text, only the unambiguous international form (`+` then 7 to 15 digits). */
const PHONE_IN_TEXT = /(?<![\w+])\+\d(?:[ ().-]{0,2}\d){6,14}(?![\w])/g;

const URL_IN_TEXT = /\b(?:https?|git|ssh):\/\/[^\s<>"')\]|]+|(?<![\w.%+-])git@[\w.-]+:[^\s<>"')\]|]+/g;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const OWNER_REPO = /^[\w.-]+\/[\w.-]+$/;
const PATH_SEGMENT = /(?<=^|[/:])([^/?#{}:@]+)(?=[/?#{]|$)/g;

function digits(text: string): string {
  return text.replace(/\D/g, '');
}

export function luhnValid(number: string): boolean {
  if (!/^\d+$/.test(number)) return false;
  let sum = 0;
  for (let i = 0; i < number.length; i++) {
    let d = number.charCodeAt(number.length - 1 - i) - 48;
    if (i % 2 === 1) {
      d *= 2;
      if (d > 9) d -= 9;
    }
    sum += d;
  }
  return sum % 10 === 0;
}

function luhnCheckDigit(body: string): string {
  for (let d = 0; d <= 9; d++) if (luhnValid(`${body}${d}`)) return String(d);
  throw new Error('unreachable: some check digit satisfies Luhn');
}

/**
 * A payment card number: 13 to 19 digits that pass Luhn and start as card numbers do (2 to 6:
 * Mastercard, Amex, Diners, JCB, Visa, Discover, UnionPay, Maestro). The prefix keeps a millisecond
 * timestamp (17…) or a tracking number out, whatever its check digit.
 */
export function isCardNumber(text: string): boolean {
  return /^[2-6]\d{12,18}$/.test(text) && luhnValid(text);
}

// ---- fakes ------------------------------------------------------------------------------------

const FIRST = [
  'Jordan',
  'Casey',
  'Riley',
  'Morgan',
  'Avery',
  'Quinn',
  'Taylor',
  'Jamie',
  'Robin',
  'Skyler',
  'Drew',
  'Cameron',
  'Emerson',
  'Finley',
  'Harper',
  'Logan',
  'Parker',
  'Reese',
  'Rowan',
  'Sawyer',
];
const LAST = [
  'Lee',
  'Rivera',
  'Chen',
  'Patel',
  'Novak',
  'Okafor',
  'Silva',
  'Larsen',
  'Moreau',
  'Tanaka',
  'Haddad',
  'Kowalski',
  'Nguyen',
  'Fischer',
  'Romero',
  'Dubois',
  'Jensen',
  'Mendes',
  'Varga',
  'Weber',
];
const STREETS = ['Example Street', 'Sample Avenue', 'Placeholder Road', 'Test Lane', 'Demo Boulevard', 'Fixture Way'];
const CITIES = ['Springfield', 'Riverton', 'Fairview', 'Lakeside', 'Greenville', 'Oakdale', 'Maplewood', 'Brookfield'];
const AREA_CODES = ['202', '312', '415', '617', '206', '303', '512', '702'];

/** The k-th item of a list, then the list again with a number after it: never runs out. */
function nth(list: readonly string[], k: number, sep = ' '): string {
  const item = list[k % list.length] as string;
  const round = Math.floor(k / list.length);
  return round === 0 ? item : `${item}${sep}${round + 1}`;
}

/** k → a pair of indexes that walks the whole FIRST × LAST grid before repeating. */
function pair(k: number): [string, string] {
  const first = FIRST[k % FIRST.length] as string;
  const last = LAST[(k + Math.floor(k / FIRST.length)) % LAST.length] as string;
  const round = Math.floor(k / (FIRST.length * LAST.length));
  return [first, round === 0 ? last : `${last}${round + 1}`];
}

function matchCase(fake: string, original: string): string {
  if (original === original.toUpperCase() && original !== original.toLowerCase()) return fake.toUpperCase();
  if (original === original.toLowerCase() && original !== original.toUpperCase()) return fake.toLowerCase();
  return fake;
}

/** The k-th fictional number (555-0100 to 555-0199, area code after area code), laid out as the original is. */
function phoneLayout(k: number, original: string): string {
  const area = nth(AREA_CODES, Math.floor(k / 100), '');
  const line = `01${String(k % 100).padStart(2, '0')}`;
  const text = original.trim();
  const plus = text.startsWith('+');
  // Compact: with the country code when the original has one (+1…, or 11 digits and more).
  if (/^\+?\d+$/.test(text)) return `${plus ? '+1' : text.length >= 11 ? '1' : ''}${area}555${line}`;
  if (plus) return `+1 ${area}-555-${line}`;
  return text.includes('(') ? `(${area}) 555-${line}` : `${area}-555-${line}`;
}

function phoneLayouts(k: number): string[] {
  return ['+1', '1', '10000000000', '+1 1', '(1) 1', '1-1'].map((shape) => phoneLayout(k, shape));
}

const NAME_TOKEN = /[\p{L}\p{M}]+(?:['’-][\p{L}\p{M}]+)*/gu;

class Redactor {
  readonly counts: Record<RedactionKind, number> = { email: 0, name: 0, login: 0, address: 0, phone: 0, card: 0, ip: 0, location: 0 };
  /** Every value of the input, lowercased (and the emails, name parts and numbers in them): no fake may be one. */
  private readonly avoid = new Set<string>();
  /** Every fake handed out, so that two originals never share one. */
  private readonly used = new Set<string>();
  private readonly counters = new Map<string, number>();
  private readonly tokens = new Map<string, string>();
  private readonly logins = new Map<string, string>();
  private readonly emails = new Map<string, string>();
  private readonly cards = new Map<string, string>();
  private readonly phones = new Map<string, number>();
  private readonly ips = new Map<string, string>();
  private readonly addresses = new Map<string, string>();
  private readonly coordinates = new Map<number, number>();
  /** Whole values known to be personal (a full name, a street line, a phone): replaced wherever they appear. */
  private readonly known = new Map<string, { kind: RedactionKind; fake: string }>();

  // Pass 1: see every value, so that no fake equals any of them; classify, and assign fakes to the
  // key-classified values (names first: an email is made from the fake name when it is the name's).
  learn(value: JsonValue): void {
    const names: [string, NameRole][] = [];
    const rest: [string, Plan][] = [];
    walk(value, undefined, undefined, (leaf, key, holder) => {
      const text = String(leaf);
      this.avoid.add(text.toLowerCase());
      // Every word too: a fake name is made of words that appear nowhere in the body.
      for (const m of text.matchAll(NAME_TOKEN)) this.avoid.add(m[0].toLowerCase());
      for (const m of text.matchAll(EMAIL)) this.avoid.add(m[0].toLowerCase());
      for (const m of text.matchAll(DIGIT_RUN)) this.avoid.add(digits(m[0]));
      const plan = planFor(leaf, key, holder);
      if (!plan || typeof leaf !== 'string') return leaf;
      if (plan.kind === 'name') {
        names.push([leaf, plan.role]);
      } else if (plan.kind !== 'text' && plan.kind !== 'emails-only') {
        rest.push([leaf, plan]);
      }
      return leaf;
    });
    for (const [name, role] of names) {
      const fake = this.name(name, role);
      if (fake !== name && (name.match(NAME_TOKEN)?.length ?? 0) >= 2) this.known.set(name, { kind: 'name', fake });
    }
    for (const [text, plan] of rest) {
      if (plan.kind === 'login') this.login(text);
      else if (plan.kind === 'phone') this.known.set(text, { kind: 'phone', fake: this.phone(text) });
      else if (plan.kind === 'address' && (plan.part === 'line1' || plan.part === 'line2'))
        this.known.set(text, { kind: 'address', fake: this.address(text, plan.part) });
    }
  }

  // Pass 2: replace.
  rewrite(value: JsonValue): JsonValue {
    return walk(value, undefined, undefined, (leaf, key, holder) => {
      const plan = planFor(leaf, key, holder);
      if (!plan) return leaf;
      if (typeof leaf === 'number') return this.number(leaf, plan);
      switch (plan.kind) {
        case 'name': {
          const login = this.logins.get(leaf);
          if (login !== undefined) return this.count('login', login);
          const fake = this.name(leaf, plan.role);
          return fake === leaf ? leaf : this.count('name', fake);
        }
        case 'login':
          return this.count('login', this.login(leaf));
        case 'address':
          return this.count('address', this.address(leaf, plan.part));
        case 'phone':
          return this.count('phone', this.phone(leaf));
        case 'ip':
          return this.count('ip', this.ip(leaf.trim()));
        case 'emails-only':
          return this.replaceEmails(leaf);
        case 'text':
          return this.text(leaf, plan.url, plan.cards);
        default:
          return leaf;
      }
    });
  }

  private count<T>(kind: RedactionKind, fake: T, n = 1): T {
    this.counts[kind] += n;
    return fake;
  }

  /** Whether a fake may be handed out: it is no value of the input, and no other original has it. */
  private free(kind: string, fake: string): boolean {
    const lower = fake.toLowerCase();
    return !this.avoid.has(lower) && !this.used.has(`${kind}:${lower}`);
  }

  private take(kind: string, fake: string): string {
    this.used.add(`${kind}:${fake.toLowerCase()}`);
    return fake;
  }

  /** The preferred fake if it is free, else the first free candidate, counting from where this kind left off. */
  private fresh(kind: string, candidate: (k: number) => string, preferred?: string): string {
    if (preferred !== undefined && this.free(kind, preferred)) return this.take(kind, preferred);
    let k = this.counters.get(kind) ?? 0;
    for (;;) {
      const fake = candidate(k++);
      if (!this.free(kind, fake)) continue;
      this.counters.set(kind, k);
      return this.take(kind, fake);
    }
  }

  private name(original: string, role: NameRole): string {
    const parts = [...original.matchAll(NAME_TOKEN)];
    return original.replace(NAME_TOKEN, (token, offset: number) => {
      const index = parts.findIndex((p) => p.index === offset);
      const tokenRole: 'first' | 'last' = role === 'full' ? (parts.length > 1 && index === parts.length - 1 ? 'last' : 'first') : role;
      const fake = this.token(token, tokenRole);
      // An initial stays an initial (J. → R.), of another letter.
      if (token.length === 1) return this.initial(fake, token);
      return matchCase(fake, token);
    });
  }

  private initial(fake: string, original: string): string {
    const letters = 'ABCDEFGHJKLMNPRSTW';
    let letter = (fake[0] as string).toUpperCase();
    if (letter === original.toUpperCase()) letter = letters[(letters.indexOf(letter) + 1) % letters.length] as string;
    return original === original.toLowerCase() ? letter.toLowerCase() : letter;
  }

  /** One word of a name; the same word gets the same fake in every name it is part of. */
  private token(token: string, role: 'first' | 'last'): string {
    const lower = token.toLowerCase();
    let fake = this.tokens.get(lower);
    if (fake === undefined) {
      fake = this.fresh(`token-${role}`, (k) => nth(role === 'first' ? FIRST : LAST, k, ''));
      this.tokens.set(lower, fake);
    }
    return fake;
  }

  private login(original: string): string {
    let fake = this.logins.get(original);
    if (fake === undefined) {
      fake = this.fresh('login', (k) => pair(k).join('-').toLowerCase());
      this.logins.set(original, fake);
    }
    return fake;
  }

  private email(original: string): string {
    const lower = original.toLowerCase();
    let fake = this.emails.get(lower);
    if (fake === undefined) {
      // ada.lovelace@… of a body whose name is Ada Lovelace becomes the fake name's address.
      const local = lower.slice(0, lower.indexOf('@'));
      const words = local.split(/[._-]/);
      const fromName = words.every((w) => this.tokens.has(w))
        ? local.replace(/[^._-]+/g, (w) => (this.tokens.get(w) as string).toLowerCase())
        : undefined;
      fake = this.fresh('email', (k) => `${pair(k).join('.').toLowerCase()}@example.com`, fromName ? `${fromName}@example.com` : undefined);
      this.emails.set(lower, fake);
    }
    return fake;
  }

  private replaceEmails(text: string): string {
    return text.replace(EMAIL, (m) => this.count('email', this.email(m)));
  }

  /** The same number (by its digits) is the same fake in every layout it is written in. */
  private phone(original: string): string {
    const key = digits(original);
    let k = this.phones.get(key);
    if (k === undefined) {
      let n = this.counters.get('phone') ?? 0;
      while (phoneLayouts(n).some((f) => this.avoid.has(f.toLowerCase()))) n++;
      k = n;
      this.counters.set('phone', n + 1);
      this.phones.set(key, k);
    }
    return phoneLayout(k, original);
  }

  private address(original: string, part: AddressPart): string {
    const key = `${part}:${original}`;
    let fake = this.addresses.get(key);
    if (fake === undefined) {
      fake = this.fresh(part, (k) => {
        if (part === 'line1') return `${123 + k} ${STREETS[k % STREETS.length]}`;
        if (part === 'line2') return `Suite ${100 + k}`;
        if (part === 'city') return nth(CITIES, k);
        // A postal code keeps its shape (digits stay digits, letters letters), so a receiver that
        // checks the format still accepts it.
        let i = 0;
        return original.replace(/[0-9A-Za-z]/g, (c) => {
          const j = i++ + k;
          if (/\d/.test(c)) return '1234567890'[j % 10] as string;
          const letter = 'ABCDEFGHJKLMNPRSTUVWXYZ'[j % 23] as string;
          return c === c.toLowerCase() ? letter.toLowerCase() : letter;
        });
      });
      this.addresses.set(key, fake);
    }
    return fake;
  }

  private ip(original: string): string {
    let fake = this.ips.get(original);
    if (fake === undefined) {
      // Documentation ranges (RFC 5737, RFC 3849): addresses no one has.
      const v6 = isIP(original) === 6;
      fake = this.fresh('ip', (k) =>
        v6 ? `2001:db8::${(k + 1).toString(16)}` : `${k < 240 ? '192.0.2' : '198.51.100'}.${10 + (k % 240)}`,
      );
      this.ips.set(original, fake);
    }
    return fake;
  }

  /** A test card number of the same length (4242 4242 4242 4242 first), laid out as the original was. */
  private card(run: string): string {
    const original = digits(run);
    let fake = this.cards.get(original);
    if (fake === undefined) {
      fake = this.fresh('card', (k) => {
        const body = '42'.repeat(10).slice(0, original.length - 1);
        const tag = k === 0 ? '' : String(k);
        const tagged = body.slice(0, body.length - tag.length) + tag;
        return tagged + luhnCheckDigit(tagged);
      });
      this.cards.set(original, fake);
    }
    let i = 0;
    return run.replace(/\d/g, () => (fake as string)[i++] as string);
  }

  private number(value: number, plan: Plan): number {
    if (plan.kind === 'phone') return this.count('phone', Number(digits(this.phone(String(value)))));
    if (plan.kind === 'address' && Number.isSafeInteger(value)) {
      // Digits only, and no leading zero: a number stays a number of the same length.
      const fake = this.address(String(value), plan.part).replace(/^0/, '1');
      return this.count('address', Number(fake));
    }
    if (plan.kind === 'location') {
      let fake = this.coordinates.get(value);
      if (fake === undefined) {
        // Around New York City's centre, a step apart per original value.
        const base = plan.axis === 'lat' ? 40.7128 : -74.006;
        const k = this.coordinates.size;
        fake = Math.round((base + k * 0.0011) * 10_000) / 10_000;
        if (fake === value) fake = Math.round((fake + 0.0001) * 10_000) / 10_000;
        this.coordinates.set(value, fake);
      }
      return this.count('location', fake);
    }
    if (plan.kind === 'text' && plan.cards && Number.isSafeInteger(value) && isCardNumber(String(value))) {
      return this.count('card', Number(this.card(String(value))));
    }
    return value;
  }

  private text(text: string, url: boolean, cards: boolean): string {
    const known = url ? undefined : this.known.get(text);
    if (known) return this.count(known.kind, known.fake);
    let out = this.replaceEmails(text);
    // A URL's path segments, or an owner/repo pair (GitHub `full_name`), that are a replaced login.
    if (url || OWNER_REPO.test(text)) return this.replaceLogins(out, PATH_SEGMENT);
    if (PHONE_WHOLE.test(text.trim()) && digits(text).length >= 7) return this.count('phone', this.phone(text));
    // A full name known from a name field, inside a longer text ("Co-authored-by: Ada Lovelace <…>").
    for (const [original, { kind, fake }] of this.known) {
      if (kind !== 'name' || !out.toLowerCase().includes(original.toLowerCase())) continue;
      out = out.replace(new RegExp(`(?<![\\p{L}\\p{M}])${escapeRegExp(original)}(?![\\p{L}\\p{M}])`, 'giu'), () =>
        this.count('name', fake),
      );
    }
    // URLs inside the text: their path segments that are a replaced login.
    out = out.replace(URL_IN_TEXT, (u) => this.replaceLogins(u, PATH_SEGMENT));
    if (cards) out = out.replace(DIGIT_RUN, (run) => (isCardNumber(digits(run)) ? this.count('card', this.card(run)) : run));
    out = out.replace(PHONE_IN_TEXT, (m) => this.count('phone', this.phone(m)));
    // An @mention of a replaced login (a GitHub issue body, a commit message).
    out = this.replaceLogins(out, /(?<![\w@])@([A-Za-z0-9][\w-]*)/g);
    // A replaced login as a word of its own, any case (`octocat:patch-1`, a PR's head label; "thanks Octocat").
    return this.replaceLogins(out, /(?<![\w@./-])([A-Za-z0-9][\w-]{2,})(?![\w-])/g);
  }

  /** Occurrences of a replaced login: the capture group is the candidate. */
  private replaceLogins(text: string, pattern: RegExp): string {
    if (this.logins.size === 0) return text;
    return text.replace(pattern, (whole: string, candidate: string) => {
      for (const [original, fake] of this.logins) {
        if (original.toLowerCase() === candidate.toLowerCase()) return this.count('login', whole.replace(candidate, fake));
      }
      return whole;
    });
  }
}

type Visit = (leaf: string | number, key: string | undefined, holder: Holder | undefined) => JsonValue;

function walk(value: JsonValue, key: string | undefined, holder: Holder | undefined, visit: Visit): JsonValue {
  if (typeof value === 'string' || typeof value === 'number') return visit(value, key, holder);
  if (Array.isArray(value)) return value.map((item) => walk(item, key, holder, visit));
  if (value === null || typeof value !== 'object') return value;
  const inner = holderOf(value, key);
  // fromEntries defines own properties: a `__proto__` key stays a key.
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, walk(v, k, inner, visit)]));
}

/**
 * Replace the personal data in a JSON value with plausible fakes: emails (anywhere, also inside
 * longer strings and URLs) → `jordan.lee@example.com`; people's names → `Jordan Lee`; usernames
 * (GitHub `login`) → `jordan-lee`, in URLs too; street lines, cities, postal codes (same shape) →
 * `123 Example Street`, `Springfield`; phone numbers → the 555-01xx range; card numbers that pass
 * Luhn → a test card of the same length (4242…); IP addresses → documentation ranges; an address's
 * coordinates. Country and state codes, ids, timestamps, enum fields and the structure are kept.
 * Nested up to a few thousand levels (the recursion follows the value).
 */
export function redact(value: JsonValue): RedactResult {
  const r = new Redactor();
  r.learn(value);
  const out = r.rewrite(value);
  return { value: out, counts: { ...r.counts } };
}
