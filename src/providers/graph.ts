import { checkDeclaration } from './declaration.js';
import { declaredProvider } from './declared.js';
import type { JsonObject, JsonValue, Provider, TimingProfile } from './types.js';
import { MINUTE, isObject, parseJson, randomAlnum } from './util.js';

/**
 * Microsoft Graph change notifications delivered by webhook, on the declaration engine's field
 * scheme (declared-field.ts) and query handshake (handshake.ts). Nothing is signed: the secret is
 * the `clientState` the subscription was made with, sent back as it is in every notification.
 * Sources:
 *   - learn.microsoft.com/graph/change-notifications-delivery-webhooks (microsoftgraph/microsoft-
 *     graph-docs-contrib, concepts/change-notifications-delivery-webhooks.md):
 *     "Receive notifications": a POST to the notificationUrl whose body is a collection, `value`,
 *     "When many changes occur, Microsoft Graph may send multiple notifications that correspond to
 *     different subscriptions in the same POST request". "Processing the change notification": a
 *     2xx within 3 seconds, else Graph "tries to resend the change notification multiple times, for
 *     up to 4 hours", then discards it; 202 Accepted where the work takes longer (persist first), a
 *     5xx where it was not persisted; "Validate the clientState property. It must match the value
 *     originally submitted with the subscription creation request. If there's a mismatch, don't
 *     consider the change notification as valid". "Throttling": "Notifications are published using
 *     an HTTP client with a 3-second timeout"; over 2900 ms is slow, an endpoint with 10% slow
 *     answers is throttled (its notifications delayed 10 minutes, failed ones retried in 10
 *     minutes), one at 15% has its notifications dropped. The retry schedule itself is not
 *     published: the one below is chosen to end within the 4 hours.
 *   - The same page's notificationUrl validation (includes/change-notifications-delivery-
 *     notificationurl-validation.md): a POST to `notificationUrl?validationToken=<token>` with
 *     Content-Type text/plain; charset=utf-8 and an empty body (microsoftgraph/microsoft-graph-docs
 *     PR #7341 added the header to the docs); the answer within 10 seconds: 200, text/plain, the
 *     URL-decoded token as the body. Graph compares the body ("Subscription validation request
 *     failed. Response must exactly match validationToken query parameter", the error a wrong echo
 *     gets: microsoftgraph/java-spring-webhooks-sample#82); Microsoft's own ASP.NET samples and
 *     training labs (their NotificationController's `Content(token, "plain/text")`, found in many
 *     public copies) answer with a content type that is not text/plain and validate, so another
 *     Content-Type around the right token is a warning in check, a wrapped or encoded token a failure.
 *   - Content-Type of a notification: `application/json; charset=utf-8` (a maintainer,
 *     microsoftgraph/microsoft-graph-docs#232, 2016: "Only the first request (the validation
 *     request) is text/plain ... The actual notifications should be coming through with a content
 *     type of application/json; charset=utf-8"). No public capture of a notification's other
 *     headers was found (User-Agent and the rest): the recorded delivery says they are not known.
 *   - @microsoft/microsoft-graph-types 2.43.1, ChangeNotification: changeType (created, updated,
 *     deleted), clientState ("The client can check whether the change notification came from the
 *     service by comparing the values of the clientState property"), `id` ("Unique ID for the
 *     notification. Optional." — microsoftgraph/microsoft-graph-docs PR #8811), lifecycleEvent,
 *     resource, resourceData, subscriptionExpirationDateTime, subscriptionId, tenantId. hookdrill
 *     keys each notification on its `id` (listen: splitBatch; an item without one on its hash).
 *   - learn.microsoft.com/graph/change-notifications-lifecycle-events: lifecycle notifications
 *     (reauthorizationRequired, subscriptionRemoved, missed) go to the lifecycleNotificationUrl,
 *     which "can be the same as the notificationUrl", in the same collection, each with the
 *     subscription's clientState, to be answered 202 and validated the same way: they are fixtures
 *     here (`lifecycle.<event>`), their event type the lifecycleEvent.
 *   - A recorded delivery (test/wire/recorded/graph.json): the body of a real created-message
 *     notification a user pasted (microsoftgraph/microsoft-graph-docs#3055, 2018).
 * No official verifier exists: Graph's SDKs do not check clientState. The judge is the docs' rule,
 * each notification's clientState compared with the secret (test/receivers/graph_scheme.py).
 */

/** "for up to 4 hours", by exponential back-off (the docs): the steps themselves are chosen, 3h46m in all. */
const RETRIES_MIN = [1, 5, 10, 30, 60, 120];

const profile: TimingProfile = {
  name: 'graph',
  summary:
    'Microsoft Graph: 3s timeout (published: "an HTTP client with a 3-second timeout"); retries for up to 4 hours (published), at 1m, 5m, 10m, 30m, 1h, 2h (chosen: the schedule is not published)',
  published: false,
  timeoutMs: 3_000,
  retryDelaysMs: RETRIES_MIN.map((m) => m * MINUTE),
  maxRedirects: 0,
  retryAfterStatuses: [],
  stopStatuses: [],
};

const DOCS = 'learn.microsoft.com/graph/change-notifications-delivery-webhooks';

/** A notification id of the form the docs' example shows ("lsgTZMr9KwAAA"). */
const notificationId = () => `${randomAlnum(10)}AAA`;

/** The notifications of a body: its `value` list. */
const itemsOf = (body: JsonValue | undefined): JsonValue[] => (isObject(body) && Array.isArray(body.value) ? body.value : []);

/** A notification's type: its changeType, or for a lifecycle notification its lifecycleEvent. */
function typeOf(item: JsonValue | undefined): string | undefined {
  if (!isObject(item)) return undefined;
  const t = item.changeType ?? item.lifecycleEvent;
  return typeof t === 'string' ? t : undefined;
}

const base = declaredProvider(
  checkDeclaration(
    'graph',
    {
      title: 'Microsoft Graph',
      signature: { scheme: 'field', field: 'value.*.clientState', forged: 'discard' },
      id: { body: 'value.0.id' },
      eventType: { body: 'value.0.changeType' },
      contentType: 'application/json; charset=utf-8',
      timeout: '3s',
      retries: RETRIES_MIN.map((m) => `${m}m`),
      handshake: { name: 'notificationUrl validation', challenge: { query: 'validationToken' }, answer: 'text', within: '10s' },
    },
    'src/providers/graph.ts',
    '.',
  ),
  {
    profiles: { graph: profile },
    defaultProfile: 'graph',
    contract: {
      batching: {
        events: 'list',
        path: ['value'],
        max: 100,
        id: ['id'],
        type: ['changeType'],
        typical: 3,
        source: `${DOCS}: "Microsoft Graph may send multiple notifications that correspond to different subscriptions in the same POST request" in value (how many at most is not published: 100 chosen); each one's id, "Unique ID for the notification" (microsoftgraph/microsoft-graph-docs PR #8811)`,
      },
      resends: {
        events: 'on-failure',
        source: `${DOCS}: without a 2xx within 3 seconds Graph "tries to resend the change notification multiple times, for up to 4 hours"`,
      },
      endpointChecks: [
        {
          name: 'notificationUrl validation',
          signed: false,
          answer: '200 with the validationToken query parameter, URL-decoded, alone as the body, text/plain, within 10 s',
          source: `${DOCS} (notificationUrl validation): a POST with ?validationToken= and an empty text/plain body, before the subscription is made; the lifecycleNotificationUrl is validated the same way`,
        },
      ],
      answer: {
        kind: 'status',
        source: `${DOCS}: "send a 2xx class code back to Microsoft Graph" within 3 seconds (202 Accepted once persisted, where the work takes longer)`,
      },
      related: {
        about: 'a message created, then updated',
        first: 'message.created',
        next: 'message.updated',
        path: ['resourceData', 'id'],
        dedupeOn: "each notification's id",
        source: `${DOCS}: a notification per change of a resource, each with its own id (microsoftgraph/microsoft-graph-docs PR #8811); resourceData.id is the resource's`,
      },
      refusal: {
        kind: 'discard',
        what: 'a notification whose clientState is not the secret is not valid: dropped, and the POST still answered 2xx',
        source: `${DOCS}: "Validate the clientState property ... If there's a mismatch, don't consider the change notification as valid"; every POST answered 2xx within 3 s`,
      },
    },
    verifier: {
      official: "Graph's documented rule (no SDK checks it): each notification's clientState compared with the subscription's",
      futureTimestamp: 'refused', // no timestamp: the cases do not apply
      parsesJson: true,
      unknownType: { path: ['value', '0', 'changeType'], value: 'hookdrill_unknown_change_type' },
    },
    newDeliveryId: notificationId,
    freshFields(body: JsonObject) {
      // Every notification of the body: a captured batch sent again is new notifications, each with its own id.
      return itemsOf(body).flatMap((item, i) =>
        isObject(item) && typeof item.id === 'string' ? [{ path: ['value', i, 'id'], make: notificationId }] : [],
      );
    },
  },
);

export const graph: Provider = {
  ...base,
  eventTypeOf(headers, rawBody) {
    return base.eventTypeOf(headers, rawBody) ?? typeOf(itemsOf(parseJson(rawBody))[0]);
  },
  describe(body, fixtureName) {
    const described = base.describe(body, fixtureName);
    const type = typeOf(itemsOf(body)[0]);
    return type ? { ...described, eventType: type } : described;
  },
};
