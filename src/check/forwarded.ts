import { resignStored } from '../delivery/signer.js';
import type { Provider } from '../providers/index.js';
import { LISTEN_DEFAULTS } from '../receiver/listen-defaults.js';
import { typeMatches } from '../routes/match.js';
import { endToEnd } from '../util/http-headers.js';
import { forwardMarks } from '../worker/forward.js';

/**
 * `check --route NAME`: the service a listen route forwards to, judged as a receiver of those
 * forwards. listen verifies the provider's delivery, stores it, and its worker POSTs it to the
 * route's target re-signed as the provider signs (worker/forward.ts), with X-Hookdrill-Source,
 * -Delivery-Id and -Attempt, one event a request, waiting --forward-timeout for the answer.
 */
export interface ForwardedRoute {
  /** The route's name in the project file (for the words only). */
  name: string;
  /** Its event-type patterns: the target never sees a type outside them. */
  events: readonly string[];
  /** listen's --forward-timeout the target is judged by (default: listen's, 10 s). */
  forwardTimeout?: string | number;
}

/** The timeout listen gives a forward, unless told otherwise: what a route's target is held to. */
export const FORWARD_TIMEOUT_MS = LISTEN_DEFAULTS.forwardTimeoutMs;

/**
 * Cases whose request listen takes over and never forwards: a target cannot be judged on them.
 * Every rejection case (forged, stale, wrong secret) still runs: listen forwards re-signed, so a
 * target that accepts anything on its port takes what anyone else posts there too.
 */
const TAKEN_BY_LISTEN: Readonly<Record<string, string>> = {
  batch: 'listen splits a batch into one row per event and forwards each on its own: a target never gets a batch',
  'empty-batch': 'listen answers a body of no events (LINE Verify) itself and stores nothing: a target never gets one',
  'url-verification': "listen answers the provider's endpoint check itself: it never reaches a target",
  'forged-check': "listen answers (or refuses) the provider's endpoint check itself: it never reaches a target",
  ping: "listen answers Discord's PING itself: it never reaches a target",
  'probe-401': "listen answers Discord's PING probe itself: it never reaches a target",
  'subscription-confirmation': "listen completes SNS's subscription itself (visits SubscribeURL): a target never gets the confirmation",
  'forged-confirmation': "listen verifies SNS's subscription confirmation itself: a target never gets one",
  answer: "listen answers the provider itself: a target's answer body is never passed back to it",
  'slow-client': "listen's forwarder sends each request whole: a client dribbling its headers is listen's to face, not a target's",
};

/** Why a case is not judged through a route, or undefined: it is. */
export function takenByListen(caseName: string, route: ForwardedRoute): string | undefined {
  const why = TAKEN_BY_LISTEN[caseName];
  return why === undefined ? undefined : `route ${route.name}: ${why}`;
}

/** Whether the route takes this event type (so listen forwards it to the target at all). */
export function routeTakes(route: ForwardedRoute, eventType: string | undefined): boolean {
  return route.events.some((p) => typeMatches(p, eventType));
}

/**
 * The provider's headers as listen's forwarder sends them: the delivery as listen stored it (what
 * the provider sent, `stored`), signed anew by the function the forwarder calls, for the target's URL.
 */
export function resignedAsListen(
  provider: Provider,
  stored: Record<string, string>,
  body: Buffer,
  secrets: readonly string[],
  meta: { deliveryId: string; eventType: string | undefined; url: string },
  nowMs: number,
): Record<string, string> {
  return resignStored(provider, endToEnd(stored), body, secrets, meta, nowMs);
}

/**
 * The X-Hookdrill-* headers listen's forward adds, the attempt counted per delivery id over the
 * run (a copy check sends again is that delivery's next forward, as a retry or requeue is).
 */
export function forwardMarksFor(
  provider: Provider,
  headers: Record<string, string>,
  body: Buffer,
  attempts: Map<string, number>,
): Record<string, string> {
  const deliveryId = provider.deliveryId(headers, body) ?? '';
  const attempt = (attempts.get(deliveryId) ?? 0) + 1;
  attempts.set(deliveryId, attempt);
  return forwardMarks({ source: provider.name, deliveryId, attempt });
}
