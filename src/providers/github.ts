import { randomUUID } from 'node:crypto';
import { UsageError } from '../util/errors.js';
import type { JsonValue, Provider, TimingProfile } from './types.js';
import { SignatureError } from './types.js';
import { header, hmac, parseJson, requireHeader, requireSecrets, safeEqual, stringField, otherStringSecret } from './util.js';

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

/** The id of the hook that sends; GitHub's is a property of the hook, so any stable number will do. */
const HOOK_ID = '481516234';
/** The repository the hook is on: any stable number will do. */
const INSTALLATION_TARGET_ID = '35129377';

export const github: Provider = {
  name: 'github',
  title: 'GitHub',
  signatureHeader: HEADER,
  signedHeaders: [HEADER, 'X-Hub-Signature'],
  otherSecret: otherStringSecret,
  timestamped: false,
  rotation: false,
  profiles: { github: cloud, 'github-enterprise': enterprise },
  defaultProfile: 'github',
  verifier: {
    official: "@octokit/webhooks-methods' verify",
    futureTimestamp: 'refused', // no timestamp: the case does not apply
    // @octokit/webhooks' middleware parses the verified body and answers 400 to one that is not JSON.
    parsesJson: true,
    // "Payloads are capped at 25 MB" (GitHub's webhook docs): larger events are not delivered at all.
    maxBodyBytes: 25_000_000,
    editSignatures: (value, edit) => edit(value),
    // The event name lives only in X-GitHub-Event; GitHub adds new ones, which a receiver must 2xx.
    unknownType: { eventName: 'hookdrill_unknown_event' },
  },

  checkSecret(secret) {
    if (secret.length === 0) throw new UsageError('github: the secret is empty');
  },

  sign(rawBody, secrets, ctx) {
    const secret = secrets[0] ?? '';
    return {
      'Content-Type': 'application/json',
      'User-Agent': 'GitHub-Hookshot/7d1a3b5',
      'X-GitHub-Event': ctx.eventType.split('.')[0] as string,
      'X-GitHub-Delivery': ctx.deliveryId,
      'X-GitHub-Hook-ID': HOOK_ID,
      // What the hook belongs to (a repository's, an organization's, an App's): GitHub sends both.
      'X-GitHub-Hook-Installation-Target-Type': 'repository',
      'X-GitHub-Hook-Installation-Target-ID': INSTALLATION_TARGET_ID,
      'X-Hub-Signature': `sha1=${hmac('sha1', secret, rawBody).toString('hex')}`,
      [HEADER]: `sha256=${hmac('sha256', secret, rawBody).toString('hex')}`,
    };
  },

  verify(rawBody, headers, secrets) {
    requireSecrets(secrets);
    // Only the SHA-256 header counts: the SHA-1 one is legacy and GitHub advises against it.
    const value = requireHeader(headers, HEADER);
    if (!/^sha256=[0-9a-f]{64}$/.test(value)) {
      throw new SignatureError('malformed_header', `${HEADER} must be "sha256=" and 64 hex digits`);
    }
    for (const secret of secrets) {
      if (safeEqual(value, `sha256=${hmac('sha256', secret, rawBody).toString('hex')}`)) return;
    }
    throw new SignatureError('no_match', `${HEADER} does not match the body for any secret`);
  },

  eventTypeOf(headers, rawBody) {
    const event = header(headers, 'X-GitHub-Event');
    const action = stringField(parseJson(rawBody), 'action');
    return event && action ? `${event}.${action}` : event;
  },

  deliveryId(headers) {
    return header(headers, 'X-GitHub-Delivery');
  },

  freshFields() {
    // GitHub's delivery id lives in a header, made fresh by newDeliveryId; the body stays as it is.
    return [];
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
