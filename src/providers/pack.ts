import { fileURLToPath } from 'node:url';
import { checkDeclaration } from './declaration.js';
import type { CheckedDeclaration, ProviderDeclaration } from './declaration.js';

/**
 * hookdrill's pack: declarations for senders a plain HMAC of the body describes (issue 55, item
 * 2), shipped with hookdrill — the same JSON a team writes under `providers` in its project file,
 * registered as a third origin beside the project file and the library's declareProvider
 * (providers/names.ts). A project file (or declareProvider) that declares one of these names wins:
 * the team's own statement of its account (another retry schedule, its own fixtures) is the
 * stronger fact, and `hookdrill profiles` names the file the one in force came from.
 * `hookdrill profiles <name> --declaration` prints one as a team's starting point.
 *
 * Only data: each declaration is checked the first time its name is asked for. Every fact below
 * is from the sender's own docs (the URL beside it) or, where a number is not published, chosen
 * and said so ("chosen"). Fixtures are in fixtures/<name>/, bodies from each sender's docs'
 * examples.
 */

/** What the pack declares of one sender, and where each fact came from. */
export interface PackEntry {
  declaration: ProviderDeclaration;
  sources: readonly string[];
}

export const PACK: Readonly<Record<string, PackEntry>> = {
  bitbucket: {
    sources: [
      'https://support.atlassian.com/bitbucket-cloud/docs/manage-webhooks/ (secure webhooks): X-Hub-Signature: sha256=<hex HMAC-SHA256 of the raw body> with the webhook secret',
      'https://support.atlassian.com/bitbucket-cloud/docs/event-payloads/: X-Event-Key (repo:push, pullrequest:created, …), X-Request-UUID, X-Hook-UUID, X-Attempt-Number; User-Agent Bitbucket-Webhooks/2.0',
      "https://confluence.atlassian.com/bbkb/troubleshoot-webhooks-1167729092.html: a request not answered in time is logged TIMEOUT; payloads are limited to 256 KB. X-Attempt-Number counts attempts (bleenco/abstruse's recorded headers show 1). The timeout (10 s) and two retries at 30 s and 2 m are chosen, not published",
    ],
    declaration: {
      title: 'Bitbucket Cloud',
      signature: { header: 'X-Hub-Signature', algorithm: 'sha256', encoding: 'hex', content: '{body}', value: 'sha256={signature}' },
      // X-Request-UUID is the request's, kept on its retries (X-Attempt-Number counts them).
      id: { header: 'X-Request-UUID' },
      eventType: { header: 'X-Event-Key' },
      headers: {
        'Content-Type': 'application/json',
        'User-Agent': 'Bitbucket-Webhooks/2.0',
        'X-Event-Key': '{event}',
        'X-Hook-UUID': '08c5e2b4-0c1d-4a27-9d5e-2f6c1e9a7b30',
        'X-Request-UUID': '{id}',
        'X-Hub-Signature': '{signature}',
      },
      timeout: '10s',
      retries: ['30s', '2m'],
      fixtures: 'fixtures/bitbucket',
      fixture: 'repo:push',
    },
  },
  pagerduty: {
    sources: [
      'https://developer.pagerduty.com/docs/webhooks-overview#webhook-signatures: X-PagerDuty-Signature: v1=<hex HMAC-SHA256 of the raw body>, several comma-separated while a secret is rotated; any match is authentic',
      'https://developer.pagerduty.com/docs/webhooks-overview: X-Webhook-Id, X-Webhook-Subscription; the body {"event": {"id", "event_type", "resource_type", "occurred_at", "agent", "client", "data"}}',
      "timeout and retries: not verified from PagerDuty's docs in this round (chosen: 10 s; retried at 1 m, 5 m, 30 m)",
      'github.com/PagerDuty/go-pagerduty webhookv3.VerifySignature: splits the header on ",", keeps the v1= entries',
      'drudge/n8n-nodes-pagerduty-trigger README.md (commit 21b19f4, a pagey.ping PagerDuty delivered, Oct 2022): the headers in the order sent — Accept: application/json, X-Webhook-Id (a UUID), User-Agent, X-PagerDuty-Signature, X-Webhook-Subscription, Content-Type; the body compact JSON',
    ],
    declaration: {
      title: 'PagerDuty (v3 webhooks)',
      signature: {
        header: 'X-PagerDuty-Signature',
        algorithm: 'sha256',
        encoding: 'hex',
        content: '{body}',
        value: '{signatures}',
        each: 'v1={signature}',
        join: ',',
      },
      id: { body: 'event.id' },
      eventType: { body: 'event.event_type' },
      // As a real delivery came (test/wire/recorded/pagerduty.json): Accept first, Content-Type last.
      headers: {
        Accept: 'application/json',
        'X-Webhook-Id': '{id}',
        'User-Agent': 'PagerDuty-Webhook/V3.0',
        'X-PagerDuty-Signature': '{signature}',
        'X-Webhook-Subscription': 'PSUBSCR',
        'Content-Type': 'application/json',
      },
      timeout: '10s',
      retries: ['1m', '5m', '30m'],
      fixtures: 'fixtures/pagerduty',
      fixture: 'incident.triggered',
    },
  },
  mux: {
    sources: [
      'https://docs.mux.com/core/verify-webhook-signatures: Mux-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body"> with the webhook signing secret',
      "@mux/mux-node 15.3.0 webhooks.verifySignature (resources/webhooks/webhooks.js): `timestampAge > 300` refused — one-sided, a timestamp from the future passes (as Stripe's); unwrap verifies, then parses",
      'https://docs.mux.com/core/listen-for-webhooks: the body {"type", "id", "object", "data", "created_at", …}; timeout and retries chosen (10 s; 1 m to 12 h), not verified from Mux\'s docs in this round',
    ],
    declaration: {
      title: 'Mux',
      signature: {
        header: 'Mux-Signature',
        algorithm: 'sha256',
        encoding: 'hex',
        content: '{timestamp}.{body}',
        value: 't={timestamp},v1={signature}',
      },
      timestamp: { tolerance: '5m', future: 'accepted' },
      id: { body: 'id' },
      eventType: { body: 'type' },
      headers: { 'Content-Type': 'application/json', 'Mux-Signature': '{signature}' },
      timeout: '10s',
      retries: ['1m', '5m', '30m', '2h', '6h', '12h'],
      fixtures: 'fixtures/mux',
      fixture: 'video.asset.ready',
    },
  },
  vercel: {
    sources: [
      'https://vercel.com/docs/webhooks/webhooks-api#securing-webhooks: x-vercel-signature, the hex HMAC-SHA1 of the raw body with the webhook secret (the integration client secret)',
      'https://vercel.com/docs/webhooks/webhooks-api#payload: {"type", "id", "createdAt", "payload", "region"}',
      'timeout and retries: not published (chosen: 10 s; retried at 1 m, 10 m, 1 h)',
    ],
    declaration: {
      title: 'Vercel',
      signature: { header: 'x-vercel-signature', algorithm: 'sha1', encoding: 'hex', content: '{body}' },
      id: { body: 'id' },
      eventType: { body: 'type' },
      headers: { 'Content-Type': 'application/json', 'x-vercel-signature': '{signature}' },
      timeout: '10s',
      retries: ['1m', '10m', '1h'],
      fixtures: 'fixtures/vercel',
      fixture: 'deployment.succeeded',
    },
  },
  calendly: {
    sources: [
      'https://developer.calendly.com/api-docs/4c305798a61d3-webhook-signatures: Calendly-Webhook-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body"> with the webhook signing key; its sample refuses a t older than 3 minutes',
      'https://developer.calendly.com/api-docs/: the body {"created_at", "created_by", "event": "invitee.created", "payload": {…, "uri"}}; no event id (keyed on payload.uri, the invitee, which its created and canceled share — see docs/wire.md)',
      "timeout and retries: chosen (10 s; 1 m to 24 h), not verified from Calendly's docs in this round",
      'an invitee.created Calendly delivered (24 Dec 2023), its headers and body kept in a public webhook handler (find_string id 30914099991): User-Agent: Calendly, Accept: */*, Content-Type: application/json; the body compact JSON, 1951 bytes as logged, every field of it now in fixtures/calendly/invitee.created.json',
    ],
    declaration: {
      title: 'Calendly',
      signature: {
        header: 'Calendly-Webhook-Signature',
        algorithm: 'sha256',
        encoding: 'hex',
        content: '{timestamp}.{body}',
        value: 't={timestamp},v1={signature}',
      },
      timestamp: { tolerance: '3m' },
      id: { body: 'payload.uri' },
      eventType: { body: 'event' },
      // As a real delivery came (test/wire/recorded/calendly.json): User-Agent Calendly, Accept */*, a bare
      // application/json — not the "; charset=utf-8" this declared before.
      headers: {
        'User-Agent': 'Calendly',
        Accept: '*/*',
        'Content-Type': 'application/json',
        'Calendly-Webhook-Signature': '{signature}',
      },
      timeout: '10s',
      retries: ['1m', '5m', '30m', '2h', '8h', '24h'],
      fixtures: 'fixtures/calendly',
      fixture: 'invitee.created',
    },
  },
  typeform: {
    sources: [
      'https://www.typeform.com/developers/webhooks/secure-your-webhooks/: Typeform-Signature: sha256=<base64 HMAC-SHA256 of the raw body> with the webhook secret',
      'https://www.typeform.com/developers/webhooks/example-payload/: {"event_id", "event_type": "form_response", "form_response": {…}}',
      "timeout and retries: not verified from Typeform's docs in this round (chosen: 30 s; retried at 2 m, 5 m, 10 m, 1 h)",
      'port-labs/port-docs, "Send TypeForm survey results to Port" (a form_response Typeform delivered, May 2025): User-Agent: Typeform Webhooks, Content-Type: application/json; the body\'s form_response has landed_at before submitted_at and an ending object, as fixtures/typeform now does',
    ],
    declaration: {
      title: 'Typeform',
      signature: { header: 'Typeform-Signature', algorithm: 'sha256', encoding: 'base64', content: '{body}', value: 'sha256={signature}' },
      id: { body: 'event_id' },
      eventType: { body: 'event_type' },
      headers: { 'Content-Type': 'application/json', 'User-Agent': 'Typeform Webhooks', 'Typeform-Signature': '{signature}' },
      timeout: '30s',
      retries: ['2m', '5m', '10m', '1h'],
      fixtures: 'fixtures/typeform',
      fixture: 'form_response',
    },
  },
  sentry: {
    sources: [
      'https://docs.sentry.io/integrations/integration-platform/webhooks/: Content-Type, Request-ID, Sentry-Hook-Resource (installation, event_alert, issue, metric_alert, error, comment), Sentry-Hook-Timestamp, Sentry-Hook-Signature: the hex HMAC-SHA256 of the body with the client secret (the timestamp is not signed)',
      'https://sentry.io/changelog/2023-10-3-change-to-integration-platform-webhook-handling: answer within 1 second or it is a timeout; not retried (no retries in the docs)',
      "getsentry/sentry src/sentry/sentry_apps/api/serializers/app_platform_event.py (the sender's own code; no captured delivery found): the same five headers in this order, Request-ID uuid4().hex; the body compact with action, installation, data, actor in that order",
    ],
    declaration: {
      title: 'Sentry (integration platform)',
      signature: { header: 'Sentry-Hook-Signature', algorithm: 'sha256', encoding: 'hex', content: '{body}' },
      // Request-ID: "a unique identifier for tracking and debugging specific events".
      id: { header: 'Request-ID' },
      eventType: { header: 'Sentry-Hook-Resource' },
      headers: {
        'Content-Type': 'application/json',
        'Request-ID': '{id}',
        'Sentry-Hook-Resource': '{event}',
        'Sentry-Hook-Timestamp': '{timestamp}',
        'Sentry-Hook-Signature': '{signature}',
      },
      timeout: '1s',
      fixtures: 'fixtures/sentry',
      fixture: 'issue',
    },
  },
  coinbase: {
    sources: [
      'https://docs.cdp.coinbase.com/commerce/docs/webhooks-security: X-CC-Webhook-Signature, the hex HMAC-SHA256 of the raw body with the shared secret',
      'coinbase-commerce-node Webhook.verifySigHeader(rawBody, signature, secret): the same, compared in constant time; verifyEventBody parses {"event": {…}}',
      'https://docs.cdp.coinbase.com/commerce/docs/webhooks: {"id", "scheduled_for", "attempt_number", "event": {"id", "type", "api_version", "created_at", "data"}}; timeout and retries chosen (10 s; 1 m to 48 h), not verified in this round',
      'a charge:confirmed Coinbase Commerce delivered (May 2018), its headers and body published in doanhkaka\'s blog post "Tích hợp Coinbase Commerce API": User-Agent: weipay-webhooks, Content-Type: application/json, Accept: */*; the body compact JSON with a UUID string as its top-level id (the docs\' example has a number), keys attempt_number, event, id, scheduled_for — as fixtures/coinbase now are',
    ],
    declaration: {
      title: 'Coinbase Commerce',
      signature: { header: 'X-CC-Webhook-Signature', algorithm: 'sha256', encoding: 'hex', content: '{body}' },
      id: { body: 'event.id' },
      eventType: { body: 'event.type' },
      // As a real delivery came (test/wire/recorded/coinbase.json): User-Agent weipay-webhooks and Accept */*
      // beside the two this declared. Not its Accept-Encoding: a receiver would compress its answer.
      headers: {
        'User-Agent': 'weipay-webhooks',
        'Content-Type': 'application/json',
        'X-CC-Webhook-Signature': '{signature}',
        Accept: '*/*',
      },
      timeout: '10s',
      retries: ['1m', '5m', '30m', '2h', '8h', '24h', '48h'],
      fixtures: 'fixtures/coinbase',
      fixture: 'charge.confirmed',
    },
  },
  notion: {
    sources: [
      'https://developers.notion.com/reference/webhooks#validating-event-payloads-recommended: X-Notion-Signature: sha256=<hex HMAC-SHA256 of the raw body> keyed with the verification_token',
      'https://developers.notion.com/reference/webhooks#step-2-verifying-the-subscription: the first POST is {"verification_token": "secret_…"}, unsigned, which the user pastes into Notion\'s UI — nothing is echoed, so no handshake is declared (see docs/wire.md)',
      'https://developers.notion.com/reference/webhooks-events-delivery: {"id", "timestamp", "workspace_id", "type", "entity", "data", "attempt_number", …}; timeout and retries chosen (10 s; 8 retries, 1 m to 8 h), not verified in this round',
    ],
    declaration: {
      title: 'Notion',
      signature: { header: 'X-Notion-Signature', algorithm: 'sha256', encoding: 'hex', content: '{body}', value: 'sha256={signature}' },
      id: { body: 'id' },
      eventType: { body: 'type' },
      headers: { 'Content-Type': 'application/json', 'X-Notion-Signature': '{signature}' },
      timeout: '10s',
      retries: ['1m', '5m', '15m', '1h', '2h', '4h', '8h', '8h'],
      fixtures: 'fixtures/notion',
      fixture: 'page.created',
    },
  },
};

/** The pack's names, in the order `profiles` lists them. */
export const PACK_NAMES: readonly string[] = Object.keys(PACK);

/** Where the pack's paths (fixtures/<name>) are from: the package root, beside dist/. */
const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The origin a pack declaration's messages and profiles name. */
export const PACK_FILE = "hookdrill's pack (src/providers/pack.ts)";

const checked = new Map<string, CheckedDeclaration>();

/** A pack sender's declaration, checked once, or undefined when the pack has none of that name. */
export function packDeclaration(name: string): CheckedDeclaration | undefined {
  if (!Object.hasOwn(PACK, name)) return undefined;
  let d = checked.get(name);
  if (!d) {
    d = checkDeclaration(name, (PACK[name] as PackEntry).declaration, PACK_FILE, ROOT);
    checked.set(name, d);
  }
  return d;
}
