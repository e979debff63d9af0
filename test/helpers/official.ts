import { verify as githubVerify } from '@octokit/webhooks-methods';
import Stripe from 'stripe';
import { Webhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { Paddle } from '@paddle/paddle-node-sdk';
import { WorkOS } from '@workos-inc/node';
import { WebhooksHelper } from 'square';
import { verifyKey } from 'discord-interactions';
import { validateSignature as lineValidate } from '@line/bot-sdk';
import { Signature as HubSpotSignature } from '@hubspot/api-client';
import { LinearWebhookClient } from '@linear/sdk/webhooks';
import { EventWebhook } from '@sendgrid/eventwebhook';
import { OAuth2Client } from 'google-auth-library';
import { createHash, createHmac, createPrivateKey, createPublicKey, generateKeyPairSync, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { freePort } from './ports.js';

/**
 * Each provider's own verification code, as a receiver would call it. Stripe, GitHub and Standard
 * Webhooks publish libraries; Slack, Shopify and GitLab document the rule, written out here from the
 * docs independently of src/ so a shared mistake cannot hide.
 */
export async function verifyWithOfficialCode(
  provider: string,
  rawBody: Buffer,
  headers: IncomingHttpHeaders,
  secret: string,
  /** The URL the request was sent to: URL-bound schemes (Square) verify over it. */
  url?: string,
): Promise<void> {
  const h = (name: string) => {
    const v = headers[name.toLowerCase()];
    return Array.isArray(v) ? v[0] : v;
  };
  switch (provider) {
    case 'stripe': {
      const stripe = new Stripe('sk_test_hookdrill');
      stripe.webhooks.constructEvent(rawBody, h('stripe-signature') ?? '', secret);
      return;
    }
    case 'github': {
      const ok = await githubVerify(secret, rawBody.toString('utf8'), h('x-hub-signature-256') ?? '');
      if (!ok) throw new Error('@octokit/webhooks-methods rejected the signature');
      return;
    }
    case 'standard': {
      new Webhook(secret).verify(rawBody.toString('utf8'), {
        'webhook-id': h('webhook-id') ?? '',
        'webhook-timestamp': h('webhook-timestamp') ?? '',
        'webhook-signature': h('webhook-signature') ?? '',
      });
      return;
    }
    case 'svix': {
      // Svix's library reads svix-* (else webhook-*) from the request's headers as they came.
      new SvixWebhook(secret).verify(rawBody.toString('utf8'), headers as Record<string, string>);
      return;
    }
    case 'slack': {
      const ts = h('x-slack-request-timestamp') ?? '';
      if (Math.abs(Date.now() / 1000 - Number(ts)) > 300) throw new Error('slack: stale timestamp');
      const expected = `v0=${createHmac('sha256', secret)
        .update(`v0:${ts}:${rawBody.toString('utf8')}`)
        .digest('hex')}`;
      if (!equal(expected, h('x-slack-signature') ?? '')) throw new Error('slack: signature mismatch');
      return;
    }
    case 'shopify': {
      const expected = createHmac('sha256', secret).update(rawBody).digest('base64');
      // An Events delivery's shopify-hmac-sha256 first, as @shopify/shopify-api's validate reads it.
      if (!equal(expected, h('shopify-hmac-sha256') ?? h('x-shopify-hmac-sha256') ?? '')) throw new Error('shopify: signature mismatch');
      return;
    }
    case 'paddle': {
      // As Paddle's SDK README shows it: the raw body as text, the secret key, the header.
      await new Paddle('pdl_sdbx_apikey_hookdrill').webhooks.unmarshal(rawBody.toString('utf8'), secret, h('paddle-signature') ?? '');
      return;
    }
    case 'workos': {
      // As WorkOS's docs show it: the body as express.json() parsed it, the header, the secret.
      await new WorkOS('sk_test_hookdrill').webhooks.constructEvent({
        payload: JSON.parse(rawBody.toString('utf8')),
        sigHeader: h('workos-signature') ?? '',
        secret,
      });
      return;
    }
    case 'square': {
      // As Square's docs show it: the raw body as text, the header, the signature key, the notification URL.
      const ok = await WebhooksHelper.verifySignature({
        requestBody: rawBody.toString('utf8'),
        signatureHeader: h('x-square-hmacsha256-signature') ?? '',
        signatureKey: secret,
        notificationUrl: url ?? '',
      });
      if (!ok) throw new Error('square: signature mismatch');
      return;
    }
    case 'discord': {
      // As Discord's docs show it: the raw body, the two headers, the application's public key.
      const ok = await verifyKey(rawBody, h('x-signature-ed25519') ?? '', h('x-signature-timestamp') ?? '', publicKeyOf(secret));
      if (!ok) throw new Error('discord-interactions: verifyKey refused the signature');
      return;
    }
    case 'line': {
      // As LINE's docs show it: the raw body, the channel secret, x-line-signature.
      if (!lineValidate(rawBody, secret, h('x-line-signature') ?? '')) throw new Error('line: validateSignature refused the signature');
      return;
    }
    case 'hubspot': {
      // As HubSpot's docs show it: v3, the method, the URL posted to, the raw body, the timestamp.
      const ok = HubSpotSignature.isValid({
        signatureVersion: 'v3',
        signature: h('x-hubspot-signature-v3') ?? '',
        clientSecret: secret,
        requestBody: rawBody.toString('utf8'),
        method: 'POST',
        url: url ?? '',
        timestamp: Number(h('x-hubspot-request-timestamp')),
      });
      if (!ok) throw new Error('hubspot: Signature.isValid refused the signature');
      return;
    }
    case 'zoom': {
      // As @zoom/rivet does it (its verifier is internal to its receiver, so written out here, as
      // Zoom's docs' sample writes it): v0:<ts>: + JSON.stringify of the parsed body, no window.
      const ts = h('x-zm-request-timestamp') ?? '';
      const message = `v0:${ts}:${JSON.stringify(JSON.parse(rawBody.toString('utf8')))}`;
      if (`v0=${createHmac('sha256', secret).update(message).digest('hex')}` !== h('x-zm-signature'))
        throw new Error('zoom: signature mismatch');
      return;
    }
    case 'linear': {
      // As Linear's docs show it: the raw body and Linear-Signature; the SDK throws what it refuses.
      new LinearWebhookClient(secret).verify(rawBody, h('linear-signature') ?? '');
      return;
    }
    case 'sendgrid': {
      // As SendGrid's docs show it: the verification key, the raw body, the two headers.
      const ew = new EventWebhook();
      const ok = ew.verifySignature(
        ew.convertPublicKeyToECDSA(publicKeyOf(secret, 'sendgrid')),
        rawBody,
        h('x-twilio-email-event-webhook-signature') ?? '',
        h('x-twilio-email-event-webhook-timestamp') ?? '',
      );
      if (!ok) throw new Error('sendgrid: verifySignature refused the signature');
      return;
    }
    case 'gitlab': {
      // GitLab publishes no verifier: its documented rule is the judge (docs.gitlab.com/user/project/
      // integrations/webhooks/#create-a-webhook, "Secret token": sent in X-Gitlab-Token), the header
      // equal to the hook's secret token, written out here apart from src/.
      if (!equal(secret, h('x-gitlab-token') ?? '')) throw new Error('gitlab: X-Gitlab-Token is not the secret token');
      return;
    }
    case 'pubsub': {
      // google-auth-library's OAuth2Client, as the Pub/Sub docs' samples verify a push: the ID token
      // against Google's certs (kid → PEM) — here the public half of the test key, under the kid
      // RFC 7638 gives it, worked out here apart from src/ — for the push endpoint as audience, by
      // Google's issuers.
      const token = (h('authorization') ?? '').replace(/^Bearer /, '');
      const key = createPublicKey(secret);
      const { e, n } = key.export({ format: 'jwk' });
      const kid = createHash('sha256')
        .update(JSON.stringify({ e, kty: 'RSA', n }))
        .digest('base64url');
      const certs = { [kid]: key.export({ type: 'spki', format: 'pem' }).toString() };
      await new OAuth2Client().verifySignedJwtWithCertsAsync(token, certs, url ?? '', [
        'accounts.google.com',
        'https://accounts.google.com',
      ]);
      return;
    }
    default:
      throw new Error(`no official verifier for ${provider}`);
  }
}

function equal(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A P-256 key made once per test process (a key in the repository would trip secret scanners). */
const P256_TEST_KEY = generateKeyPairSync('ec', { namedCurve: 'prime256v1' })
  .privateKey.export({ type: 'pkcs8', format: 'pem' })
  .toString();

/**
 * The key server's port (delivery/key-server.ts), one per test process: each process signs with its
 * own RSA_TEST_KEY, so two serving on one port would refuse each other. Receivers started from here
 * inherit it, and fetch the keys there.
 */
process.env.HOOKDRILL_JWKS_PORT ||= String(await freePort());

/** An RSA key made once per test process, for a JWT scheme (Pub/Sub push): hookdrill signs with it, a receiver fetches its public half. */
const RSA_TEST_KEY = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();

/** Secrets shaped as each provider issues them. */
export const SECRETS: Record<string, string> = {
  stripe: 'whsec_test_4eC39HqLyjWDarjtT1zdp7dc',
  github: "It's a Secret to Everybody",
  slack: '8f742231b10e8888abcd99yyyzzz85a5',
  standard: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  svix: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
  shopify: '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',
  paddle: 'pdl_ntfset_01hkdrl0example0secret0000000_fakeKeyForHookdrillTests0000',
  workos: 'wh_secret_hookdrill_example_0000',
  square: 'hookdrillSquareSignatureKey0',
  // An Ed25519 private key's seed (RFC 8032's first test vector): hookdrill signs with it, and a
  // receiver holds its public key, d75a9801…511a (publicKeyOf).
  discord: '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60',
  line: '8c570fa6dd201bb328f1c1eac23a96d8',
  hubspot: 'hs-client-secret-3c7e0d2a-9b41-4f6e',
  zoom: 'zm-secret-token-hookdrill-7Qf2',
  linear: 'lin_wh_hookdrill_example_signing_0',
  // A P-256 private key made for these tests (PKCS#8): hookdrill signs with it; a receiver holds its public key.
  sendgrid: P256_TEST_KEY,
  // A GitLab hook's secret token is any text the project owner typed in: sent as it is in X-Gitlab-Token.
  gitlab: 'hookdrill-gitlab-example-token-4Rt8',
  // Pub/Sub push is signed by Google's key: in test mode hookdrill's, this RSA key made for these tests.
  pubsub: RSA_TEST_KEY,
};

/** What a receiver is configured with: for Discord the public key of an Ed25519 seed (RFC 8032, section 7.1), for SendGrid the base64 SPKI of a P-256 key, else the secret itself. */
export function publicKeyOf(secret: string, provider = 'discord'): string {
  if (provider === 'pubsub' && secret.includes('PRIVATE KEY'))
    return createPublicKey(secret).export({ type: 'spki', format: 'pem' }).toString();
  if (provider === 'sendgrid' && secret.includes('PRIVATE KEY'))
    return createPublicKey(secret).export({ type: 'spki', format: 'der' }).toString('base64');
  if (provider !== 'discord' || !/^[0-9a-f]{64}$/.test(secret)) return secret;
  const der = createPublicKey(
    createPrivateKey({
      key: Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), Buffer.from(secret, 'hex')]),
      format: 'der',
      type: 'pkcs8',
    }),
  ).export({ type: 'spki', format: 'der' });
  return der.subarray(12).toString('hex');
}
