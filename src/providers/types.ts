import type { DeliveryContract } from './contract.js';
import type { Handshake } from './handshake.js';
/** What every provider module exports: data (names, a timing profile) plus sign and verify. */

import type { PROVIDER_NAMES } from './names.js';

/** Derived from the one list of names (names.ts), which --help reads without loading any provider. */
export type ProviderName = (typeof PROVIDER_NAMES)[number];

/** Headers as a sender writes them: name → value. */
export type OutgoingHeaders = Record<string, string>;

/** Headers as Node's http module hands them to a receiver: lowercased names. */
export type IncomingHeaders = Record<string, string | string[] | undefined>;

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JsonObject = { [key: string]: JsonValue };

/** A fixture field made new for every event. */
export interface FreshField {
  path: readonly (string | number)[];
  /** The new value; `r` is one random 32-bit number per event, so related fields can agree. */
  make(nowMs: number, r: number): JsonValue;
  /**
   * A moment of the event (when it was created): a retry under --time-scale makes it again as
   * long before as the real schedule would have left it (PreparedEvent.aged).
   */
  clock?: true;
}

export interface SignContext {
  /** The moment of signing, in Unix milliseconds: every attempt signs anew with its own time. */
  nowMs: number;
  /**
   * When the delivery's first attempt was made (Unix ms): the same for every attempt of it, for a
   * provider that says so on each (Square's square-initial-delivery-timestamp). Absent: `nowMs`.
   */
  firstAttemptMs?: number | undefined;
  /** The delivery id the receiver should dedupe on; header-held for GitHub, Standard, Shopify. */
  deliveryId: string;
  /** The provider's event name (header-held for GitHub and Shopify). */
  eventType: string;
  /**
   * What this event's own body says that the provider's headers carry (GitHub: the hook's id and
   * who owns it), from `wireFacts` once per fixture; absent, the provider's defaults are sent.
   */
  facts?: WireFacts | undefined;
  /**
   * The URL the provider was told to post to (URL-bound schemes sign it: Square,
   * HubSpot): the one delivered to, or `--public-url` where the receiver sits behind a proxy.
   */
  url?: string | undefined;
}

/** Facts of one event that its headers carry, found once in its body (see Provider.wireFacts). */
export type WireFacts = Readonly<Record<string, string>>;

export interface VerifyOptions {
  /** The receiver's clock, Unix milliseconds (defaults to now). */
  nowMs?: number;
  /** How far the signed timestamp may be from now, either way (defaults to the provider's 300 s). */
  toleranceSec?: number;
  /**
   * Judge the headers only, and return where the signature would be computed: what a receiver
   * asks before it reads a body (no HMAC over an empty one, on every request).
   */
  headersOnly?: boolean;
  /**
   * The URL the provider posted to, as the receiver knows it (`listen --public-url`, else rebuilt
   * from the request): URL-bound schemes verify over it.
   */
  url?: string;
}

export type SignatureFailure = 'no_secret' | 'missing_header' | 'malformed_header' | 'stale_timestamp' | 'future_timestamp' | 'no_match';

/** Thrown by `verify`: `code` for programs, a message that says exactly what is wrong for people. */
export class SignatureError extends Error {
  override readonly name = 'SignatureError';
  constructor(
    readonly code: SignatureFailure,
    message: string,
  ) {
    super(message);
  }
}

/** Why an attempt failed, in Slack's vocabulary (the only provider that publishes one). */
export type RetryReason = 'http_timeout' | 'too_many_redirects' | 'connection_failed' | 'ssl_error' | 'http_error' | 'unknown_error';

/**
 * How a provider delivers: how long it waits for an answer, when it tries again, and what stops it.
 * Every duration is before `--time-scale` is applied.
 */
export interface TimingProfile {
  name: string;
  /** One line for `--help` and the README: where the numbers come from. */
  summary: string;
  /** True when the provider publishes these numbers; false when hookdrill chose them. */
  published: boolean;
  /** How long one attempt may take, from connect to the last byte of the answer. */
  timeoutMs: number;
  /** Delay before each retry, measured from the end of the failed attempt. Empty: no retries. */
  retryDelaysMs: readonly number[];
  /** Redirects followed per attempt (Slack follows two); 0 means a 3xx is a failed attempt. */
  maxRedirects: number;
  /** Statuses whose `Retry-After` replaces the scheduled delay (Standard Webhooks: 429, 502, 504). */
  retryAfterStatuses: readonly number[];
  /** Statuses that end the delivery at once (Standard Webhooks: 410 Gone). */
  stopStatuses: readonly number[];
  /** A response header that ends the delivery at once (Slack: `X-Slack-No-Retry: 1`). */
  stopHeader?: { name: string; value: string };
}

/**
 * What the provider's own verifier (its official library, or its documented check where it has
 * none) accepts: `check` calibrates its cases to this, so a receiver built on that verifier passes.
 */
export interface VerifierRules {
  /** The code a receiver is judged against, for messages: "stripe's webhooks.constructEvent". */
  official: string;
  /**
   * A timestamp further ahead than the tolerance: `refused` (the official verifier is two-sided),
   * `accepted` (it is one-sided, and so are the provider's docs), or `accepted-documented-refused`
   * (the library is one-sided but the documented rule is two-sided: accepting it is a warning).
   */
  futureTimestamp: 'refused' | 'accepted' | 'accepted-documented-refused';
  /** The official verifier parses the body as JSON, so it refuses a malformed one (stripe, standardwebhooks). */
  parsesJson: boolean;
  /**
   * The official verifier signs the form's parameters as it parses them, not the body's bytes
   * (twilio's validateRequest): the same parameters written another way are the same delivery.
   */
  signsParsedForm?: true;
  /**
   * Where the official code that parses the body is not `official` itself (Discord's verifyKey
   * only verifies; its verifyKeyMiddleware parses): named in messages about parsing.
   */
  parsedBy?: string;
  /**
   * The official verifier signs the body as parsed and written again (WorkOS's constructEvent
   * takes `req.body` and HMACs `JSON.stringify` of it): re-serialising is its documented way, so
   * check does not judge it.
   */
  verifiesParsedJson?: boolean;
  /**
   * The versions of the official library the rules above were read from and run against, where a
   * newer major changed what a receiver on it accepts (`check --list` and the skip reasons name
   * them): a rule is only as current as the version it was checked on.
   */
  officialVersions?: string;
  /** The largest body the provider documents sending, in bytes, where it publishes one (GitHub: 25 MB). */
  maxBodyBytes?: number;
  /**
   * The signature header with an entry of another scheme added, as the provider really sends it
   * (Stripe test mode's `v0=`) or as its spec reserves (Standard Webhooks' `v1a,`): every verifier
   * must ignore it. Undefined where the header holds one signature and nothing else.
   */
  withOtherScheme?(value: string): string;
  /**
   * The signature header with its first signature alone and nothing else beside it (no other
   * scheme's entry, no second secret's): what a receiver that parses only the simplest header accepts.
   * Undefined where the header never holds more than one signature.
   */
  firstSignatureOnly?(value: string): string;
  /** The signature header with every signature in it passed through `edit` (rotation: several). */
  editSignatures(value: string, edit: (signature: string) => string): string;
  /**
   * A legacy signature the provider still sends beside the one verified (GitHub's X-Hub-Signature,
   * HMAC-SHA1). A request that is unsigned or badly signed lacks or breaks it too — a receiver that
   * verifies only it refuses such a request as the provider would want — and a receiver that
   * verifies only it is warned to move, in the provider's own words (`advice`).
   */
  legacySignature?: { header: string; scheme: string; advice: string };
  /**
   * Where the signature covers named fields, not the bytes (SNS): the offset in a body past which
   * nothing is signed, so check's flipped-byte changes a byte that is. Absent: the whole body is.
   */
  signedUpTo?(rawBody: Buffer): number;
  /**
   * A time the signature covers that the official verifier holds to no window (SNS's Timestamp,
   * a field of the body): named where check says why the timestamp cases do not apply.
   */
  unheldTimestamp?: string;
  /** How to make an event of a type no receiver handles: a body field to set, or the event name (header-held types). */
  unknownType: { path: readonly string[]; value: string | number } | { eventName: string };
}

/**
 * A host a provider's scheme has the receiver fetch from or visit (SNS's SigningCertURL and
 * SubscribeURL), served by send and check for their run (Provider.serve).
 */
export interface ServedHost {
  /** host:port, as the URLs in the bodies write it. */
  host: string;
  /** The visit of a handshake URL carrying `token`, waited for up to `ms`; undefined if none came. */
  visitOf(token: string, ms: number): Promise<{ atMs: number } | undefined>;
  /**
   * The body signed by another key whose certificate is served on another host (an attacker's):
   * a receiver that does not pin the certificate's host fetches it and accepts the forgery.
   */
  forgedElsewhere?(
    rawBody: Buffer,
    /** The headers of the message forged and the secret it is for: a scheme that signs headers (PayPal's) signs the same ones. */
    signed?: { headers: Readonly<Record<string, string>>; secret: string },
  ): Promise<{
    body: Buffer;
    certUrl: string;
    /** Where the signature and the certificate URL travel in headers (PayPal's), those headers. */
    headers?: Readonly<Record<string, string>>;
    close(): Promise<void>;
  }>;
  close(): Promise<void>;
}

/** A change check makes to a token: another claim, another key's kid, or another algorithm (`none`, or HS256 keyed by the public key). */
export interface JwtChange {
  aud?: string;
  iss?: string;
  kid?: string;
  /** Signed `none` (no signature) or HS256 with the public key's PEM as the HMAC key: the algorithm-confusion forgeries. */
  alg?: 'none' | 'HS256';
  /** The body the body-hash claim is computed over, where it is not the body sent. */
  hashedBody?: Buffer;
}

/** What a JWT scheme signs beside the key (Provider.jwt), and how to sign a token that breaks one claim. */
export interface BearerJwt {
  /** The `iss` sent, and every one a verifier accepts; undefined where the token names none (Plaid's). */
  issuer?: string;
  issuers: readonly string[];
  /** A fixed `aud`; undefined: the URL posted to (the provider is urlBound); false: none (Plaid's). */
  audience?: string | false;
  /** The algorithm the right tokens are signed with. */
  algorithm: 'RS256' | 'ES256';
  /** `exp` − `iat`, seconds; or, for a token with no exp (maxAge), the oldest iat a verifier takes. */
  lifetimeSec: number;
  /** The token carries iat and no exp: a verifier refuses one older than lifetimeSec (Plaid's 5 minutes). */
  iatOnly?: true;
  /** The claim carrying the hex SHA-256 of the body (Plaid's request_body_sha256): the token binds the body. */
  bodyHash?: string;
  /** The clock skew the official verifier allows on `iat` and `exp` (google-auth-library: 300 s). */
  leewaySec: number;
  /** The headers of a signing whose token says another audience or issuer: check's forgeries signed by the right key. */
  signWith(rawBody: Buffer, secrets: readonly string[], ctx: SignContext, change: JwtChange): OutgoingHeaders;
  /** The JSON Web Key Set of a private key: what the local key server serves (delivery/key-server.ts). */
  jwks(privateKey: string): { keys: JsonObject[] };
}

export interface Provider {
  name: ProviderName;
  title: string;
  /** The header a receiver reads the signature from (for messages and `check`). */
  signatureHeader: string;
  /**
   * The headers a signing writes that differ from one signing to the next (signature, timestamp):
   * what a re-sign replaces in a stored delivery's headers, keeping the rest as the sender sent them.
   */
  signedHeaders: readonly string[];
  /** Whether the signature covers a timestamp (Stripe, Slack, Standard): stale ones are rejected. */
  timestamped: boolean;
  /** The window verify applies to a signed timestamp when none is given, where it is not 5 minutes (Paddle's SDK: 5 s). */
  toleranceSec?: number;
  /** verify lets a timestamp from the future pass, as the official verifier does (Paddle's window is one-sided). */
  futureAccepted?: true;
  /**
   * The signature covers the URL posted to (Square, HubSpot): sign needs `ctx.url` and
   * verify `opts.url`, and a receiver behind a proxy must verify over its public URL.
   */
  urlBound?: true;
  /**
   * Signed with a private key, verified with the public one (Discord's Ed25519): the secret to
   * send with is a private key — hookdrill's own (providers/keys.ts) where none is given — and a
   * receiver is configured with its public key, which is printed; the private key never is.
   */
  keyPair?: true;
  /** With keyPair: hookdrill's own private key for this provider (providers/keys.ts), made on first use. */
  ownKey?(): string;
  /** With keyPair: the public key a receiver is configured with, as the provider shows it, of a private key. */
  publicKey?(privateKey: string): string;
  /** With keyPair: what the provider calls that public key ("application public key"). */
  publicKeyName?: string;
  /**
   * The signed timestamp is a field of the body, not a header (Linear's webhookTimestamp): a
   * request of another moment is the body aged (PreparedEvent.aged) and signed again.
   */
  clockInBody?: true;
  /**
   * The request carries a shared secret as it is, not a signature (GitLab's X-Gitlab-Token: `token`;
   * `bearer` or `basic` credentials in Authorization): nothing of the request is covered — not the
   * body, not a time — so a body changed in transit under the right token is rightly accepted, a
   * property of the scheme. check skips what only a signature can be held to, and says so.
   */
  tokenOnly?: 'token' | 'bearer' | 'basic' | 'field';
  /**
   * The signature travels in the body, not a header (Mailgun's `signature: {timestamp, token,
   * signature}` beside `event-data`). `sign` writes the fields it signs under `carrier`, as if a
   * header — so every case that takes a signature away, edits it or makes it with another secret
   * works on it by that name — and the request leaves with them written into the body (asSent,
   * providers/body-placed.ts); the carrier itself is never sent.
   */
  bodySignature?: {
    carrier: string;
    /** The body with the carried fields written in; undefined: the signature field taken out. */
    place(rawBody: Buffer, carried: string | undefined): Buffer;
    /** What the signature covers, in words ("signature.timestamp and signature.token, not the rest of the body"). */
    covers: string;
  };
  /**
   * Every attempt of a delivery carries its first attempt's signature, as Mailgun's retries do
   * (the same timestamp and token): a retry's signed time is as old as the delivery, hours for a
   * late one, so no window of minutes may be held to it.
   */
  signedOnce?: { source: string };
  /**
   * The request carries a signed JWT as a bearer token (Google Pub/Sub push's OIDC token): it binds
   * who sent it, for whom and until when — not the body. check holds a receiver to every claim
   * (a token for another audience, an expired one, another issuer must be refused) and skips what
   * only a signature over the body can be held to, as for a token.
   */
  jwt?: BearerJwt;
  /** Whether the sender signs with several secrets at once during rotation (Stripe, Standard). */
  rotation: boolean;
  /**
   * The signature is a field of the body (SNS's Signature): sign() writes it as the header
   * `signatureHeader`, and this puts it into the body just before the bytes go out (send's
   * attempts, check's posts) — so a case that edits, cuts or drops the signature does so to the
   * body's field. Without that header, the field is taken out.
   */
  placeSignature?(rawBody: Buffer, headers: Record<string, string>): { body: Buffer; headers: Record<string, string> };
  /**
   * What a signing adds to the URL posted to, which the signature covers (Twilio's JSON bodies:
   * `bodySHA256=<hex SHA-256 of the body>` in the query). sign() writes it as the header `carrier`
   * (a name no provider sends); just before the request goes out (send's attempts, check's posts)
   * it is taken out of the headers and appended to the URL's query (providers/query-placed.ts).
   * So the URL is fixed when the body is signed: a case that changes the body after signing leaves
   * the URL and its hash as signed, as a body changed in transit would.
   */
  queryPlaced?: {
    carrier: string;
    /** The query parameter the signing adds (Twilio's `bodySHA256`), for messages. */
    param: string;
    /** The official code that checks the body against it (twilio's validateRequestWithBody), for messages. */
    verifiedBy?: string;
  };
  /** A host the scheme needs while deliveries go out (SNS's certificate and SubscribeURL): started by send and check. */
  serve?(o?: { share?: boolean }): Promise<ServedHost>;
  /**
   * With serve: where the served host is and the file a receiver trusts it through (SNS's
   * certificate: NODE_EXTRA_CA_CERTS for Node, SSL_CERT_FILE for Python), for `hookdrill keys`.
   */
  servedAt?(): { host: string; hostVariable: string; trustFile: string };
  /**
   * A handshake the receiver completes by visiting a URL (SNS's SubscriptionConfirmation: a GET of
   * SubscribeURL): what to wait for on the served host. Undefined for an ordinary delivery.
   */
  handshakeVisit?(rawBody: Buffer): { token: string; url: string; what: string } | undefined;
  /**
   * With handshakeVisit: the visit made, as a right receiver makes it once the request is verified
   * (SNS: a GET of SubscribeURL, on the pinned host only) — what `listen` does before answering.
   * Rejects when the URL is not on the provider's host or does not answer 2xx.
   */
  completeHandshake?(rawBody: Buffer): Promise<void>;
  /** How it delivers, each fact with its source: batches, re-sends, redelivery markers, endpoint checks, the answer it needs. */
  contract: DeliveryContract;
  profiles: Readonly<Record<string, TimingProfile>>;
  defaultProfile: string;
  verifier: VerifierRules;

  /**
   * Throws a UsageError when a secret cannot be one of this provider's (e.g. not `whsec_` base64);
   * with keyPair, when it is no private key. Called through key-material.ts's checkKeyMaterial,
   * which refuses a blank one for every provider first.
   */
  checkSecret(secret: string): void;
  /** With keyPair: throws a UsageError when a key a receiver verifies with is no public key of the provider's kind. */
  checkVerifyingKey?(key: string): void;
  /** The exact headers the provider sends with this body; one signature per secret where rotation exists. */
  sign(rawBody: Buffer, secrets: readonly string[], ctx: SignContext): OutgoingHeaders;
  /**
   * Throws SignatureError unless one of the secrets signed exactly these bytes in time. The headers
   * are judged before the body: every failure but `no_match` must depend on the headers alone
   * (the receiver refuses those before reading a body; test/admission.test.ts holds each to it).
   */
  verify(rawBody: Buffer, headers: IncomingHeaders, secrets: readonly string[], opts?: VerifyOptions): void;
  /** The id a receiver should dedupe on, or undefined when the request carries none. */
  deliveryId(headers: IncomingHeaders, rawBody: Buffer): string | undefined;
  /** The event type of a received request, from its body or headers; undefined when it has none. */
  eventTypeOf(headers: IncomingHeaders, rawBody: Buffer): string | undefined;
  /**
   * A request the provider sends to check an endpoint rather than deliver an event (Slack's
   * url_verification): the JSON to answer it with, or undefined for an ordinary delivery. The
   * receiver answers it after verifying the signature and stores nothing.
   */
  challengeAnswer?(rawBody: Buffer, secrets?: readonly string[]): unknown;
  /**
   * A challenge handshake (providers/handshake.ts): where its value is and how the answer is
   * written — `text`, the value alone as text/plain (Twitch), so JSON around it is refused; `json`
   * (Slack takes either). challengeAnswer gives `{ challenge }` for it.
   */
  handshake?: Handshake;
  /**
   * A check the provider sends *unsigned* (Slack's `ssl_check=1` to a slash command's URL): true
   * when the request is one. The receiver answers it 200 before any verification, reads nothing
   * else from it and stores nothing (what @slack/bolt's HTTPReceiver does).
   */
  unsignedCheck?(rawBody: Buffer, headers: IncomingHeaders): boolean;
  /**
   * Whether a request may be such an unsigned check, from its headers alone: the receiver reads
   * its body before refusing it for a missing signature. Every other request with a signature
   * header that cannot be valid is refused before its body is read.
   */
  mayBeUnsignedCheck?(headers: IncomingHeaders): boolean;
  /**
   * A notice that is not an event (Slack's `app_rate_limited`): a receiver may store it or drop
   * it, so check's other-types does not demand either.
   */
  isNotice?(body: JsonValue): boolean;
  /**
   * The kind of subscription a body is delivered to, where a provider has more than one (Shopify's
   * `events` beside its `webhooks`): an endpoint receives one kind, so check's other-types sends
   * only bodies of the kind its default fixture is.
   */
  subscriptionKind?(body: JsonValue): string;
  /**
   * Where a delivery needs a body back (contract.answer.kind 'body': Discord's interaction
   * response): what is wrong with this answer to this request, or undefined when the provider
   * takes it. check judges every valid delivery's answer with it, and the answer's Content-Type
   * (Twilio refuses TwiML served as anything but XML).
   */
  judgeAnswer?(rawBody: Buffer, answer: string, contentType?: string): string | undefined;
  /**
   * With judgeAnswer: the answer a receiver that stores and works later gives at once (Discord's
   * deferred response; '' for an empty body, Slack's acknowledgment of a command): what listen
   * answers a stored delivery with, never {"ok": true}. Undefined: listen's own answer.
   */
  deferredAnswer?(rawBody: Buffer): unknown;
  /** A secret of this provider's shape that is not `secret`: check's wrong-secret case signs with it. */
  otherSecret(secret: string): string;
  /**
   * Headers a retry adds (Slack's `X-Slack-Retry-Num` / `-Reason`); `retryNum` starts at 1.
   * Undefined for a body the provider does not retry (Slack's commands and interactivity).
   */
  retryHeaders?(retryNum: number, reason: RetryReason, rawBody: Buffer): OutgoingHeaders | undefined;

  /** The body's bytes as the provider writes them (Stripe: pretty-printed, in its key order); compact JSON where absent. */
  serialize?(body: JsonObject): string;
  /**
   * How the provider writes one value inside its JSON, where that differs from JSON.stringify
   * (Slack's `\/`, GitHub's `\u001B`): each event's fresh values are spliced in with it.
   */
  jsonValue?(value: JsonValue): string;
  /**
   * A form-encoded body (Slack's commands and interactivity) as the provider encodes it: its
   * fields in order, an object field (`payload`) as the provider writes its JSON. URLSearchParams
   * with compact JSON where absent.
   */
  encodeForm?(fields: Readonly<Record<string, JsonValue>>): string;
  /**
   * A JSON body as the provider sends it to an endpoint set to form content (GitHub: a hook's
   * content type `form` sends `payload=<the JSON>`, form-encoded). Absent: the provider sends JSON only.
   */
  formPayload?(json: string): string;
  /**
   * The facts of one event its headers carry, read from its body once per fixture (GitHub: the
   * hook id, who owns the hook, and that owner's id). `senders` is who can send the event, as the
   * provider's own description lists them (GitHub's supported-webhook-types), where known.
   */
  wireFacts?(body: JsonObject, senders: readonly string[] | undefined): WireFacts;
  /** Who can own the hook that sends (GitHub's supported-webhook-types), for `send --hook-owner`. */
  hookOwners?: readonly string[];

  /** The fields of this fixture that every send makes new (ids, timestamps): each send is a new event. */
  freshFields(body: JsonObject): FreshField[];
  /** The event type and, where the body holds it, the delivery id of a (freshened) fixture. */
  describe(body: JsonValue, fixtureName: string): { eventType: string; deliveryId?: string };
  /** A new delivery id for providers that carry it in a header. */
  newDeliveryId(): string;
  /**
   * The other ids a delivery carries that a receiver may rightly dedupe on (Shopify: the
   * X-Shopify-Event-Id of the delivery whose X-Shopify-Webhook-Id is `deliveryId`): check and chaos
   * count a delivery held under any of them as held.
   */
  otherIds?(deliveryId: string): readonly string[];
}
