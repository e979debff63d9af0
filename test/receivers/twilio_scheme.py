"""Twilio's webhooks for webhook_receiver.py: X-Twilio-Signature checked as twilio-python's
RequestValidator does it, keyed on I-Twilio-Idempotency-Token, TwiML answered.

The signature is the base64 HMAC-SHA1, keyed with the auth token, of the URL Twilio posted to
followed by every POST parameter sorted by name, as name + value (a repeated name: each distinct
value, sorted); the URL is tried with its default port written and left out, as the library does.
A JSON body (Event Streams' array of CloudEvents, Twilio's other JSON webhooks) is verified as
twilio-python's RequestValidator.validate does with a string body: the signature over the URL as
posted, bodySHA256 in its query and no parameters, then the hex SHA-256 of the raw body compared
with bodySHA256; it is keyed on each CloudEvent's id (Event Streams' dedupe key).
Flaws: url-from-host (the URL rebuilt from Host alone, as behind a proxy: webhook_receiver.py's
notification_url), twilio-unsorted (the parameters in the order they came, not sorted),
json-no-bodysha (a JSON body: the signature over the URL, bodySHA256 included, checked; the body
never hashed, so any body under a captured URL and signature is taken).
"""
import base64, hashlib, hmac, json, re, urllib.parse

# The empty TwiML document: no reply, and nothing Twilio reports as an error.
TWIML_EMPTY = b'<?xml version="1.0" encoding="UTF-8"?><Response></Response>'


def fields(body):
    """The form's fields in the order they came (blank values kept, as Twilio signs them)."""
    return urllib.parse.parse_qsl(body.decode('utf-8', errors='replace'), keep_blank_values=True)


def canonical(url, pairs, flaw=''):
    if flaw == 'twilio-unsorted':
        return url + ''.join(k + v for k, v in pairs)
    by_name = {}
    for k, v in pairs:
        by_name.setdefault(k, set()).add(v)
    return url + ''.join(k + v for k in sorted(by_name) for v in sorted(by_name[k]))


def port_forms(url):
    parts = urllib.parse.urlsplit(url)
    default = ':443' if parts.scheme == 'https' else ':80'
    host = parts.hostname or ''
    bare = urllib.parse.urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
    with_port = urllib.parse.urlunsplit((parts.scheme, host + (f':{parts.port}' if parts.port else default), parts.path, parts.query, parts.fragment))
    return [url] if parts.port and parts.port not in (80, 443) else [url, bare, with_port]


def verify(secret, h, body, url, flaw='', header='X-Twilio-Signature', digest=hashlib.sha1, encoding='base64'):
    """None when the request is Twilio's (or, with another header, digest and encoding, a team's
    own canonical scheme declared the same way: ringer's in test/declared-canonical.test.ts)."""
    given = (h.get(header) or '').strip()
    if not given:
        return f'no {header}'
    json_body = is_json(h)
    if json_body:
        # Signed through the URL: bodySHA256 there, the body's hash compared with it (unless the flaw).
        hashes = urllib.parse.parse_qs(urllib.parse.urlsplit(url).query).get('bodySHA256')
        if not hashes:
            return 'a JSON body and no bodySHA256 in the URL'
        if flaw != 'json-no-bodysha' and not hmac.compare_digest(hashlib.sha256(body).hexdigest(), hashes[0]):
            return "the body's SHA-256 is not bodySHA256"
    pairs = [] if json_body else fields(body)
    for candidate in port_forms(url):
        m = hmac.new(secret, canonical(candidate, pairs, flaw).encode(), digest)
        expected = m.hexdigest() if encoding == 'hex' else base64.b64encode(m.digest()).decode()
        if hmac.compare_digest(expected, given):
            return None
    return f'no match over {url}'


def type_of(event):
    """message.<status> or call.<status>, from the fields."""
    if event.get('CallSid'):
        return 'call.' + (event.get('CallStatus') or 'unknown')
    return 'message.' + (event.get('MessageStatus') or event.get('SmsStatus') or 'unknown')


def needs_twiml(event):
    return type_of(event) in ('message.received', 'call.ringing')


def is_json(h):
    return (h.get('Content-Type') or '').split(';')[0].strip().lower() == 'application/json'


def posted_url(public_url, path):
    """The public URL with the query the request came with (the bodySHA256 Twilio added to it)."""
    query = path.partition('?')[2]
    if not query or query in public_url:
        return public_url
    return public_url + ('&' if '?' in public_url else '?') + query


def event_of(h, body):
    """A form's fields, or an Event Streams delivery's first CloudEvent (one a request, as hookdrill sends)."""
    if not is_json(h):
        return dict(fields(body))
    try:
        events = json.loads(body)
    except ValueError:
        return {}
    first = events[0] if isinstance(events, list) and events else events
    return first if isinstance(first, dict) else {}


def identify(h, event):
    """The key and the type: a CloudEvent's id and type, a form's I-Twilio-Idempotency-Token and status."""
    if 'specversion' in event:
        return event.get('id'), event.get('type')
    return h.get('I-Twilio-Idempotency-Token'), type_of(event)
