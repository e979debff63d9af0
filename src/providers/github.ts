import { randomUUID } from 'node:crypto';
import { UsageError } from '../util/errors.js';
import type { FreshField, JsonObject, JsonValue, Provider, TimingProfile, WireFacts } from './types.js';
import { SignatureError } from './types.js';
import {
  formPayloadJson,
  header,
  hmac,
  isObject,
  timeLike,
  parseJson,
  randomAlnum,
  randomUint32,
  requireHeader,
  requireSecrets,
  safeEqual,
  stringField,
  otherStringSecret,
} from './util.js';

/** The objects of a body that say where the hook is and who acted: the same between deliveries. */
const STABLE = new Set(['repository', 'organization', 'installation', 'enterprise', 'sender', 'hook']);

/**
 * A node id of the same kind and length: the kind is what comes before `_` in the new format
 * (`I_kwDO…`); an old-format id is base64 of `05:Issue444500041`, made again with a new number.
 */
function freshNodeId(old: string): string {
  const underscore = old.indexOf('_');
  if (underscore > 0) return `${old.slice(0, underscore + 1)}${randomAlnum(Math.max(8, old.length - underscore - 1))}`;
  const decoded = Buffer.from(old, 'base64').toString('latin1');
  // The type's prefix is enough: octokit's examples hold ids not quite in form (`08:CheckRun28328535>y`),
  // and a fresh id must still be a legacy one (a random word in its place was one run in 150).
  const m = /^(\d+:[A-Za-z]+)\d/.exec(decoded);
  return m ? Buffer.from(`${m[1]}${100_000_000 + (randomUint32() % 2_000_000_000)}`).toString('base64') : randomAlnum(old.length);
}

/** A delivery's JSON, whether the hook's content type is json or form (`payload=<the JSON>`). */
/**
 * Commit messages as people write them, one per push, each with 2-, 3- and 4-byte UTF-8 text (a
 * 687 KB push of CJK and emoji messages is what broke the `body += chunk` receivers of issue 34),
 * and the head commit's with a terminal's colour codes pasted in: GitHub writes a control
 * character as a `\u` escape with capital hex (`\u001B`, octokit/webhooks.js#71), which
 * JSON.stringify and Python's json.dumps write in lower case — a receiver that verifies a
 * re-serialised body fails on every push, not on one push in four.
 */
const COMMIT_MESSAGES: readonly string[] = [
  'Fix naïve date parsing in the café menu — 修复日期解析 🐛',
  'Übersetzung ergänzt: 日本語とDeutsch 🚀\n\nCo-authored-by: Zoë Ñúñez <zoe@example.com>',
  'Añadir soporte para ₹ y € en facturas 💸',
];
const HEAD_MESSAGE = 'Quiet the flaky café test 🐛: \u001b[31mFAIL\u001b[0m → \u001b[32mPASS\u001b[0m ✅';

/** GitHub's JSON: compact, a control character's `\u` escape in capital hex (`\u001B`), as GitHub writes it. */
export function githubJson(body: JsonValue): string {
  return JSON.stringify(body).replace(/\\(u[0-9a-f]{4}|.)/g, (m, esc: string) =>
    esc.length === 5 ? `\\u${esc.slice(1).toUpperCase()}` : m,
  );
}

export function githubPayload(rawBody: Buffer): JsonValue | undefined {
  const form = formPayloadJson(rawBody);
  return form === undefined ? parseJson(rawBody) : parseJson(Buffer.from(form));
}

const HEADER = 'X-Hub-Signature-256';

const cloud: TimingProfile = {
  name: 'github',
  summary: 'github.com: 10s timeout, no automatic retries (redelivery is manual)',
  published: true,
  timeoutMs: 10_000,
  retryDelaysMs: [],
  maxRedirects: 0,
  retryAfterStatuses: [],
  stopStatuses: [],
};

const enterprise: TimingProfile = {
  ...cloud,
  name: 'github-enterprise',
  summary: 'GitHub Enterprise Server: 30s timeout, no automatic retries',
  timeoutMs: 30_000,
};

/** The id of the hook that sends, where the body does not say it (only ping and meta carry `hook_id`). */
const HOOK_ID = '481516234';
/** The owner's id where the body holds no object of the owner's (an App's id is never in the body). */
const INSTALLATION_TARGET_ID = '35129377';

/**
 * Who can own a hook (the description's supported-webhook-types), most common first: an event is
 * sent by default as the first of these that can receive it. Each with what
 * X-GitHub-Hook-Installation-Target-Type says for it (an App's hook is `integration`) and the body
 * field whose `id` is X-GitHub-Hook-Installation-Target-ID (GitHub's "Webhook events and payloads":
 * "the type of resource where the webhook was created", and that resource's id).
 */
export const HOOK_OWNERS: readonly { owner: string; targetType: string; idFrom?: string }[] = [
  { owner: 'repository', targetType: 'repository', idFrom: 'repository' },
  { owner: 'organization', targetType: 'organization', idFrom: 'organization' },
  { owner: 'app', targetType: 'integration' },
  { owner: 'business', targetType: 'business', idFrom: 'enterprise' },
  { owner: 'marketplace', targetType: 'marketplace::listing' },
  { owner: 'sponsors_listing', targetType: 'sponsors_listing', idFrom: 'sponsorship' },
];

/** The hook headers an event's body implies: its hook_id where it has one, the owner and the owner's id. */
export function hookFacts(body: JsonObject, senders: readonly string[] | undefined): WireFacts {
  // Who can send it, as the description lists them; for a fixture of the user's, whoever the body names.
  const can = senders?.length ? senders : HOOK_OWNERS.filter((o) => !o.idFrom || isObject(body[o.idFrom])).map((o) => o.owner);
  const chosen = HOOK_OWNERS.find((o) => can.includes(o.owner)) ?? (HOOK_OWNERS[0] as (typeof HOOK_OWNERS)[number]);
  const holder = chosen.idFrom ? body[chosen.idFrom] : undefined;
  const id =
    isObject(holder) && (typeof holder.id === 'number' || typeof holder.id === 'string') ? String(holder.id) : INSTALLATION_TARGET_ID;
  const hookId = typeof body.hook_id === 'number' ? String(body.hook_id) : HOOK_ID;
  return { hookId, targetType: chosen.targetType, targetId: id };
}

export const github: Provider = {
  name: 'github',
  title: 'GitHub',
  signatureHeader: HEADER,
  signedHeaders: [HEADER, 'X-Hub-Signature'],
  otherSecret: otherStringSecret,
  timestamped: false,
  rotation: false,
  contract: {
    batching: { events: 'one', source: 'docs.github.com/webhooks/webhook-events-and-payloads: one event a delivery' },
    resends: {
      events: 'by-hand',
      source:
        'docs.github.com/webhooks/using-webhooks/handling-failed-webhook-deliveries: "GitHub does not automatically redeliver failed deliveries"',
    },
    endpointChecks: [
      {
        name: 'ping',
        signed: true,
        answer: 'any 2xx (an event like any other, sent when the hook is made)',
        source: 'docs.github.com/webhooks/webhook-events-and-payloads#ping',
      },
    ],
    answer: {
      kind: 'status',
      source: 'docs.github.com/webhooks/using-webhooks/best-practices-for-using-webhooks: respond within 10 seconds with a 2XX',
    },
    related: {
      about: 'an issue opened, then edited',
      first: 'issues.opened',
      next: 'issues.edited',
      path: ['issue', 'id'],
      dedupeOn: 'X-GitHub-Delivery',
      source:
        'docs.github.com/webhooks/webhook-events-and-payloads#issues: opened, edited, … each a delivery with its own X-GitHub-Delivery',
    },
  },
  profiles: { github: cloud, 'github-enterprise': enterprise },
  defaultProfile: 'github',
  verifier: {
    official: "@octokit/webhooks-methods' verify",
    futureTimestamp: 'refused', // no timestamp: the case does not apply
    // @octokit/webhooks' middleware parses the verified body and answers 400 to one that is not JSON.
    parsesJson: true,
    parsedBy: "@octokit/webhooks' verifyAndReceive",
    // "Payloads are capped at 25 MB" (GitHub's webhook docs): larger events are not delivered at all.
    maxBodyBytes: 25_000_000,
    editSignatures: (value, edit) => edit(value),
    // GitHub's "Webhook events and payloads": X-Hub-Signature "is provided for compatibility with
    // existing integrations. We recommend that you use the more secure X-Hub-Signature-256 instead."
    legacySignature: {
      header: 'X-Hub-Signature',
      scheme: 'HMAC-SHA1',
      advice:
        'GitHub sends it only for compatibility with existing integrations and recommends the more secure X-Hub-Signature-256 instead',
    },
    // The event name lives only in X-GitHub-Event; GitHub adds new ones, which a receiver must 2xx.
    unknownType: { eventName: 'hookdrill_unknown_event' },
  },

  checkSecret(secret) {
    if (secret.length === 0) throw new UsageError('github: the secret is empty');
  },

  // A hook made through the API defaults to form (GitHub's "Creating webhooks"): one field,
  // `payload`, holding the JSON, encoded as Ruby's URI.encode_www_form does — a space as `+`,
  // `*-._` left as they are, exactly what URLSearchParams writes.
  serialize: githubJson,
  jsonValue: githubJson,

  formPayload(json) {
    return new URLSearchParams({ payload: json }).toString();
  },

  hookOwners: HOOK_OWNERS.map((o) => o.owner),

  wireFacts(body, senders) {
    return hookFacts(body, senders);
  },

  sign(rawBody, secrets, ctx) {
    const secret = secrets[0] ?? '';
    const f = ctx.facts ?? {};
    // In the order of a captured delivery (a request bin's, test/wire/github.json), in the casing
    // of GitHub's "Recent Deliveries" view. No Accept-Encoding: the captures that have one passed
    // through a relay that added it.
    return {
      'User-Agent': 'GitHub-Hookshot/7d1a3b5',
      Accept: '*/*',
      // A hook's content type is json or form; form bodies are `payload=<the JSON>`, form-encoded.
      'Content-Type': rawBody[0] === 0x7b ? 'application/json' : 'application/x-www-form-urlencoded',
      'X-GitHub-Delivery': ctx.deliveryId,
      'X-GitHub-Event': ctx.eventType.split('.')[0] as string,
      'X-GitHub-Hook-ID': f.hookId ?? HOOK_ID,
      // What the hook belongs to (a repository's, an organization's, an App's), and its id.
      'X-GitHub-Hook-Installation-Target-ID': f.targetId ?? INSTALLATION_TARGET_ID,
      'X-GitHub-Hook-Installation-Target-Type': f.targetType ?? 'repository',
      'X-Hub-Signature': `sha1=${hmac('sha1', secret, rawBody).toString('hex')}`,
      [HEADER]: `sha256=${hmac('sha256', secret, rawBody).toString('hex')}`,
    };
  },

  verify(rawBody, headers, secrets, opts = {}) {
    requireSecrets(secrets);
    // Only the SHA-256 header counts: the SHA-1 one is legacy and GitHub advises against it.
    const value = requireHeader(headers, HEADER);
    if (!/^sha256=[0-9a-f]{64}$/.test(value)) {
      throw new SignatureError('malformed_header', `${HEADER} must be "sha256=" and 64 hex digits`);
    }
    if (opts.headersOnly) return;
    for (const secret of secrets) {
      if (safeEqual(value, `sha256=${hmac('sha256', secret, rawBody).toString('hex')}`)) return;
    }
    throw new SignatureError('no_match', `${HEADER} does not match the body for any secret`);
  },

  eventTypeOf(headers, rawBody) {
    const event = header(headers, 'X-GitHub-Event');
    const action = stringField(githubPayload(rawBody), 'action');
    return event && action ? `${event}.${action}` : event;
  },

  deliveryId(headers) {
    return header(headers, 'X-GitHub-Delivery');
  },

  freshFields(body) {
    // The delivery id lives in a header (newDeliveryId). In the body, what the event is about — the
    // issue, the pull request, the comment, the run — is new each time: its numeric id, its node id
    // and its timestamps. Where the hook lives (repository, organization, installation, enterprise)
    // and who acted (sender) stay, as they do between real deliveries of one hook.
    const fields: FreshField[] = [];
    // A push's messages: the head commit is the last of its commits, so the two say the same.
    const commits = Array.isArray(body.commits) ? body.commits : [];
    const last = Math.max(commits.length - 1, 0);
    const message = (i: number) => (_now: number, r: number) =>
      i === last ? HEAD_MESSAGE : (COMMIT_MESSAGES[(r + i) % COMMIT_MESSAGES.length] as string);
    for (const [i, c] of commits.entries())
      if (isObject(c) && typeof c.message === 'string') fields.push({ path: ['commits', i, 'message'], make: message(i) });
    if (isObject(body.head_commit) && typeof body.head_commit.message === 'string')
      fields.push({ path: ['head_commit', 'message'], make: message(last) });
    for (const [key, value] of Object.entries(body)) {
      if (STABLE.has(key) || !isObject(value)) continue;
      if (typeof value.id === 'number') fields.push({ path: [key, 'id'], make: () => 100_000_000 + (randomUint32() % 2_000_000_000) });
      const nodeId = value.node_id;
      if (typeof nodeId === 'string') fields.push({ path: [key, 'node_id'], make: () => freshNodeId(nodeId) });
      for (const stamp of ['created_at', 'updated_at']) {
        const old = value[stamp];
        // In the style that object's times are written in (a rule's `.000-04:00`, an issue's `Z`).
        if (typeof old === 'string') fields.push({ path: [key, stamp], make: (now) => timeLike(now, old), clock: true });
      }
    }
    return fields;
  },

  describe(body: JsonValue, fixtureName: string) {
    // The event name lives only in X-GitHub-Event; `issues.opened` is event `issues`, action `opened`.
    const event = fixtureName.split('.')[0] as string;
    const action = stringField(body, 'action');
    return { eventType: action ? `${event}.${action}` : event };
  },

  newDeliveryId() {
    return randomUUID();
  },
};
