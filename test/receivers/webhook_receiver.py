"""A webhook receiver in Python's standard library, the way a user writes one: right by default,
or wrong in exactly one way (--flaw). hookdrill's verdict tests judge it with `check` and `chaos`
and hold each verdict to what the provider would say.

  python3 webhook_receiver.py serve --provider stripe --secret S --port P --store FILE [--flaw F]
         [--sqlite-sync FULL|NORMAL|OFF] [--http10]
  python3 webhook_receiver.py ids --store FILE      # the delivery ids it holds, one per line
         [--column hash]                            # ... or, wrongly, a hash of each (another column)

--answer-after S holds each stored delivery's 200 for S seconds (work done inline, within the
provider's timeout: slow, not wrong).
--path P serves deliveries only at that path (404 anywhere else, as a router does).
--dump DIR writes each request as raw HTTP the way this receiver verifies it (its flaw applied to
the body, Content-Length set to match), one file per request: what a user captures from their app.

The store is a file of ids (appended and fsynced before the 200; the ids already held are read
back at start, so a duplicate after a restart is still a duplicate), or, when FILE ends in .db,
SQLite in WAL mode with the given synchronous setting (INSERT OR IGNORE, committed before the 200).

Verification follows each provider's documented rule as its official library applies it: Stripe
(stripe-python's one-sided tolerance: only an old timestamp is refused; every v1= entry tried,
other schemes ignored), GitHub (sha256 over the body), Slack (v0 over v0:ts:body, 5 minutes either
way, url_verification answered with its challenge), Standard Webhooks (every "v1," entry, 5
minutes either way), Svix (the same scheme under the svix-* header names Svix sends by default, the
way Svix's docs show a receiver verifying by hand), Shopify (base64 HMAC of the body), Square (base64 HMAC of the notification URL and the body: the
URL from --public-url, else rebuilt from the request, X-Forwarded-Proto and -Host first), Paddle
(ts:body, only a timestamp more than 5 s old refused, as its SDK does), WorkOS (t.body, t in
milliseconds, only a timestamp more than 180 s old refused, as its SDK does), Discord (the Ed25519
signature of timestamp + body checked with the application's public key, --secret, by PyNaCl as
Discord's Python example does; no window on the timestamp, as discord-interactions has none; a bad
signature answered 401 and a PING {"type": 1}), LINE (the base64 HMAC-SHA256 of the body with the
channel secret; each event of a body stored under its own webhookEventId, as SendGrid's under sg_event_id and HubSpot's under eventId), HubSpot (v3: method, URL, body and
timestamp, the URL as Square's; only a timestamp over 5 minutes old refused, as its SDK does), Zoom
(v0= and the hex HMAC of v0:ts:body; endpoint.url_validation answered with the token and its HMAC;
keyed on event_ts, the one id known to stay on a retry), Linear (the hex HMAC of the body, then the body's
webhookTimestamp within a minute either way, as @linear/sdk; keyed on Linear-Delivery), GitLab
(X-Gitlab-Token equal to the secret token, compared in constant time; keyed on Idempotency-Key, else
X-Gitlab-Event-UUID), Intercom (X-Hub-Signature: sha1= the hex HMAC-SHA1 of the body with the client
secret; keyed on the notification id), Postmark (HTTP Basic credentials, RFC 7617, equal to the webhook URL's user:password,
compared as digests; keyed on the SHA-256 of the body, as Postmark sends no delivery id), Mailgun (the body's signature.signature, the hex HMAC-SHA256 of
signature.timestamp + signature.token, as Mailgun's docs check it: no window, the body's other fields
not covered; refused 406, which Mailgun does not retry; keyed on event-data.id), Google Cloud Pub/Sub push (the OIDC token in Authorization: its RS256 signature by the
key its kid names in the JWKS hookdrill serves, iss, exp and aud — the URL, as Square's; keyed on
message.messageId; test/receivers/pubsub_scheme.py), SendGrid (the
ECDSA signature of the timestamp + the body with the verification key, --secret; keyed on the first
event's sg_event_id), Twitch EventSub (test/receivers/twitch_scheme.py: sha256= HMAC of Message-Id +
Message-Timestamp + body, a timestamp over 10 minutes old refused, keyed on Message-Id; the
webhook_callback_verification answered with its raw challenge as text/plain), and acme — a
team's own platform, declared in a project file (test/declared-cli.test.ts): t=…,v1=<hex> over "t.body".
Twilio (twilio_scheme.py: the HMAC-SHA1 of the URL and the form's parameters sorted by name, as
twilio-python's RequestValidator; keyed on I-Twilio-Idempotency-Token; TwiML answered).
The pack's senders (bitbucket, pagerduty, mux, vercel, calendly, typeform, sentry, coinbase, notion):
each as its docs say, in test/receivers/pack_scheme.py.
ringer is a declared one on the same canonical scheme (test/declared-canonical.test.ts): HMAC-SHA256 in hex, Ringer-Signature.
folio is a declared one on its request form, signing as Contentful does, with its header names (contentful_scheme.py;
test/declared-canonical-request.test.ts): the method, the path, the headers X-Contentful-Signed-Headers lists, the body.
contentful is Contentful itself on the same scheme (contentful_scheme.py, one-sided 30 s window as the toolkit's;
keyed on X-Contentful-Idempotency-Key, the same on every attempt; test/verdicts-contentful.test.ts).
graph is Microsoft Graph (graph_scheme.py, beside this file: each notification's clientState
compared, a forged one discarded with the 202, each kept under its own id; the validationToken
echoed; test/verdicts-graph.test.ts).
relay and postbox are two more declared ones that sign nothing (test/declared-token.test.ts): a
Bearer token and Basic credentials in Authorization.
parcel signs in the body (test/declared-body.test.ts): auth.signature, the base64 HMAC-SHA256 of
"auth.timestamp.auth.nonce.data.id".

Flaws, one at a time (or several, comma-separated):
  strict-stripe-header  parses Stripe-Signature with ^t=\\d+,v1=[0-9a-f]{64}$: refuses v0= and a second v1=
  first-v1-only         compares only the first v1= entry (breaks while a secret is rolled)
  limit-64k             413 for bodies over 64 KiB
  refuse-unknown-types  400 to every event type but the one it handles
  no-challenge          answers Slack's url_verification, Twitch's challenge (and Discord's PING) with 200 "ok", not the challenge (PONG)
  ignore-retries        answers a request carrying X-Slack-Retry-Num 200 without storing it
  memory-dedupe         remembers ids in memory only: after a restart a duplicate is stored again
  accepts-stale         no timestamp check at all
  future-accepted       acme: refuses an old timestamp only, any in the future passes (a one-sided window)
  parse-form-first      verifies a form-encoded body as its parsed fields serialised again, not the raw bytes
  duplicate-500         answers a delivery it already holds 500, with its database's unique-key error
  store-down            its database is down: verifies every delivery, keeps none, answers 503
  join-lines            reads the body line by line and joins the lines without their line ends before
                        verifying (stripe-java#1151): Stripe's pretty-printed bodies no longer match
  json-only             answers 400 to a body that is not JSON (a GitHub hook set to form sends payload=<JSON>)
  reserialize-json      verifies the body parsed and serialised again (json.dumps, compact, ensure_ascii off),
                        not the raw bytes: GitHub's \\u001B comes back \\u001b, Slack's \\/ comes back /
  latin1-text           decodes the body as Latin-1 and encodes it as UTF-8 before verifying (a charset default
                        gone wrong): every non-ASCII character becomes two or more others
  crlf-lines            writes the body's line ends as CRLF before verifying (a text-mode stream on Windows)
  first-event-only      LINE, SendGrid, HubSpot: stores the first event of a batch and drops the rest
  refuse-empty          LINE: answers 400 to a body with no events (the console's Verify)
  challenge-unverified  Zoom, Slack, Twitch: answers the endpoint check before verifying its signature (Zoom's answer an HMAC oracle)
  no-url-decode         HubSpot: hashes the URL as it arrived, not with %3A %2F %3F … decoded as HubSpot's v3 docs say
  answer-ok             Discord: answers an interaction 200 "ok", not an interaction response
  refuse-old-events     refuses an event whose own time (created, occurred_at) is over 5 minutes old: every late retry
  drops-redeliveries    LINE, HubSpot: answers a redelivered event (isRedelivery, attemptNumber > 0) 200 without storing it
  dedupe-by-body-hash   keys each delivery on a hash of its body, not its id (HubSpot's retries differ in attemptNumber)
  no-dedupe             stores every request, even one it holds (right only where the provider never re-sends: Discord)
  url-from-host         Square, HubSpot: rebuilds the URL from Host and http alone, ignoring --public-url and the
                        proxy's X-Forwarded-Proto and -Host (a receiver behind a proxy)
  signed-headers-ignored  folio: the HMAC of the body alone, not of the method, path and signed headers
  contentful-version-key  contentful: answers 200 without storing an event whose sys.id + sys.version it has
                          seen (a webhook body has no sys.version: revision and publishedVersion), as if that
                          were the event's identity, not X-Contentful-Idempotency-Key
  challenge-wrong-key   Zoom: answers endpoint.url_validation with the plainToken HMACed with another key
  pong-first            Discord: answers a PING {"type": 1} before verifying it (Discord's probe, a PING
                        with a bad signature, is answered PONG instead of 401)
  refuse-400            Discord: answers a bad signature 400, not the 401 Discord's endpoint check wants
  decode-chunks         reads the body 8 KiB at a time and decodes each chunk to text before joining them
                        (`body += chunk`): a character split between two chunks is corrupted
  sha1-only             GitHub: verifies only the legacy X-Hub-Signature (HMAC-SHA1), which GitHub still sends
                        beside X-Hub-Signature-256: it works, but on the hash GitHub advises against
  hook-id-key           GitHub: keys its store on X-GitHub-Hook-ID (the hook's id, the same on every delivery)
                        instead of X-GitHub-Delivery: distinct deliveries of one hook are stored as one
  ack-first             answers 200, then stores in a thread ~2 ms later (Go's `go save()`, "don't block the
                        sender"): a crash in between loses a delivery the sender was told was taken;
                        --store-after S stores S seconds after the 200 instead (a slow insert of a large row)
  no-body-cap           reads a body of any size (no cap of its own, as behind a proxy that holds the cap)
  hubspot-v1-default    HubSpot: verifies only X-HubSpot-Signature, v1 (the hex SHA-256 of the client secret + the body),
                        as @hubspot/api-client's Signature.isValid does with its default version: right while HubSpot
                        sends v1 beside v3 on every app delivery
  square-legacy-sha1    Square: verifies only the legacy x-square-signature (base64 HMAC-SHA1 of the URL + the body),
                        which Square still sends beside the SHA-256 one
  square-needs-initial-timestamp  Square: answers 400 to a delivery without square-initial-delivery-timestamp,
                        a header Square's docs list on every notification
  sendgrid-lines        SendGrid: reads the body line by line and writes each line back with its CRLF, as a Java
                        BufferedReader loop does before verifying: SendGrid's own [{…},\r\n{…}]\r\n comes out whole,
                        a body without SendGrid's CRLFs does not
  discord-ua-ping       Discord: answers a PING only when its User-Agent is Discord's (Discord-Interactions/…), 403 otherwise
  discord-member-user   Discord: reads the invoker as (member or interaction).user.id and answers 500 when neither has
                        one: Discord sends member (in a guild) or user (in a DM) on every interaction
  zoom-trackingid-dedupe  Zoom: keys its store on x-zm-trackingid (400 without it), as Zoom's forum advises
  gitlab-webhook-uuid-key  GitLab: compares X-Gitlab-Token right but keys its store on X-Gitlab-Webhook-UUID, which
                        GitLab makes new for every request: a resent event (same Idempotency-Key) is stored again
  chunked-challenge     Twitch: echoes the raw challenge as text/plain, but chunked (no Content-Length)
  json-challenge        Twitch, beacon: echoes the handshake's challenge as JSON, not the raw value
  twilio-unsorted       Twilio: signs the form's parameters in the order they came, not sorted by name
  json-no-bodysha       Twilio: a JSON body (Event Streams) verified over the URL, bodySHA256 included, but the
                        body never hashed and compared with bodySHA256
  any-token             relay, postbox, postmark: takes any Bearer token (any Basic credentials) as long as the scheme is right
  postmark-no-auth      Postmark: checks no credentials at all ("basic auth is handled by the web server or proxy"),
                        so anyone who finds the URL can post records: a missing or wrong Authorization is taken
  mailgun-window-5m     Mailgun: verifies the body's signature right but refuses a signature.timestamp more than 5
                        minutes old, as Stripe's window: Mailgun's retries carry the first attempt's signature, so
                        every retry after the first 5 minutes is refused and the event is never stored
  answer-204            answers a stored delivery 204 No Content: Mailgun and Postmark take 200 alone as success and retries it
  answer-203            answers a stored delivery 203 Non-Authoritative Information, as a transforming proxy in front
                        rewrites a 200: Pub/Sub acknowledges 200, 201, 202 and 204 only, and sends the message again
  mailgun-hmac-body     Mailgun: computes the HMAC over the whole raw body, as most providers sign, and compares it
                        with signature.signature: Mailgun signs timestamp + token only, so nothing verifies
  trusts-listen         behind hookdrill listen's route: takes any request carrying X-Hookdrill-Source unverified
                        ("listen verified it"): anyone who reaches the service's port adds that header too
  sns-any-cert-host, sns-no-confirm, sns-confirm-first  SNS: see sns_scheme.py
  paypal-any-cert-host, paypal-crc-reserialized, paypal-transmission-key
                        payflow (PayPal's scheme, declared): see paypal_scheme.py
  jwt-any-audience, jwt-no-expiry, jwt-no-iat, jwt-any-issuer, jwt-unverified
                        pubsub: one check of the OIDC token left out (test/receivers/pubsub_scheme.py)
  plaid-no-body-hash, plaid-no-iat, plaid-any-alg
                        plaid: one step of Plaid's verification left out (test/receivers/plaid_scheme.py)
HTTP/1.1 with keep-alive is the default (http.server's headers and body go out in two writes, so a
reused connection waits on Nagle and delayed ACKs, ~40 ms): a correct receiver all the same.
"""
import argparse, base64, gzip, hashlib, hmac, json, os, re, sqlite3, sys, threading, time, urllib.parse
import twilio_scheme
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
import pack_scheme  # the senders of hookdrill's pack (test/receivers/pack_scheme.py)
import twitch_scheme  # Twitch EventSub's check and challenge (test/receivers/twitch_scheme.py)

TOLERANCE = 300
HANDLED = {'folio': 'Entry.publish', 'pubsub': 'OBJECT_FINALIZE', 'sns': 'Notification', 'twilio': 'message.received', 'ringer': 'call.answered', 'parcel': 'parcel.shipped', 'mailgun': 'delivered', 'beacon': 'payment.succeeded', 'twitch': 'channel.follow', 'intercom': 'company.created', 'postmark': 'Delivery', 'gitlab': 'Push Hook', 'sendgrid': 'delivered', 'linear': 'Issue', 'zoom': 'meeting.started', 'hubspot': 'contact.creation', 'line': 'message', 'discord': 'application_command', 'square': 'payment.created', 'workos': 'dsync.user.created', 'paddle': 'transaction.completed', 'acme': 'payment.succeeded', 'relay': 'payment.succeeded', 'postbox': 'payment.succeeded', 'stripe': 'invoice.paid', 'github': 'push', 'slack': 'message', 'standard': 'invoice.paid', 'svix': 'invoice.paid', 'shopify': 'orders/create'}
HANDLED['plaid'] = 'TRANSACTIONS.SYNC_UPDATES_AVAILABLE'
HANDLED['contentful'] = 'ContentManagement.Entry.publish'


class Store:
    def __init__(self, path, sync, remember):
        self.path, self.lock = path, threading.Lock()
        if path.endswith('.db'):
            self.db = sqlite3.connect(path, check_same_thread=False, isolation_level=None)
            self.db.execute('PRAGMA journal_mode=WAL')
            self.db.execute(f'PRAGMA synchronous={sync}')
            self.db.execute('CREATE TABLE IF NOT EXISTS deliveries (id TEXT PRIMARY KEY, body BLOB)')
        else:
            self.db = None
            self.seen = set(read_ids(path)) if remember else set()

    def put(self, delivery_id, body, always=False):
        """Stores the delivery durably unless it is held already (always: even then); True when it was new."""
        with self.lock:
            if self.db is not None:
                cur = self.db.execute('INSERT OR IGNORE INTO deliveries (id, body) VALUES (?, ?)', (delivery_id, body))
                return cur.rowcount == 1
            if delivery_id in self.seen and not always:
                return False
            with open(self.path, 'a') as f:
                f.write(delivery_id + '\n')
                f.flush()
                os.fsync(f.fileno())
            self.seen.add(delivery_id)
            return True


def read_ids(path):
    if path.endswith('.db'):
        if not os.path.exists(path):
            return []
        db = sqlite3.connect(path)
        try:
            return [r[0] for r in db.execute('SELECT id FROM deliveries')]
        except sqlite3.OperationalError:
            return []
    try:
        with open(path) as f:
            return [line.strip() for line in f if line.strip()]
    except FileNotFoundError:
        return []


def mac(key, data, digest='hex'):
    m = hmac.new(key, data, hashlib.sha256)
    return m.hexdigest() if digest == 'hex' else base64.b64encode(m.digest()).decode()


def fresh(ts, two_sided):
    try:
        t = int(ts)
    except ValueError:
        return False
    now = int(time.time())
    return now - t <= TOLERANCE and (not two_sided or t - now <= TOLERANCE)


def notification_url(args, h, flaw):
    if args.public_url and flaw != 'url-from-host':
        return args.public_url
    forwarded = flaw != 'url-from-host'
    proto = (h.get('X-Forwarded-Proto') if forwarded else None) or 'http'
    host = (h.get('X-Forwarded-Host') if forwarded else None) or h.get('Host') or ''
    return f'{proto.split(",")[0].strip()}://{host.split(",")[0].strip()}{h.path}'


def verify(args, h, body):
    """None when the request is authentic; otherwise why not."""
    secret, flaw = args.secret.encode(), args.flaw
    check_time = flaw != 'accepts-stale'
    if args.provider == 'stripe':
        header = h.get('Stripe-Signature') or ''
        if flaw == 'strict-stripe-header':
            m = re.match(r'^t=(\d+),v1=([0-9a-f]{64})$', header)
            if not m:
                return 'unexpected Stripe-Signature format'
            t, sigs = m.group(1), [m.group(2)]
        else:
            items = [p.split('=', 1) for p in header.split(',') if '=' in p]
            t = next((v for k, v in items if k.strip() == 't'), None)
            sigs = [v.strip() for k, v in items if k.strip() == 'v1']
            if flaw == 'first-v1-only':
                sigs = sigs[:1]
        if not t or not sigs:
            return 'no timestamp or signature'
        if check_time and not fresh(t, two_sided=False):
            return 'stale'
        expected = mac(secret, f'{t}.'.encode() + body)
        return None if any(hmac.compare_digest(expected, s) for s in sigs) else 'no match'
    if args.provider == 'github' and flaw == 'sha1-only':
        expected = 'sha1=' + hmac.new(secret, body, hashlib.sha1).hexdigest()
        return None if hmac.compare_digest(expected, h.get('X-Hub-Signature') or '') else 'no match'
    if args.provider == 'github':
        expected = 'sha256=' + mac(secret, body)
        return None if hmac.compare_digest(expected, h.get('X-Hub-Signature-256') or '') else 'no match'
    if args.provider == 'shopify':
        expected = mac(secret, body, 'base64')
        return None if hmac.compare_digest(expected, h.get('X-Shopify-Hmac-Sha256') or '') else 'no match'
    if args.provider == 'slack':
        ts = h.get('X-Slack-Request-Timestamp') or ''
        if check_time and not fresh(ts, two_sided=True):
            return 'stale'
        expected = 'v0=' + mac(secret, f'v0:{ts}:'.encode() + body)
        return None if hmac.compare_digest(expected, h.get('X-Slack-Signature') or '') else 'no match'
    if args.provider in ('standard', 'svix'):
        prefix = 'svix' if args.provider == 'svix' else 'webhook'
        msg_id, ts = h.get(f'{prefix}-id') or '', h.get(f'{prefix}-timestamp') or ''
        if check_time and not fresh(ts, two_sided=True):
            return 'stale'
        key = base64.b64decode(args.secret[len('whsec_'):] if args.secret.startswith('whsec_') else args.secret)
        expected = mac(key, f'{msg_id}.{ts}.'.encode() + body, 'base64')
        entries = [e.split(',', 1)[1] for e in (h.get(f'{prefix}-signature') or '').split(' ') if e.startswith('v1,')]
        return None if any(hmac.compare_digest(expected, e) for e in entries) else 'no match'
    if args.provider == 'paddle':
        # Paddle's documented check as its SDK applies it: ts and h1 from "ts=…;h1=…" (any order,
        # other keys ignored), the HMAC of "ts:body", and only a timestamp more than 5 s old refused.
        parts = dict(p.split('=', 1) for p in (h.get('Paddle-Signature') or '').split(';') if '=' in p)
        ts, h1 = parts.get('ts'), parts.get('h1')
        if not ts or not h1 or not ts.isdigit():
            return 'no ts or h1'
        if check_time and time.time() > int(ts) + 5:
            return 'stale'
        return None if hmac.compare_digest(mac(secret, f'{ts}:'.encode() + body), h1) else 'no match'
    if args.provider == 'workos':
        # WorkOS's documented check as @workos-inc/node applies it: "t=<ms>, v1=<hex>" split on
        # "," then "=", the HMAC of "t.body" (here over the raw bytes, which WorkOS sends as
        # JSON.stringify writes them), only a timestamp more than 180 s old refused.
        entries = (h.get('WorkOS-Signature') or '').split(',')
        if len(entries) < 2:
            return 'no t or v1'
        ts, v1 = (e.split('=', 1)[1] if '=' in e else '' for e in entries[:2])
        if not ts.isdigit() or not v1:
            return 'no t or v1'
        if check_time and time.time() * 1000 > int(ts) + 180_000:
            return 'stale'
        return None if hmac.compare_digest(mac(secret, f'{ts}.'.encode() + body), v1) else 'no match'
    if args.provider == 'square' and flaw == 'square-legacy-sha1':
        # The legacy header: the base64 HMAC-SHA1 of the same notification URL + body, the same key.
        signed = notification_url(args, h, flaw).encode() + body
        expected = base64.b64encode(hmac.new(secret, signed, hashlib.sha1).digest()).decode()
        return None if hmac.compare_digest(expected, h.get('x-square-signature') or '') else 'no match'
    if args.provider == 'square':
        # Square's documented check: the base64 HMAC-SHA256 of the notification URL and the raw
        # body. The URL is the one Square posts to: --public-url, else rebuilt from the request,
        # a proxy's X-Forwarded-Proto and -Host first.
        signed = notification_url(args, h, flaw).encode() + body
        return None if hmac.compare_digest(mac(secret, signed, 'base64'), h.get('x-square-hmacsha256-signature') or '') else 'no match'
    if args.provider == 'discord':
        # Discord's documented check (PyNaCl, as its docs' Python example): the Ed25519 signature
        # of X-Signature-Timestamp + the raw body, with the application's public key (hex).
        from nacl.exceptions import BadSignatureError
        from nacl.signing import VerifyKey
        try:
            VerifyKey(bytes.fromhex(args.secret)).verify(
                (h.get('X-Signature-Timestamp') or '').encode() + body, bytes.fromhex(h.get('X-Signature-Ed25519') or ''))
        except (BadSignatureError, ValueError):
            return 'invalid request signature'
        return None
    if args.provider == 'line':
        # LINE's documented check: the base64 HMAC-SHA256 of the raw body with the channel secret.
        return None if hmac.compare_digest(mac(secret, body, 'base64'), h.get('x-line-signature') or '') else 'no match'
    if args.provider == 'hubspot' and flaw == 'hubspot-v1-default':
        # @hubspot/api-client's Signature.isValid with no version given: v1, sha256(client secret + body) in hex.
        expected = hashlib.sha256(secret + body).hexdigest()
        return None if hmac.compare_digest(expected, h.get('X-HubSpot-Signature') or '') else 'no match'
    if args.provider == 'hubspot':
        # HubSpot's documented v3 check: the base64 HMAC-SHA256 of method + URL + body + timestamp
        # (ms), the URL the one HubSpot posts to (as Square's); only a timestamp over 5 minutes old refused.
        ts = h.get('X-HubSpot-Request-Timestamp') or ''
        if not ts.isdigit():
            return 'no timestamp'
        if check_time and time.time() * 1000 - int(ts) > 300_000:
            return 'stale'
        url = notification_url(args, h, flaw)
        if flaw != 'no-url-decode':
            # As HubSpot's v3 docs say: these escapes decoded in the URL before it is hashed.
            url = re.sub(r'%(3A|2F|3F|40|21|24|27|28|29|2A|2C|3B)', lambda m: bytes.fromhex(m.group(1)).decode(), url, flags=re.I)
        signed = b'POST' + url.encode() + body + ts.encode()
        return None if hmac.compare_digest(mac(secret, signed, 'base64'), h.get('X-HubSpot-Signature-v3') or '') else 'no match'
    if args.provider == 'zoom':
        # Zoom's documented check: v0= + the hex HMAC of "v0:<ts>:<body>" with the secret token.
        # The docs' sample refuses a timestamp over 5 minutes old; the raw bytes are verified here.
        ts = h.get('x-zm-request-timestamp') or ''
        if check_time and not fresh(ts, two_sided=False):
            return 'stale'
        expected = 'v0=' + mac(secret, f'v0:{ts}:'.encode() + body)
        return None if hmac.compare_digest(expected, h.get('x-zm-signature') or '') else 'no match'
    if args.provider == 'linear':
        # Linear's documented check: the hex HMAC-SHA256 of the raw body, then the signed body's
        # webhookTimestamp (Unix ms) within a minute either way, as @linear/sdk checks it.
        if not hmac.compare_digest(mac(secret, body), h.get('Linear-Signature') or ''):
            return 'no match'
        if check_time:
            try:
                ts = json.loads(body).get('webhookTimestamp')
            except (ValueError, AttributeError):
                return 'no webhookTimestamp'
            if not isinstance(ts, (int, float)) or abs(time.time() * 1000 - ts) > 60_000:
                return 'stale'
        return None
    if args.provider == 'sendgrid':
        # SendGrid's documented check (cryptography, as its docs' Python sample): the ECDSA (SHA-256)
        # signature, base64 DER, of the timestamp header + the raw body, with the verification key.
        from cryptography.exceptions import InvalidSignature
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        try:
            key = serialization.load_der_public_key(base64.b64decode(args.secret))
            signed = (h.get('X-Twilio-Email-Event-Webhook-Timestamp') or '').encode() + body
            key.verify(base64.b64decode(h.get('X-Twilio-Email-Event-Webhook-Signature') or ''), signed, ec.ECDSA(hashes.SHA256()))
        except (InvalidSignature, ValueError):
            return 'invalid signature'
        return None
    if args.provider in pack_scheme.SENDERS:
        return pack_scheme.verify(args.provider, h, body, secret, flaw, check_time)
    if args.provider == 'twitch':
        return twitch_scheme.verify(h, body, secret, check_time)
    if args.provider == 'beacon':
        # A team's own platform declaring Twitch's kind of scheme (test/declared-handshake.test.ts).
        return twitch_scheme.verify(h, body, secret, check_time, prefix='Beacon-')
    if args.provider == 'twilio':
        url = notification_url(args, h, flaw)
        # Behind a proxy the public URL is configured; the query Twilio added (bodySHA256) comes with the request.
        if args.public_url and flaw != 'url-from-host':
            url = twilio_scheme.posted_url(url, h.path)
        return twilio_scheme.verify(secret, h, body, url, flaw)
    if args.provider == 'ringer':
        # A team's own canonical scheme (test/declared-canonical.test.ts): Twilio's string, HMAC-SHA256 in hex.
        return twilio_scheme.verify(secret, h, body, notification_url(args, h, flaw), flaw, 'Ringer-Signature', hashlib.sha256, 'hex')
    if args.provider == 'folio':
        # A team's own platform signing as Contentful does (test/declared-canonical-request.test.ts).
        import contentful_scheme
        return contentful_scheme.verify(secret, h, body, notification_url(args, h, flaw), check_time, flaw, two_sided=True)
    if args.provider == 'contentful':
        # Contentful (src/providers/contentful.ts): as the toolkit's verifyRequest, its one-sided 30 s window.
        import contentful_scheme
        return contentful_scheme.verify(secret, h, body, notification_url(args, h, flaw), check_time, flaw)
    if args.provider == 'sns':
        # Amazon SNS: the certificate from a pinned host, RSA over named fields (sns_scheme.py).
        import sns_scheme
        sns_scheme.confirm_early(body, flaw)
        return sns_scheme.verify(body, flaw)
    if args.provider in ('paypal', 'payflow'):
        # PayPal's scheme (payflow: declared as PayPal's, test/declared-certificate.test.ts): paypal_scheme.py.
        import paypal_scheme
        return paypal_scheme.verify(h, body, secret, flaw)
    if args.provider == 'gitlab':
        # GitLab's documented rule: X-Gitlab-Token is the hook's secret token, sent as it is (no
        # signature, nothing of the body covered); compared in constant time.
        return None if hmac.compare_digest(secret, (h.get('X-Gitlab-Token') or '').encode()) else 'no match'
    if args.provider == 'intercom':
        # Intercom's documented rule: X-Hub-Signature is "sha1=" and the hex HMAC-SHA1 of the raw
        # body with the app's client secret; no timestamp is signed.
        expected = 'sha1=' + hmac.new(secret, body, hashlib.sha1).hexdigest()
        return None if hmac.compare_digest(expected, h.get('X-Hub-Signature') or '') else 'no match'
    if args.provider == 'postmark' and flaw == 'postmark-no-auth':
        return None
    if args.provider == 'mailgun':
        # Mailgun's documented check: the signature is in the body, the hex HMAC-SHA256 of
        # signature.timestamp + signature.token with the webhook signing key; nothing else of the
        # body is covered. The docs make a timestamp check optional: this receiver has none.
        try:
            sig = json.loads(body).get('signature') or {}
        except (ValueError, AttributeError):
            return 'not JSON'
        given = sig.get('signature') if isinstance(sig, dict) else None
        if not isinstance(given, str) or not isinstance(sig.get('timestamp'), str) or not isinstance(sig.get('token'), str):
            return 'no signature'
        if flaw == 'mailgun-window-5m' and not fresh(sig['timestamp'], two_sided=False):
            return 'stale'
        signed = body if flaw == 'mailgun-hmac-body' else (sig['timestamp'] + sig['token']).encode()
        return None if hmac.compare_digest(mac(secret, signed), given) else 'no match'
    if args.provider == 'parcel':
        # A team's own platform that signs in the body (test/declared-body.test.ts): auth.signature,
        # the base64 HMAC-SHA256 of "auth.timestamp.auth.nonce.data.id".
        try:
            event = json.loads(body)
            auth, data_id = event.get('auth') or {}, (event.get('data') or {}).get('id')
            signed = f"{auth['timestamp']}.{auth['nonce']}.{data_id}".encode()
            given = auth['signature']
        except (ValueError, AttributeError, KeyError, TypeError):
            return 'no signature'
        return None if isinstance(given, str) and hmac.compare_digest(mac(secret, signed, 'base64'), given) else 'no match'
    if args.provider == 'plaid':
        # Plaid: the ES256 JWT in Plaid-Verification, its key fetched by kid, iat within 5 minutes,
        # request_body_sha256 the body's, in test/receivers/plaid_scheme.py.
        import plaid_scheme
        return plaid_scheme.verify(h.get('Plaid-Verification') or '', body, flaw)
    if args.provider == 'pubsub':
        # Google Cloud Pub/Sub push: its OIDC token's signature, issuer, expiry and audience (the URL
        # posted to, as Square's), in test/receivers/pubsub_scheme.py.
        import pubsub_scheme
        return pubsub_scheme.verify(h.get('Authorization') or '', notification_url(args, h, flaw), flaw)
    if args.provider in ('relay', 'postbox', 'postmark'):
        # Two teams' own platforms that sign nothing (test/declared-token.test.ts): relay sends
        # `Authorization: Bearer <token>`, postbox `Authorization: Basic base64(user:password)`, as
        # RFC 6750 and RFC 7617 write them; the secret held is the token, or "user:password".
        # Postmark sends the Basic credentials its webhook's URL holds (https://user:password@host/…).
        scheme = 'bearer' if args.provider == 'relay' else 'basic'
        m = re.match(r'^(\S+)\s+(\S+)$', (h.get('Authorization') or '').strip())
        if not m or m.group(1).lower() != scheme:
            return f'no {scheme.title()} credentials'
        if flaw == 'any-token':
            return None
        given = m.group(2).encode()
        if scheme == 'basic':
            try:
                given = base64.b64decode(given, validate=True)
            except ValueError:
                return 'credentials not base64'
        # Compared as digests, so neither the value nor its length shows in the time taken.
        ok = hmac.compare_digest(hashlib.sha256(given).digest(), hashlib.sha256(secret).digest())
        return None if ok else 'no match'
    if args.provider == 'acme':
        # A team's own platform, as its docs state the scheme (the project file's declaration in
        # test/declared-cli.test.ts): Acme-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "t.body">.
        m = re.match(r'^t=(\d+),v1=([0-9a-f]+)$', h.get('Acme-Signature') or '')
        if not m:
            return 'no Acme-Signature'
        if check_time and not fresh(m.group(1), two_sided=flaw != 'future-accepted'):
            return 'stale'
        expected = mac(secret, f'{m.group(1)}.'.encode() + body)
        return None if hmac.compare_digest(expected, m.group(2)) else 'no match'
    return 'unknown provider'


# What each provider's events are about (the contract's `related.path`): what a receiver that
# dedupes on the thing, not the delivery, keys on.
ENTITY = {
    'stripe': ['data', 'object', 'id'], 'github': ['issue', 'id'], 'slack': ['event', 'ts'], 'shopify': ['id'],
    'svix': ['data', 'id'], 'standard': ['data', 'id'], 'paddle': ['data', 'id'], 'workos': ['data', 'id'],
    'square': ['data', 'id'], 'line': ['events', 0, 'source', 'userId'], 'hubspot': [0, 'objectId'],
    'zoom': ['payload', 'object', 'id'], 'linear': ['data', 'id'], 'sendgrid': [0, 'sg_message_id'],
    'gitlab': ['object_attributes', 'id'], 'twilio': ['MessageSid'], 'postmark': ['MessageID'], 'intercom': ['data', 'item', 'id'], 'twitch': ['event', 'broadcaster_user_id'], 'mailgun': ['event-data', 'message', 'headers', 'message-id'],
    'contentful': ['sys', 'id'],
}
ENTITY['plaid'] = ['item_id']
SEEN_ENTITIES = set()


def entity_of(provider, event):
    v = event
    for key in ENTITY.get(provider, []):
        try:
            v = v[key]
        except (KeyError, IndexError, TypeError):
            return None
    return v if isinstance(v, (str, int)) else None


def identify(provider, h, event, flaw=''):
    """(delivery id, event type) as each provider carries them."""
    if provider == 'github' and flaw == 'hook-id-key':
        return h.get('X-GitHub-Hook-ID'), h.get('X-GitHub-Event')
    if provider == 'stripe':
        return event.get('id'), event.get('type')
    if provider == 'github':
        return h.get('X-GitHub-Delivery'), h.get('X-GitHub-Event')
    if provider == 'shopify':
        # Keyed as Shopify's docs say (the event id), or on the webhook id as older receivers are.
        key = 'X-Shopify-Event-Id' if os.environ.get('SHOPIFY_KEY') == 'event' else 'X-Shopify-Webhook-Id'
        return h.get(key), h.get('X-Shopify-Topic')
    if provider == 'slack':
        inner = event.get('event') or {}
        return event.get('event_id'), inner.get('type') if event.get('type') == 'event_callback' else event.get('type')
    if provider == 'svix':
        return h.get('svix-id'), event.get('type')
    if provider == 'acme':
        return h.get('Acme-Delivery'), event.get('type')
    if provider in ('relay', 'postbox'):
        return h.get(f'{provider.title()}-Delivery'), event.get('type')
    if provider == 'paddle':
        return event.get('event_id'), event.get('event_type')
    if provider == 'workos':
        return event.get('id'), event.get('event')
    if provider == 'square':
        return event.get('event_id'), event.get('type')
    if provider == 'sendgrid':
        first = event[0] if isinstance(event, list) and event and isinstance(event[0], dict) else {}
        return first.get('sg_event_id'), first.get('event')
    if provider == 'linear':
        return h.get('Linear-Delivery'), event.get('type')
    if provider in pack_scheme.SENDERS:
        return pack_scheme.identify(provider, h, event)
    if provider == 'twitch':
        return twitch_scheme.identify(h, event)
    if provider == 'beacon':
        return h.get('Beacon-Message-Id'), event.get('type')
    if provider == 'twilio':
        return twilio_scheme.identify(h, event)
    if provider == 'ringer':
        return h.get('Ringer-Delivery'), event.get('Kind')
    if provider == 'folio':
        return h.get('Folio-Delivery'), h.get('X-Contentful-Topic')
    if provider == 'contentful':
        # "a unique SHA256 hash for each event", the same on a retry (Contentful's changelog).
        return h.get('X-Contentful-Idempotency-Key'), h.get('X-Contentful-Topic')
    if provider == 'sns':
        # MessageId: the same on every retry of a message (SNS's docs).
        return event.get('MessageId'), event.get('Type')
    if provider == 'plaid':
        # No delivery id anywhere, and a retry re-posts the same body: keyed below on its SHA-256.
        return None, f"{event.get('webhook_type')}.{event.get('webhook_code')}"
    if provider == 'pubsub':
        # The message's id, the same on every redelivery (Pub/Sub delivers at least once).
        message = event.get('message') if isinstance(event.get('message'), dict) else {}
        return message.get('messageId'), (message.get('attributes') or {}).get('eventType')
    if provider in ('paypal', 'payflow'):
        import paypal_scheme
        return paypal_scheme.identify(h, event, flaw)
    if provider == 'gitlab' and flaw == 'gitlab-webhook-uuid-key':
        return h.get('X-Gitlab-Webhook-UUID'), h.get('X-Gitlab-Event')
    if provider == 'gitlab':
        # Idempotency-Key, the same on every retry of an event (GitLab 17.4+); X-Gitlab-Event-UUID before it.
        return h.get('Idempotency-Key') or h.get('X-Gitlab-Event-UUID'), h.get('X-Gitlab-Event')
    if provider == 'intercom':
        # The notification's id (a ping's is null: keyed below on the body's hash).
        return event.get('id'), event.get('topic')
    if provider == 'postmark':
        # No delivery id anywhere, and a retry re-posts the same record: keyed below on the body's
        # SHA-256. A parsed inbound email has no RecordType.
        return None, event.get('RecordType') or ('Inbound' if event.get('MessageStream') == 'inbound' else None)
    if provider == 'mailgun':
        data = event.get('event-data') or {}
        return data.get('id'), data.get('event')
    if provider == 'parcel':
        return (event.get('data') or {}).get('id'), event.get('type')
    if provider == 'zoom' and flaw == 'zoom-trackingid-dedupe':
        return h.get('x-zm-trackingid'), event.get('event')
    if provider == 'zoom':
        return str(event.get('event_ts') or ''), event.get('event')
    if provider == 'hubspot':
        first = event[0] if isinstance(event, list) and event and isinstance(event[0], dict) else {}
        return str(first.get('eventId') or ''), first.get('subscriptionType')
    if provider == 'line':
        first = (event.get('events') or [{}])[0]
        return first.get('webhookEventId'), first.get('type')
    if provider == 'discord':
        kinds = {1: 'ping', 2: 'application_command', 3: 'message_component', 4: 'application_command_autocomplete', 5: 'modal_submit'}
        return event.get('id'), kinds.get(event.get('type'), f"type_{event.get('type')}")
    return h.get('webhook-id'), event.get('type')


SEEN_BODIES = set()


def event_age(event):
    """Seconds since the event's own time: Stripe's created, or an ISO occurred_at / created_at."""
    if not isinstance(event, dict):
        return 0
    created = event.get('created')
    if isinstance(created, (int, float)):
        return time.time() - created
    for key in ('occurred_at', 'created_at'):
        text = event.get(key)
        if isinstance(text, str):
            try:
                from datetime import datetime
                return time.time() - datetime.fromisoformat(text.replace('Z', '+00:00')).timestamp()
            except ValueError:
                return 0
    return 0


def deferred_interaction(event):
    """Discord's deferred answer for an interaction's type: autocomplete has none, an empty list of choices instead."""
    kind = event.get('type')
    return {'type': 8, 'data': {'choices': []}} if kind == 4 else {'type': 6 if kind == 3 else 5}


def is_redelivery(provider, event):
    """LINE's deliveryContext.isRedelivery, HubSpot's attemptNumber above 0."""
    if provider == 'line' and isinstance(event, dict):
        return any((e.get('deliveryContext') or {}).get('isRedelivery') for e in event.get('events') or [] if isinstance(e, dict))
    if provider == 'hubspot' and isinstance(event, list):
        return any((e.get('attemptNumber') or 0) > 0 for e in event if isinstance(e, dict))
    return False


def batch_ids(provider, event):
    """Every event id of a batch body (LINE's events, SendGrid's and HubSpot's list); None for one-event providers."""
    if provider == 'line' and isinstance(event, dict):
        return [e.get('webhookEventId') for e in event.get('events') or [] if isinstance(e, dict)]
    if provider == 'sendgrid' and isinstance(event, list):
        return [e.get('sg_event_id') for e in event if isinstance(e, dict)]
    if provider == 'hubspot' and isinstance(event, list):
        return [str(e.get('eventId') or '') for e in event if isinstance(e, dict)]
    return None


def secret_of(args):
    return args.secret.encode()


def is_ping(body):
    try:
        event = json.loads(body)
    except ValueError:
        return False
    return isinstance(event, dict) and event.get('type') == 1


def serve(args):
    store = Store(args.store, args.sqlite_sync, remember=args.flaw != 'memory-dedupe')

    class Handler(BaseHTTPRequestHandler):
        protocol_version = 'HTTP/1.0' if args.http10 else 'HTTP/1.1'

        def log_message(self, *a):
            pass

        def answer(self, status, text=b'', content_type='text/plain'):
            self.send_response(status)
            # With GZIP_ANSWERS=1, as a server behind compression middleware: gzip where the sender asks.
            if text and os.environ.get('GZIP_ANSWERS') == '1' and 'gzip' in (self.headers.get('Accept-Encoding') or ''):
                text = gzip.compress(text)
                self.send_header('Content-Encoding', 'gzip')
            self.send_header('Content-Type', content_type)
            self.send_header('Content-Length', str(len(text)))
            self.end_headers()
            self.wfile.write(text)

        def do_POST(self):
            length = int(self.headers.get('Content-Length') or 0)
            if args.flaw == 'limit-64k' and length > 64 * 1024:
                self.close_connection = True
                return self.answer(413, b'too large')
            if length > 32 * 1024 * 1024 and args.flaw != 'no-body-cap':  # above the largest event any provider sends (GitHub: 25 MB)
                self.close_connection = True
                return self.answer(413, b'too large')
            if args.flaw == 'decode-chunks':
                text, left = '', length
                while left > 0:
                    chunk = self.rfile.read(min(8192, left))
                    left -= len(chunk)
                    text += chunk.decode('utf-8', errors='replace')
                body = text.encode('utf-8')
            else:
                body = self.rfile.read(length)
            if args.path and self.path.split('?')[0] != args.path:
                return self.answer(404, b'not found')
            if args.flaw == 'join-lines':
                body = b''.join(body.splitlines())
            if args.flaw == 'crlf-lines':
                body = body.replace(b'\n', b'\r\n')
            if args.flaw == 'sendgrid-lines':
                # A line reader, each line written back with the CRLF SendGrid ends it with.
                body = b''.join(line + b'\r\n' for line in body.splitlines())
            if args.flaw == 'latin1-text':
                body = body.decode('latin-1').encode('utf-8')
            signed = body
            if args.flaw == 'reserialize-json' and body[:1] in (b'{', b'['):
                try:
                    signed = json.dumps(json.loads(body), separators=(',', ':'), ensure_ascii=False).encode()
                except ValueError:
                    pass
            if args.flaw == 'parse-form-first' and not body.startswith(b'{'):
                # What a framework's form parser hands on: the fields, serialised again (as JSON).
                signed = json.dumps(dict(urllib.parse.parse_qsl(body.decode(), keep_blank_values=True))).encode()
            if args.dump:
                head = ''.join(f'{k}: {v}\r\n' for k, v in self.headers.items() if k.lower() != 'content-length')
                raw = f'{self.requestline}\r\n{head}Content-Length: {len(signed)}\r\n\r\n'.encode('latin-1') + signed
                with open(os.path.join(args.dump, f'{time.time_ns()}.http'), 'wb') as f:
                    f.write(raw)
            # The path travels with the headers (a URL-bound scheme rebuilds the URL from both), per request.
            self.headers.path = self.path
            if args.provider == 'discord' and args.flaw == 'pong-first' and is_ping(body):
                return self.answer(200, b'{"type": 1}', 'application/json')
            if args.flaw == 'challenge-unverified':
                try:
                    early = json.loads(body)
                except ValueError:
                    early = {}
                if isinstance(early, dict) and early.get('event') == 'endpoint.url_validation':
                    token = (early.get('payload') or {}).get('plainToken') or ''
                    encrypted = hmac.new(secret_of(args), token.encode(), hashlib.sha256).hexdigest()
                    return self.answer(200, json.dumps({'plainToken': token, 'encryptedToken': encrypted}).encode(), 'application/json')
                challenge = twitch_scheme.challenge_of(self.headers, early) if args.provider == 'twitch' else None
                if challenge is not None:
                    return self.answer(200, challenge.encode(), 'text/plain')
                if isinstance(early, dict) and early.get('type') == 'url_verification':
                    return self.answer(200, json.dumps({'challenge': early.get('challenge')}).encode(), 'application/json')
            why = verify(args, self.headers, signed)
            if why and args.flaw == 'trusts-listen' and self.headers.get('X-Hookdrill-Source'):
                # "hookdrill listen verified it already": but anyone who reaches the port can add the header.
                why = None
            if why:
                # Discord's endpoint check wants 401 for a bad signature; the others take any 4xx.
                status = 401 if args.provider == 'discord' and args.flaw != 'refuse-400' else 400
                # Mailgun retries every answer but 200 and 406: a forgery is refused 406, once.
                status = 406 if args.provider == 'mailgun' else status
                return self.answer(status, why.encode())
            try:
                event = json.loads(body)
            except ValueError:
                if args.flaw == 'json-only':
                    return self.answer(400, b'expected JSON')
                event = {}
            if not isinstance(event, dict) and not (args.provider in ('hubspot', 'sendgrid') and isinstance(event, list)):
                event = {}
            if args.provider == 'twilio':
                event = twilio_scheme.event_of(self.headers, body)
            if args.provider == 'ringer':
                event = dict(twilio_scheme.fields(body))
            if args.provider == 'slack' and event.get('type') == 'url_verification':
                if args.flaw == 'no-challenge':
                    return self.answer(200, b'ok')
                return self.answer(200, json.dumps({'challenge': event.get('challenge')}).encode(), 'application/json')
            if args.provider == 'beacon' and event.get('type') == 'endpoint.verify' and isinstance(event.get('challenge'), str):
                return self.answer(200, *twitch_scheme.challenge_answer(event['challenge'], args.flaw))
            if args.provider == 'twitch' and args.flaw == 'chunked-challenge' and twitch_scheme.challenge_of(self.headers, event):
                # The raw challenge, as text/plain, but chunked: no Content-Length, which Twitch's docs ask for.
                text = twitch_scheme.challenge_of(self.headers, event).encode()
                self.send_response(200)
                self.send_header('Content-Type', 'text/plain')
                self.send_header('Transfer-Encoding', 'chunked')
                self.end_headers()
                self.wfile.write(b'%x\r\n%s\r\n0\r\n\r\n' % (len(text), text))
                return
            if args.provider == 'twitch' and twitch_scheme.challenge_of(self.headers, event) is not None:
                return self.answer(200, *twitch_scheme.challenge_answer(twitch_scheme.challenge_of(self.headers, event), args.flaw))
            if args.provider == 'zoom' and event.get('event') == 'endpoint.url_validation':
                token = (event.get('payload') or {}).get('plainToken') or ''
                if args.flaw == 'no-challenge':
                    return self.answer(200, b'ok')
                key = b'not-the-secret' if args.flaw == 'challenge-wrong-key' else secret_of(args)
                encrypted = hmac.new(key, token.encode(), hashlib.sha256).hexdigest()
                return self.answer(200, json.dumps({'plainToken': token, 'encryptedToken': encrypted}).encode(), 'application/json')
            if args.provider == 'discord' and event.get('type') == 1:
                if args.flaw == 'discord-ua-ping' and not (self.headers.get('User-Agent') or '').startswith('Discord-Interactions/'):
                    return self.answer(403, b'not from Discord')
                if args.flaw == 'no-challenge':
                    return self.answer(200, b'ok')
                return self.answer(200, b'{"type": 1}', 'application/json')
            if args.provider == 'sns' and event.get('Type') == 'SubscriptionConfirmation':
                # A handshake, not an event: confirmed by visiting SubscribeURL, nothing stored.
                import sns_scheme
                return self.answer(200, b'ok') if sns_scheme.confirm(event, args.flaw) else self.answer(400, b'SubscribeURL not on the SNS host')
            if args.flaw == 'ignore-retries' and self.headers.get('X-Slack-Retry-Num'):
                return self.answer(200, b'ok')
            if args.flaw == 'square-needs-initial-timestamp' and not self.headers.get('square-initial-delivery-timestamp'):
                return self.answer(400, b'no square-initial-delivery-timestamp')
            if args.flaw == 'discord-member-user':
                try:
                    # The invoker: member.user in a guild, user in a DM.
                    str((event.get('member') or event)['user']['id'])
                except (KeyError, TypeError):
                    return self.answer(500, b'KeyError: user')
            delivery_id, event_type = identify(args.provider, self.headers, event, args.flaw)
            if args.flaw == 'zoom-trackingid-dedupe' and not delivery_id:
                return self.answer(400, b'no x-zm-trackingid')
            if args.flaw == 'refuse-unknown-types' and event_type != HANDLED[args.provider]:
                return self.answer(400, f'no handler for {event_type}'.encode())
            if args.flaw == 'refuse-old-events' and event_age(event) > 300:
                # "Replay protection" on the event's own time instead of the signed timestamp.
                return self.answer(400, b'event too old')
            if args.flaw == 'drops-redeliveries' and is_redelivery(args.provider, event):
                # "Already handled the first time": but the first attempt may never have arrived.
                return self.answer(200, b'ok')
            if args.flaw == 'dedupe-by-body-hash':
                # Stored under the event's id, but a repeat is recognised by its bytes alone.
                digest = hashlib.sha256(body).hexdigest()
                if digest not in SEEN_BODIES:
                    SEEN_BODIES.add(digest)
                    store.put(delivery_id or digest, body, always=True)
                return self.answer(200, b'ok')
            if args.flaw == 'reads-fields':
                # A handler that reads what the provider's real deliveries hold: right in production,
                # a 500 on a body that leaves the field out.
                try:
                    if args.provider == 'paddle' and str(event.get('event_type', '')).startswith('transaction.'):
                        int(event['data']['details']['totals']['total'])
                    if args.provider == 'linear' and event.get('type') == 'Issue' and event.get('action') == 'update':
                        event['updatedFrom']['updatedAt']
                        event['actor']['id']
                except (KeyError, TypeError, ValueError) as e:
                    return self.answer(500, f'handler failed: {type(e).__name__} {e}'.encode())
            if args.flaw in ('dedupe-by-entity', 'contentful-version-key'):
                # "Already have this customer/issue/message": one row per thing, not per delivery.
                thing = entity_of(args.provider, event)
                if args.flaw == 'contentful-version-key':
                    # The entry at its version: a webhook body has no sys.version (revision,
                    # publishedVersion), so every event about one entry is the same key.
                    sys_ = event.get('sys') if isinstance(event, dict) and isinstance(event.get('sys'), dict) else {}
                    thing = f"{sys_.get('id')}:{sys_.get('version')}"
                if thing is not None and thing in SEEN_ENTITIES:
                    return self.answer(200, b'ok')
                SEEN_ENTITIES.add(thing)
            batch = batch_ids(args.provider, event)
            if args.flaw == 'refuse-empty' and batch == []:
                return self.answer(400, b'no events')
            if batch and args.flaw != 'first-event-only':
                # Each event of a batch under its own id, all before the 200.
                for each in batch[1:]:
                    store.put(each, body)
            if not delivery_id:
                delivery_id = hashlib.sha256(body).hexdigest()
            if args.flaw == 'ack-first':
                # The 200 first, the store after it, off the request's thread.
                self.answer(200, b'ok')
                self.wfile.flush()

                def later():
                    time.sleep(args.store_after)
                    store.put(delivery_id, body)
                threading.Thread(target=later, daemon=True).start()
                return
            if args.flaw == 'no-dedupe':
                # Bounds replays by the signed timestamp alone (right where the provider never re-sends): every request stored.
                store.put(delivery_id, body, always=True)
                if args.provider == 'discord':
                    return self.answer(200, json.dumps(deferred_interaction(event)).encode(), 'application/json')
                return self.answer(200, b'ok')
            if args.provider == 'discord':
                # An interaction wants an interaction response: deferred ("thinking…"), the work done after.
                store.put(delivery_id, body)
                if args.flaw == 'answer-ok':
                    return self.answer(200, b'ok')
                if args.flaw == 'answer-empty-message' and event.get('type') == 2:
                    # "Reply later": a message response with nothing in it, which Discord refuses.
                    return self.answer(200, b'{"type": 4}', 'application/json')
                return self.answer(200, json.dumps(deferred_interaction(event)).encode(), 'application/json')
            if args.flaw == 'store-down':
                # Its database is down: every delivery verified, none kept, each answered 503 to come again.
                return self.answer(503, b'database unavailable')
            if not store.put(delivery_id, body) and args.flaw == 'duplicate-500':
                # An INSERT without ON CONFLICT: the database's own words reach the sender.
                return self.answer(500, b'ERROR: duplicate key value violates unique constraint "deliveries_pkey"\nDETAIL: Key (id) already exists.')
            if args.answer_after:
                time.sleep(args.answer_after)
            if args.flaw == 'answer-204':
                # "Accepted, nothing to say": a 204, which a sender taking 200 alone (Mailgun, Postmark) retries.
                return self.answer(204)
            if args.flaw == 'answer-203':
                # A transforming proxy's rewrite of the 200 (RFC 9110, 15.3.4): a 2xx Pub/Sub does not take.
                return self.answer(203, b'ok')
            if args.flaw == 'answer-json-ok':
                # A framework's default JSON answer: Slack posts a command's answer as a message, and this is none.
                return self.answer(200, b'{"ok": true}', 'application/json')
            if args.provider == 'twilio' and twilio_scheme.needs_twiml(event):
                # An incoming message or call is answered with TwiML: the empty <Response> sends no reply.
                return self.answer(200, twilio_scheme.TWIML_EMPTY, 'text/xml')
            self.answer(200, b'ok')

    server = ThreadingHTTPServer(('127.0.0.1', args.port), Handler)
    server.daemon_threads = True
    print(f'listening on 127.0.0.1:{args.port}', flush=True)
    server.serve_forever()


class Flaws(str):
    """--flaw a,b: several flaws at once, each `flaw == 'a'` test true for any of them."""
    def __eq__(self, other):
        # str's own comparison: `in` would call this one again (a subclass's __eq__ is tried first).
        return any(str.__eq__(f, str(other)) for f in str.split(self, ','))

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = str.__hash__


def main():
    p = argparse.ArgumentParser()
    p.add_argument('command', choices=['serve', 'ids'])
    p.add_argument('--provider', default='stripe')
    p.add_argument('--secret', default='')
    p.add_argument('--public-url', default='')
    p.add_argument('--port', type=int, default=int(os.environ.get('PORT', '3000')))
    p.add_argument('--store', required=True)
    p.add_argument('--flaw', default='')
    p.add_argument('--sqlite-sync', default='FULL', choices=['FULL', 'NORMAL', 'OFF', 'EXTRA'])
    p.add_argument('--http10', action='store_true')
    p.add_argument('--path', default='')
    p.add_argument('--dump', default='')
    p.add_argument('--column', default='id', choices=['id', 'hash'])
    p.add_argument('--answer-after', type=float, default=0)
    p.add_argument('--store-after', type=float, default=0.002)
    p.add_argument('--tolerance', type=int, default=300, help="the timestamp window in seconds, either way (a declared scheme's own)")
    args = p.parse_args()
    args.flaw = Flaws(args.flaw)
    global TOLERANCE
    TOLERANCE = args.tolerance
    if args.command == 'ids':
        for i in read_ids(args.store):
            print(hashlib.sha1(i.encode()).hexdigest() if args.column == 'hash' else i)
        return
    if args.provider == 'graph':
        # Graph's notifications are a batch answered 202 whatever their clientState: its own receiver.
        import graph_scheme
        args.key = 'id'
        return graph_scheme.serve(args)
    serve(args)


if __name__ == '__main__':
    main()
