"""Twilio's webhooks for webhook_receiver.py: X-Twilio-Signature checked as twilio-python's
RequestValidator does it, keyed on I-Twilio-Idempotency-Token, TwiML answered.

The signature is the base64 HMAC-SHA1, keyed with the auth token, of the URL Twilio posted to
followed by every POST parameter sorted by name, as name + value (a repeated name: each distinct
value, sorted); the URL is tried with its default port written and left out, as the library does.
Flaws: url-from-host (the URL rebuilt from Host alone, as behind a proxy: webhook_receiver.py's
notification_url), twilio-unsorted (the parameters in the order they came, not sorted).
"""
import base64, hashlib, hmac, re, urllib.parse

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
    pairs = fields(body)
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
