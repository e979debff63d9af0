import { createHash, randomUUID } from 'node:crypto';
import { checkDeclaration } from './declaration.js';
import { declaredProvider } from './declared.js';
import type { JsonObject, JsonValue, OutgoingHeaders, Provider, TimingProfile } from './types.js';
import { isObject } from './util.js';

/**
 * GitLab's webhooks, on the declaration engine's token scheme (providers/declared-token.ts): GitLab
 * signs nothing — it sends the hook's secret token as it is, and a receiver compares it. Sources:
 *   - docs.gitlab.com/user/project/integrations/webhooks/#create-a-webhook ("Secret token"): the
 *     token is sent in `X-Gitlab-Token`; there is no signature and no official verifier, so the
 *     documented rule is the judge: the header equal to the token (compared in constant time).
 *   - GitLab's WebHookService#build_headers (gitlabhq app/services/web_hook_service.rb), the
 *     headers in the order they are built: `Content-Type: application/json`, `User-Agent:
 *     GitLab/<version>`, `Idempotency-Key` (a UUID kept when a logged request is sent again),
 *     `X-Gitlab-Event` (the hook's name titleized: "Push Hook"), `X-Gitlab-Webhook-UUID`
 *     (SecureRandom.uuid, new for every request), `X-Gitlab-Instance` (the instance's base URL),
 *     then `X-Gitlab-Token` where the hook has one, then `X-Gitlab-Event-UUID`
 *     (lib/gitlab/web_hooks/recursion_detection: one UUID for the request that triggered the
 *     hook, carried into its async retries). The body is compact JSON (Gitlab::Json::LimitedEncoder),
 *     at most 25 MB (REQUEST_BODY_SIZE_LIMIT).
 *   - gitlab-org/gitlab MR 160952 ("Implement Idempotency-keys for webhooks", GitLab 17.4):
 *     Idempotency-Key is the same on every retry of one event, so receivers can tell a retry from
 *     a new event — the key to dedupe on.
 *   - docs.gitlab.com/user/gitlab_com/#webhooks: a 10 s timeout; docs.gitlab.com/user/project/
 *     integrations/webhooks/#auto-disabled-webhooks: a hook that fails 4 times in a row is disabled
 *     for 1 minute, doubling to 24 hours, and for good after 40 failures. GitLab does not retry a
 *     failed request on a schedule: a person resends it (Recent events → Resend request, or the
 *     API's POST /projects/:id/hooks/:hook_id/events/:hook_event_id/resend), with its Idempotency-Key.
 *   - A recorded delivery: GitLab's own API docs (doc/api/project_webhooks.md, "List project
 *     webhook events"), a push event's request_headers and request_data as GitLab logged them.
 *   - The event bodies: docs.gitlab.com/user/project/integrations/webhook_events/ (each event's
 *     payload example, `object_kind` naming it; `X-Gitlab-Event` is its hook's name).
 *   - Not published: which version GitLab.com runs (a real delivery's `GitLab/17.11.1-ee` is sent).
 */

const profile: TimingProfile = {
  name: 'gitlab',
  summary: "GitLab: 10s timeout; no scheduled retries — a failed request is resent by hand (GitLab's docs)",
  published: true,
  timeoutMs: 10_000,
  retryDelaysMs: [],
  maxRedirects: 0,
  retryAfterStatuses: [],
  stopStatuses: [],
};

/** The instance a delivery says it came from (X-Gitlab-Instance): GitLab.com's base URL. */
export const GITLAB_INSTANCE = 'https://gitlab.com';
/** A real delivery's User-Agent (a GitLab 17.11 EE instance's tag push, recorded in a public repository). */
export const GITLAB_USER_AGENT = 'GitLab/17.11.1-ee';

/**
 * X-Gitlab-Event of a body, by its object_kind, as WebHookService.hook_to_event names each hook
 * (`push_hooks` → "Push Hook"; a job's object_kind is `build`, its hook `job_hooks`; a
 * confidential issue or note goes to the confidential hooks).
 */
const HOOK_OF: Readonly<Record<string, string>> = {
  push: 'Push Hook',
  tag_push: 'Tag Push Hook',
  issue: 'Issue Hook',
  work_item: 'Issue Hook',
  note: 'Note Hook',
  merge_request: 'Merge Request Hook',
  wiki_page: 'Wiki Page Hook',
  pipeline: 'Pipeline Hook',
  build: 'Job Hook',
  deployment: 'Deployment Hook',
  feature_flag: 'Feature Flag Hook',
  release: 'Release Hook',
  emoji: 'Emoji Hook',
  access_token: 'Resource Access Token Hook',
  vulnerability: 'Vulnerability Hook',
  milestone: 'Milestone Hook',
};

/** The hook's name of an object_kind GitLab has not named here: its words titled, " Hook" after. */
function hookOf(body: JsonValue): string | undefined {
  if (!isObject(body) || typeof body.object_kind !== 'string') return undefined;
  const kind = body.object_kind;
  const attrs = isObject(body.object_attributes) ? body.object_attributes : undefined;
  if ((kind === 'issue' || kind === 'work_item') && attrs?.confidential === true) return 'Confidential Issue Hook';
  if (kind === 'note' && attrs?.confidential === true) return 'Confidential Note Hook';
  return (
    HOOK_OF[kind] ??
    `${kind
      .split('_')
      .map((w) => w.charAt(0).toUpperCase() + w.slice(1))
      .join(' ')} Hook`
  );
}

/**
 * X-Gitlab-Event-UUID of a delivery: GitLab keeps it across the async retries of one request, so
 * it is made from the delivery (its Idempotency-Key) and is the same on every attempt; a receiver
 * that dedupes on it is counted as holding the delivery (otherIds).
 */
export function gitlabEventUuid(idempotencyKey: string): string {
  const h = createHash('sha256').update(`gitlab-event-uuid:${idempotencyKey}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-a${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

const base = declaredProvider(
  checkDeclaration(
    'gitlab',
    {
      title: 'GitLab',
      signature: { scheme: 'token', header: 'X-Gitlab-Token' },
      id: { header: 'Idempotency-Key' },
      eventType: { header: 'X-Gitlab-Event' },
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': GITLAB_USER_AGENT,
        'Idempotency-Key': '{id}',
        'X-Gitlab-Event': '{event}',
        'X-Gitlab-Instance': GITLAB_INSTANCE,
        'X-Gitlab-Token': '{signature}',
      },
      timeout: '10s',
    },
    'src/providers/gitlab.ts',
    '.',
  ),
  {
    profiles: { gitlab: profile },
    defaultProfile: 'gitlab',
    contract: {
      batching: { events: 'one', source: 'docs.gitlab.com/user/project/integrations/webhook_events/: one event a request' },
      resends: {
        events: 'by-hand',
        source:
          'docs.gitlab.com/user/project/integrations/webhooks/ (resend a request from Recent events) and gitlab-org/gitlab MR 160952: a resent request keeps its Idempotency-Key; no scheduled retries',
      },
      endpointChecks: [],
      answer: {
        kind: 'status',
        source:
          'docs.gitlab.com/user/project/integrations/webhooks/: a 2xx within the timeout (10 s on GitLab.com); 4 failures in a row disable the hook',
      },
      related: {
        about: 'an issue opened, then updated',
        first: 'issue.open',
        next: 'issue.update',
        path: ['object_attributes', 'id'],
        dedupeOn: 'Idempotency-Key',
        source:
          'docs.gitlab.com/user/project/integrations/webhook_events/#work-item-events: open, update, close … of one issue (object_attributes.id), each its own request with its own Idempotency-Key',
      },
    },
    verifier: {
      official: "GitLab's documented rule (X-Gitlab-Token equal to the hook's secret token; GitLab has no official verifier)",
      futureTimestamp: 'refused', // no timestamp: the cases do not apply
      parsesJson: false,
      maxBodyBytes: 25 * 1024 * 1024,
      unknownType: { path: ['object_kind'], value: 'hookdrill_unknown_event' },
    },
    newDeliveryId: randomUUID,
    freshFields(body: JsonObject) {
      // A new issue, merge request, note … each send: its id (and iid) made new, so two sends are
      // two objects, as two events of GitLab's are.
      const attrs = isObject(body.object_attributes) ? body.object_attributes : undefined;
      return typeof attrs?.id === 'number'
        ? [{ path: ['object_attributes', 'id'], make: (_now: number, r: number) => 1_000 + (r % 1e9) }]
        : [];
    },
  },
);

export const gitlab: Provider = {
  ...base,
  // X-Gitlab-Webhook-UUID is new on every request: a re-sign replaces it.
  signedHeaders: [...base.signedHeaders, 'X-Gitlab-Webhook-UUID'],
  sign(rawBody, secrets, ctx) {
    const declared = base.sign(rawBody, secrets, ctx);
    // In build_headers' order: the per-request UUID before the instance, the event's UUID last.
    const out: OutgoingHeaders = {};
    for (const [name, value] of Object.entries(declared)) {
      if (name === 'X-Gitlab-Instance') out['X-Gitlab-Webhook-UUID'] = randomUUID();
      out[name] = value;
    }
    out['X-Gitlab-Event-UUID'] = gitlabEventUuid(ctx.deliveryId);
    return out;
  },
  describe(body, fixtureName) {
    return { eventType: hookOf(body) ?? fixtureName };
  },
  otherIds(deliveryId) {
    return [gitlabEventUuid(deliveryId)];
  },
};
