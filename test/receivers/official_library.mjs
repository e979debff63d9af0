/**
 * A receiver in plain Node that verifies with each provider's official library, the way their
 * docs show it: `stripe`'s webhooks.constructEvent, @octokit/webhooks-methods' verify,
 * `standardwebhooks`' Webhook.verify, `svix`'s Webhook.verify, Slack's rule as @slack/bolt's verify-request applies it
 * (v0 over v0:ts:body, only a timestamp older than 5 minutes refused), Shopify's documented HMAC,
 * @paddle/paddle-node-sdk's webhooks.unmarshal (keyed on event_id, as Paddle's docs say to dedupe),
 * @workos-inc/node's webhooks.constructEvent (given the body as express.json() parses it, as WorkOS's docs do),
 * square's WebhooksHelper.verifySignature (over PUBLIC_URL, the notification URL as registered, or
 * where none is set the URL the request came to), discord-interactions' verifyKey (SECRET is the
 * application's public key; a PING is answered {"type": 1}, a bad signature 401, as Discord's
 * docs and the package's verifyKeyMiddleware do), @line/bot-sdk's validateSignature (keyed on each
 * event's webhookEventId, every event of a body; a body of no events, LINE's URL check, answered 200), @hubspot/api-client's
 * Signature.isValid v3 (over PUBLIC_URL or the URL the request came to; keyed on the first event's eventId;
 * with HUBSPOT_SIGNATURE=default, isValid with its default version, v1, over X-HubSpot-Signature),
 * Zoom's check as @zoom/rivet applies it (JSON.stringify of the parsed body, no window; its verifier
 * is internal to its own receiver, so written out; endpoint.url_validation answered as Rivet does),
 * @linear/sdk's LinearWebhookClient.verify (keyed on Linear-Delivery), @sendgrid/eventwebhook's
 * verifySignature (SECRET is the verification key; keyed on the first event's sg_event_id), and
 * GitLab's documented rule (no library: X-Gitlab-Token equal to the token; keyed on Idempotency-Key),
 * Mailgun's documented check (no library: the body's signature, the HMAC of timestamp + token; keyed on event-data.id),
 * Twitch EventSub's documented check (no library: sha256= HMAC of Message-Id + Message-Timestamp +
 * body, a timestamp over 10 minutes old refused; keyed on Message-Id; a webhook_callback_verification
 * answered with its raw challenge as text/plain, as the docs' sample does),
 * twilio's validateRequest (over PUBLIC_URL or the URL the request came to, with the form's
 * parameters as express.urlencoded() parses them; keyed on I-Twilio-Idempotency-Token; an incoming
 * message or call answered with TwiML's empty <Response/> as text/xml, as MessagingResponse writes it;
 * a URL carrying bodySHA256, a JSON body: validateRequestWithBody, keyed on each CloudEvent's id),
 * sns-validator's MessageValidator.validate (pinned to HOOKDRILL_SNS_HOST; SubscribeURL visited),
 * and google-auth-library's OAuth2Client.verifyIdToken for Pub/Sub push (its certs fetched from
 * hookdrill's key server, 127.0.0.1:$HOOKDRILL_JWKS_PORT; the audience the URL; keyed on messageId),
 * and two of hookdrill's pack (src/providers/pack.ts): @mux/mux-node's webhooks.unwrap (keyed on the
 * event's id) and coinbase-commerce-node's Webhook.verifyEventBody (keyed on event.id),
 * and Plaid's documented verification on the `plaid` SDK (webhookVerificationKeyGet against hookdrill's
 * key server, basePath http://127.0.0.1:$HOOKDRILL_JWKS_PORT; jsonwebtoken's verify pinned to ES256
 * with a 5-minute maxAge; request_body_sha256 compared in constant time; keyed on the body's hash),
 * and PayPal's documented offline check (its Node SDK is deprecated: SHA256withRSA over transmission
 * id|time|SECRET, the webhook id|CRC-32 of the raw body, by the certificate at PAYPAL-CERT-URL fetched
 * only from HOOKDRILL_CERT_HOST, trusted through NODE_EXTRA_CA_CERTS; keyed on the event's id),
 * and Microsoft Graph's documented rule (no library checks it: a POST with ?validationToken= answered
 * with the decoded token as text/plain; each notification's clientState compared with the secret, one
 * that does not match dropped, the others kept under their own id and answered 202).
 * Whatever the library throws is answered 400, as the docs' examples do. What it accepts is
 * stored (appended to FILE and fsynced) before the 200; ids already in FILE are duplicates.
 *
 *   node official_library.mjs PROVIDER SECRET FILE     (listens on 127.0.0.1:$PORT)
 */
import { createHash, createHmac, createPublicKey, createVerify, timingSafeEqual } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readFileSync, writeSync } from 'node:fs';
import { createServer } from 'node:http';
import { crc32 } from 'node:zlib';
import { verify as githubVerify } from '@octokit/webhooks-methods';
import Stripe from 'stripe';
import { Webhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { Paddle } from '@paddle/paddle-node-sdk';
import { WorkOS } from '@workos-inc/node';
import { WebhooksHelper } from 'square';
import { InteractionResponseType, InteractionType, verifyKey } from 'discord-interactions';
import { validateSignature as lineValidate } from '@line/bot-sdk';
import { Signature as HubSpotSignature } from '@hubspot/api-client';
import { LinearWebhookClient } from '@linear/sdk/webhooks';
import sendgridEventWebhook from '@sendgrid/eventwebhook';
import twilio from 'twilio';
import SnsValidator from 'sns-validator';
import { OAuth2Client } from 'google-auth-library';
import Mux from '@mux/mux-node';
import coinbaseCommerce from 'coinbase-commerce-node';
import { Configuration, PlaidApi } from 'plaid';
import jwt from 'jsonwebtoken';
import { verifyRequest as contentfulVerifyRequest } from '@contentful/node-apps-toolkit';

const [provider, secret, file] = process.argv.slice(2);
/** SNS's host, pinned: sns.<region>.amazonaws.com in production, HOOKDRILL_SNS_HOST in hookdrill's test mode. */
const snsHostPattern = process.env.HOOKDRILL_SNS_HOST
  ? new RegExp(`^${process.env.HOOKDRILL_SNS_HOST.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`)
  : /^sns\.[a-zA-Z0-9-]{3,}\.amazonaws\.com(\.cn)?$/;
const snsValidator = new SnsValidator(snsHostPattern);
/** PayPal's certificates by URL, each fetched once. */
const paypalCerts = {};
const stripe = new Stripe('sk_test_hookdrill');
/** Plaid's API client, its basePath at hookdrill's key server (test mode) instead of https://production.plaid.com. */
let plaidApi;
const plaidClient = () =>
  (plaidApi ??= new PlaidApi(
    new Configuration({
      basePath: process.env.PLAID_BASE_PATH || `http://127.0.0.1:${process.env.HOOKDRILL_JWKS_PORT || 9477}`,
      baseOptions: { headers: { 'PLAID-CLIENT-ID': 'hookdrill-client', 'PLAID-SECRET': 'hookdrill-secret' } },
    }),
  ));
const paddle = new Paddle('pdl_sdbx_apikey_hookdrill');
const workos = new WorkOS('sk_test_hookdrill');
// Pub/Sub: Google's keys fetched from hookdrill's local stand-in for www.googleapis.com (test mode).
const google = new OAuth2Client({
  endpoints: {
    oauth2FederatedSignonPemCertsUrl: `http://127.0.0.1:${process.env.HOOKDRILL_JWKS_PORT || 9477}/oauth2/v1/certs`,
  },
});
let held;
try {
  held = new Set(readFileSync(file, 'utf8').split('\n').filter(Boolean));
} catch {
  held = new Set();
}

function equal(a, b) {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The event, as the library hands it over; throws what the library throws. */
async function verified(req, raw) {
  const h = (name) => req.headers[name] ?? '';
  switch (provider) {
    case 'stripe': {
      const event = stripe.webhooks.constructEvent(raw, h('stripe-signature'), secret);
      return { id: event.id };
    }
    case 'github': {
      if (!(await githubVerify(secret, raw.toString('utf8'), h('x-hub-signature-256')))) throw new Error('signature mismatch');
      return { id: h('x-github-delivery') };
    }
    case 'standard': {
      new Webhook(secret).verify(raw.toString('utf8'), {
        'webhook-id': h('webhook-id'),
        'webhook-timestamp': h('webhook-timestamp'),
        'webhook-signature': h('webhook-signature'),
      });
      return { id: h('webhook-id') };
    }
    case 'svix': {
      // As Svix's docs show it: the request's headers handed over whole (svix-* or webhook-*).
      new SvixWebhook(secret).verify(raw.toString('utf8'), req.headers);
      return { id: h('svix-id') || h('webhook-id') };
    }
    case 'slack': {
      const ts = Number(h('x-slack-request-timestamp'));
      if (Number.isNaN(ts)) throw new Error('bad timestamp');
      if (ts < Math.floor(Date.now() / 1000) - 300) throw new Error('stale');
      const [version, hash] = h('x-slack-signature').split('=');
      if (version !== 'v0') throw new Error('unknown signature version');
      const ours = createHmac('sha256', secret).update(`v0:${ts}:${raw.toString()}`).digest('hex');
      if (!equal(hash ?? '', ours)) throw new Error('signature mismatch');
      // Slash commands and interactivity arrive form-encoded (bolt parses them by content type).
      if (String(h('content-type')).startsWith('application/x-www-form-urlencoded')) {
        const form = new URLSearchParams(raw.toString());
        const payload = form.has('payload') ? JSON.parse(form.get('payload')) : undefined;
        // Keyed as the docs allow: the trigger_id, else the payload itself.
        const text = form.get('payload') ?? raw.toString();
        // Answered as bolt's ack() answers: an empty 200 (a body would be posted as a message).
        return { id: payload?.trigger_id ?? form.get('trigger_id') ?? createHash('sha256').update(text).digest('hex'), ack: true };
      }
      const body = JSON.parse(raw.toString());
      return { id: body.event_id, challenge: body.type === 'url_verification' ? body.challenge : undefined };
    }
    case 'shopify': {
      const ours = createHmac('sha256', secret).update(raw).digest('base64');
      if (!equal(h('x-shopify-hmac-sha256'), ours)) throw new Error('signature mismatch');
      return { id: h('x-shopify-webhook-id') };
    }
    case 'paddle': {
      const event = await paddle.webhooks.unmarshal(raw.toString('utf8'), secret, h('paddle-signature'));
      return { id: event.eventId };
    }
    case 'workos': {
      // express.json()'s parse, then the SDK: it signs JSON.stringify of what it is given.
      const payload = JSON.parse(raw.toString('utf8'));
      await workos.webhooks.constructEvent({ payload, sigHeader: h('workos-signature'), secret });
      return { id: payload.id };
    }
    case 'square': {
      const ok = await WebhooksHelper.verifySignature({
        requestBody: raw.toString('utf8'),
        signatureHeader: h('x-square-hmacsha256-signature'),
        signatureKey: secret,
        notificationUrl: process.env.PUBLIC_URL || `http://${req.headers.host}${req.url}`,
      });
      if (!ok) throw new Error('signature mismatch');
      // Authentic but not JSON: kept (by its hash) for a worker to judge, as Square's helper does not parse.
      try {
        return { id: JSON.parse(raw.toString('utf8')).event_id };
      } catch {
        return { id: createHash('sha256').update(raw).digest('hex') };
      }
    }
    case 'discord': {
      const ok = await verifyKey(raw, h('x-signature-ed25519'), h('x-signature-timestamp'), secret);
      if (!ok) throw Object.assign(new Error('Bad request signature'), { status: 401 });
      const interaction = JSON.parse(raw.toString('utf8'));
      if (interaction.type === InteractionType.PING) return { pong: true };
      return { id: interaction.id, answer: { type: InteractionResponseType.DEFERRED_CHANNEL_MESSAGE_WITH_SOURCE } };
    }
    case 'line': {
      if (!lineValidate(raw, secret, h('x-line-signature'))) throw Object.assign(new Error('signature validation failed'), { status: 401 });
      const { events } = JSON.parse(raw.toString('utf8'));
      // LINE's "Verify" button posts no events: answered 200, nothing stored.
      if (events.length === 0) return { pong: true, answer: {} };
      // Each event of the body under its own id.
      return { ids: events.map((e) => e.webhookEventId) };
    }
    case 'hubspot': {
      // HUBSPOT_SIGNATURE=default: Signature.isValid given no version, so its default, v1 (the
      // SHA-256 of the client secret + the body, in X-HubSpot-Signature; lib/src/utils/signature.js).
      const ok =
        process.env.HUBSPOT_SIGNATURE === 'default'
          ? HubSpotSignature.isValid({ signature: h('x-hubspot-signature'), clientSecret: secret, requestBody: raw.toString('utf8') })
          : HubSpotSignature.isValid({
              signatureVersion: 'v3',
              signature: h('x-hubspot-signature-v3'),
              clientSecret: secret,
              requestBody: raw.toString('utf8'),
              method: req.method,
              // Decoded as HubSpot's v3 docs say before it is hashed (the SDK hashes what it is given).
              url: (process.env.PUBLIC_URL || `http://${req.headers.host}${req.url}`).replace(
                /%(3A|2F|3F|40|21|24|27|28|29|2A|2C|3B)/gi,
                (_m, hex) => String.fromCharCode(Number.parseInt(hex, 16)),
              ),
              timestamp: Number(h('x-hubspot-request-timestamp')),
            });
      if (!ok) throw new Error('signature mismatch');
      // Authentic but not JSON: kept by its hash, as HubSpot's helper does not parse.
      try {
        return { ids: JSON.parse(raw.toString('utf8')).map((e) => String(e.eventId)) };
      } catch {
        return { id: createHash('sha256').update(raw).digest('hex') };
      }
    }
    case 'zoom': {
      const payload = JSON.parse(raw.toString('utf8'));
      const message = `v0:${h('x-zm-request-timestamp')}:${JSON.stringify(payload)}`;
      if (`v0=${createHmac('sha256', secret).update(message).digest('hex')}` !== h('x-zm-signature'))
        throw new Error('Failed to verify event originated from Zoom.');
      if (payload.event === 'endpoint.url_validation') {
        const { plainToken } = payload.payload;
        return { pong: true, answer: { plainToken, encryptedToken: createHmac('sha256', secret).update(plainToken).digest('hex') } };
      }
      // Keyed on the event's event_ts, the one id known to stay the same on every retry.
      return { id: payload.event_ts };
    }
    case 'linear': {
      new LinearWebhookClient(secret).verify(raw, h('linear-signature'));
      return { id: h('linear-delivery') };
    }
    case 'sendgrid': {
      const ew = new sendgridEventWebhook.EventWebhook();
      const ok = ew.verifySignature(
        ew.convertPublicKeyToECDSA(secret),
        raw,
        h('x-twilio-email-event-webhook-signature'),
        h('x-twilio-email-event-webhook-timestamp'),
      );
      if (!ok) throw Object.assign(new Error('signature mismatch'), { status: 403 });
      // Authentic but not JSON: kept by its hash (the SDK does not parse).
      try {
        return { ids: JSON.parse(raw.toString('utf8')).map((e) => e.sg_event_id) };
      } catch {
        return { id: createHash('sha256').update(raw).digest('hex') };
      }
    }
    case 'gitlab': {
      // GitLab publishes no library: its documented rule (docs.gitlab.com, webhooks, "Secret
      // token"), X-Gitlab-Token equal to the hook's token; keyed on Idempotency-Key, the same on
      // every resend of an event (GitLab 17.4+).
      if (!equal(secret, h('x-gitlab-token'))) throw Object.assign(new Error('invalid X-Gitlab-Token'), { status: 401 });
      return { id: h('idempotency-key') };
    }
    case 'postmark': {
      // Postmark publishes no library: its documented rule (postmarkapp.com, webhooks overview,
      // "Basic HTTP authentication"), the credentials of the webhook's URL sent as RFC 7617 Basic.
      // Postmark sends no delivery id and re-posts a record unchanged: kept by its body's hash.
      const m = /^Basic\s+(\S+)$/i.exec((h('authorization') ?? '').trim());
      if (!m || !equal(secret, Buffer.from(m[1], 'base64').toString('utf8')))
        throw Object.assign(new Error('invalid Basic credentials'), { status: 401 });
      return { id: createHash('sha256').update(raw).digest('hex') };
    }
    case 'intercom': {
      // Intercom publishes no library: its documented rule (developers.intercom.com, webhook models,
      // "Signed notifications"), X-Hub-Signature "sha1=" and the hex HMAC-SHA1 of the raw body with
      // the app's client secret; keyed on the notification's id (a ping's is null: its body's hash).
      const expected = `sha1=${createHmac('sha1', secret).update(raw).digest('hex')}`;
      if (!equal(expected, h('x-hub-signature'))) throw Object.assign(new Error('invalid X-Hub-Signature'), { status: 401 });
      // Authentic but not JSON: kept (by its hash) for a worker to judge, as the rule reads no body.
      let id;
      try {
        id = JSON.parse(raw.toString('utf8')).id;
      } catch {}
      return { id: id ?? createHash('sha256').update(raw).digest('hex') };
    }
    case 'twitch': {
      // Twitch publishes no library: its docs' algorithm (dev.twitch.tv/docs/eventsub/
      // handling-webhook-events, "Verifying the event message" and "Guarding against replay attacks").
      const id = h('twitch-eventsub-message-id');
      const ts = h('twitch-eventsub-message-timestamp');
      const expected = `sha256=${createHmac('sha256', secret)
        .update(id + ts)
        .update(raw)
        .digest('hex')}`;
      if (!equal(expected, h('twitch-eventsub-message-signature'))) throw Object.assign(new Error('signature mismatch'), { status: 403 });
      if (!(Date.now() - Date.parse(ts) <= 10 * 60_000)) throw Object.assign(new Error('message too old'), { status: 403 });
      if (h('twitch-eventsub-message-type') === 'webhook_callback_verification')
        return { text: JSON.parse(raw.toString('utf8')).challenge };
      return { id };
    }
    case 'mailgun': {
      // Mailgun publishes no library (mailgun.js has no verifier): its docs' Node snippet ("Securing
      // Webhooks"), the body's signature.signature equal to the hex HMAC-SHA256 of
      // timestamp.concat(token); no window. Refused 406, the answer Mailgun does not retry; keyed on
      // event-data.id.
      const event = JSON.parse(raw.toString('utf8'));
      const { timestamp = '', token = '', signature = '' } = event?.signature ?? {};
      const expected = createHmac('sha256', secret)
        .update(String(timestamp).concat(String(token)))
        .digest('hex');
      if (!equal(expected, String(signature))) throw Object.assign(new Error('invalid signature'), { status: 406 });
      return { id: event['event-data']?.id };
    }
    case 'contentful': {
      // @contentful/node-apps-toolkit's verifyRequest, as Contentful's request-verification docs
      // show a receiver: the method, the path the sender posted to (PUBLIC_URL's behind a proxy),
      // the listed headers, the raw body; its default 30 s time to live. Keyed on
      // X-Contentful-Idempotency-Key, the same on every attempt of an event.
      const path = process.env.PUBLIC_URL ? process.env.PUBLIC_URL.replace(/^https?:\/\/[^/]+/, '') || '/' : req.url;
      const strings = Object.fromEntries(Object.entries(req.headers).filter(([, v]) => typeof v === 'string'));
      let ok = false;
      try {
        ok = contentfulVerifyRequest(secret, { method: req.method, path, headers: strings, body: raw.toString('utf8') });
      } catch {}
      if (!ok) throw Object.assign(new Error('verifyRequest refused the request'), { status: 403 });
      return { id: h('x-contentful-idempotency-key') };
    }
    case 'twilio': {
      const query = req.url.includes('?') ? req.url.slice(req.url.indexOf('?')) : '';
      const url = process.env.PUBLIC_URL ? `${process.env.PUBLIC_URL}${query}` : `http://${req.headers.host}${req.url}`;
      if (url.includes('bodySHA256')) {
        // A JSON body (Event Streams' CloudEvents): validateRequestWithBody, as validateIncomingRequest
        // picks it when the URL carries bodySHA256 — the URL's signature, then the raw body's hash.
        if (!twilio.validateRequestWithBody(secret, h('x-twilio-signature'), url, raw.toString('utf8')))
          throw Object.assign(new Error('Twilio Request Validation Failed.'), { status: 403 });
        // Event Streams: dedupe on each CloudEvent's id (twilio.com/docs/events/event-delivery-and-duplication).
        return { ids: JSON.parse(raw.toString('utf8')).map((e) => e.id) };
      }
      const params = Object.fromEntries(new URLSearchParams(raw.toString('utf8')));
      if (!twilio.validateRequest(secret, h('x-twilio-signature'), url, params))
        throw Object.assign(new Error('Twilio Request Validation Failed.'), { status: 403 });
      const incoming = params.SmsStatus === 'received' || params.CallStatus === 'ringing';
      return { id: h('i-twilio-idempotency-token'), twiml: incoming };
    }
    case 'sns': {
      // sns-validator, as AWS's docs show a Node receiver: the certificate fetched from
      // SigningCertURL only on the pinned host — in hookdrill's test mode the one HOOKDRILL_SNS_HOST
      // names, trusted through NODE_EXTRA_CA_CERTS — then the signature. A SubscriptionConfirmation
      // is confirmed by a GET of its SubscribeURL (on the same host) and stored nowhere; every other
      // message is keyed on its MessageId, the same on every retry.
      const message = await new Promise((resolve, reject) =>
        snsValidator.validate(raw.toString('utf8'), (err, m) => (err ? reject(err) : resolve(m))),
      );
      if (message.Type === 'SubscriptionConfirmation') {
        if (!snsHostPattern.test(new URL(message.SubscribeURL).host)) throw new Error('SubscribeURL is not on the SNS host');
        const confirmed = await fetch(message.SubscribeURL);
        if (!confirmed.ok) throw Object.assign(new Error(`SubscribeURL answered ${confirmed.status}`), { status: 500 });
        return { ids: [], ack: true };
      }
      return { id: message.MessageId };
    }
    case 'pubsub': {
      // As the Pub/Sub docs' sample does: the Bearer token handed to verifyIdToken with the push
      // endpoint's URL as the audience (PUBLIC_URL, else the URL the request came to); keyed on the
      // message's id, the same on every redelivery.
      const [scheme, idToken] = h('authorization').split(' ');
      if (scheme?.toLowerCase() !== 'bearer' || !idToken) throw Object.assign(new Error('no Bearer token'), { status: 401 });
      try {
        await google.verifyIdToken({ idToken, audience: process.env.PUBLIC_URL || `http://${req.headers.host}${req.url}` });
      } catch (err) {
        throw Object.assign(err, { status: 401 });
      }
      // Authentic but not JSON: kept (by its hash) for a worker to judge, as verifyIdToken reads no body.
      try {
        return { id: JSON.parse(raw.toString('utf8')).message.messageId };
      } catch {
        return { id: createHash('sha256').update(raw).digest('hex') };
      }
    }
    case 'mux': {
      // As Mux's docs show it: unwrap verifies Mux-Signature (t=…,v1=…, 300 s either way) over the
      // raw body, then parses it; keyed on the event's id.
      const mux = new Mux({ tokenId: 'hookdrill', tokenSecret: 'hookdrill', webhookSecret: secret });
      const event = await mux.webhooks.unwrap(raw.toString('utf8'), req.headers, secret);
      return { id: event.id };
    }
    case 'coinbase': {
      // coinbase-commerce-node's Webhook.verifyEventBody: X-CC-Webhook-Signature over the raw body,
      // then the body's event; keyed on event.id.
      const event = coinbaseCommerce.Webhook.verifyEventBody(raw.toString('utf8'), h('x-cc-webhook-signature'), secret);
      return { id: event.id };
    }
    case 'plaid': {
      // Plaid's docs, step by step: the header decoded unverified, alg ES256 or refused; the key its
      // kid names from /webhook_verification_key/get (the SDK, its basePath at hookdrill's key
      // server); the JWT verified with it, at most 5 minutes old; request_body_sha256 compared with
      // the body's SHA-256 in constant time. No delivery id: keyed on the body's hash.
      const token = h('plaid-verification');
      const decoded = jwt.decode(token ?? '', { complete: true });
      if (decoded?.header.alg !== 'ES256') throw Object.assign(new Error('not an ES256 JWT'), { status: 401 });
      let claims;
      try {
        const { data } = await plaidClient().webhookVerificationKeyGet({ key_id: decoded.header.kid });
        const key = createPublicKey({ key: data.key, format: 'jwk' });
        claims = jwt.verify(token, key, { algorithms: ['ES256'], maxAge: '5 min' });
      } catch (err) {
        throw Object.assign(new Error(err?.message ?? String(err)), { status: 401 });
      }
      const hash = createHash('sha256').update(raw).digest('hex');
      const said = Buffer.from(String(claims.request_body_sha256 ?? ''));
      if (said.length !== hash.length || !timingSafeEqual(said, Buffer.from(hash)))
        throw Object.assign(new Error('request_body_sha256 is not the body'), { status: 401 });
      return { id: hash };
    }
    case 'paypal': {
      // developer.paypal.com/api/rest/webhooks/rest/, "Verify the signature" offline: the
      // certificate from PAYPAL-CERT-URL, only https on PayPal's host (api.paypal.com; in hookdrill's
      // test mode HOOKDRILL_CERT_HOST), then SHA256withRSA over
      // <transmission id>|<transmission time>|<webhook id>|<CRC-32 of the raw body, decimal unsigned>.
      // Keyed on the event's id, the same on every resend (the transmission id is new each time).
      const certUrl = new URL(h('paypal-cert-url') || 'about:blank');
      if (certUrl.protocol !== 'https:' || certUrl.host !== (process.env.HOOKDRILL_CERT_HOST || '127.0.0.1:9444') || certUrl.username)
        throw Object.assign(new Error("PAYPAL-CERT-URL is not on PayPal's host"), { status: 401 });
      if ((h('paypal-auth-algo') || 'SHA256withRSA') !== 'SHA256withRSA') throw new Error('unknown PAYPAL-AUTH-ALGO');
      paypalCerts[certUrl.href] ??= await fetch(certUrl).then((r) =>
        r.ok ? r.text() : Promise.reject(new Error(`certificate: ${r.status}`)),
      );
      const signed = `${h('paypal-transmission-id')}|${h('paypal-transmission-time')}|${secret}|${crc32(raw) >>> 0}`;
      if (!createVerify('RSA-SHA256').update(signed, 'utf8').verify(paypalCerts[certUrl.href], h('paypal-transmission-sig'), 'base64'))
        throw Object.assign(new Error('PAYPAL-TRANSMISSION-SIG does not verify'), { status: 401 });
      try {
        return { id: JSON.parse(raw.toString('utf8')).id, ack: true };
      } catch {
        return { id: createHash('sha256').update(raw).digest('hex'), ack: true };
      }
    }
    case 'graph': {
      // learn.microsoft.com/graph/change-notifications-delivery-webhooks: the validation first (an
      // empty POST, nothing to check), then "Validate the clientState property" of each notification.
      const token = new URL(req.url ?? '/', 'http://receiver').searchParams.get('validationToken');
      if (token) return { text: token };
      const { value } = JSON.parse(raw.toString('utf8'));
      if (!Array.isArray(value)) throw new Error('not a notification collection');
      const valid = value.filter((n) => typeof n?.clientState === 'string' && equal(n.clientState, secret));
      return { ids: valid.map((n) => n.id ?? `sha256:${createHash('sha256').update(JSON.stringify(n)).digest('hex')}`), accepted: true };
    }
    default:
      throw new Error(`unknown provider ${provider}`);
  }
}

function store(id) {
  if (held.has(id)) return;
  const fd = openSync(file, 'a');
  try {
    writeSync(fd, `${id}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  held.add(id);
}

const LIMIT = 32 * 1024 * 1024; // above the largest event any provider sends (GitHub: 25 MB)

createServer(async (req, res) => {
  if (Number(req.headers['content-length'] ?? 0) > LIMIT) {
    // Read and drop the rest first: a sender that writes its whole body before it reads the
    // answer would otherwise see a reset instead of the 413.
    req.resume();
    req.on('end', () => res.writeHead(413, { connection: 'close' }).end());
    return;
  }
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const raw = Buffer.concat(chunks);
  let event;
  try {
    event = await verified(req, raw);
  } catch (err) {
    res.writeHead(err.status ?? 400, { 'content-type': 'text/plain' }).end(`Webhook Error: ${err.message}`);
    return;
  }
  if (event.pong) {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(event.answer ?? { type: InteractionResponseType.PONG }));
    return;
  }
  if (event.text !== undefined) {
    // As the docs' sample's res.send does: its length set (writeHead alone would answer it chunked).
    res.writeHead(200, { 'content-type': 'text/plain', 'content-length': Buffer.byteLength(event.text) }).end(event.text);
    return;
  }
  if (event.challenge !== undefined) {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ challenge: event.challenge }));
    return;
  }
  for (const id of event.ids ?? [event.id]) store(String(id));
  if (event.twiml) {
    res.writeHead(200, { 'content-type': 'text/xml' }).end(new twilio.twiml.MessagingResponse().toString());
    return;
  }
  if (event.ack) {
    res.writeHead(200).end();
    return;
  }
  if (event.accepted) {
    res.writeHead(202).end();
    return;
  }
  res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(event.answer ?? { received: true }));
}).listen(Number(process.env.PORT), '127.0.0.1');
