"""Twitch EventSub (webhook transport) as its docs state it, for webhook_receiver.py.

dev.twitch.tv/docs/eventsub/handling-webhook-events:
  - Verifying the event message: Twitch-Eventsub-Message-Signature is "sha256=" + the hex
    HMAC-SHA256, keyed with the subscription's secret, of Message-Id + Message-Timestamp + raw body;
    compared in constant time.
  - Guarding against replay attacks: refuse a timestamp older than 10 minutes (the docs say
    nothing of one ahead), and a Message-Id already seen (the store keys on it: a repeat is a 2xx).
  - Responding to a challenge request: a verified webhook_callback_verification is answered 200 with
    the raw challenge as the body, Content-Type text/plain.
Flaws (webhook_receiver.py's --flaw):
  json-challenge   echoes the challenge as JSON, {"challenge": ...}, as a framework's default answer does
  no-challenge            answers the challenge request 200 "ok"
  challenge-unverified    echoes the challenge before verifying the request
"""
import hashlib, hmac, json, re, time
from datetime import datetime, timezone

WINDOW = 600  # seconds: "older than 10 minutes"
RFC3339 = re.compile(r'^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?([Zz]|[+-]\d{2}:\d{2})$')


def seconds(ts):
    """An RFC 3339 date-time (Twitch's carry up to nine fraction digits) in Unix seconds, or None."""
    m = RFC3339.match(ts or '')
    if not m:
        return None
    zone = '+00:00' if m.group(4) in ('Z', 'z') else m.group(4)
    try:
        whole = datetime.fromisoformat(f'{m.group(1)}T{m.group(2)}{zone}')
    except ValueError:
        return None
    return whole.astimezone(timezone.utc).timestamp() + float('0.' + (m.group(3) or '0'))


def verify(h, body, secret, check_time, prefix='Twitch-Eventsub-'):
    """None when Twitch sent it; otherwise why not. `prefix`: the headers' (a declared scheme of the same kind names its own)."""
    message_id = h.get(f'{prefix}Message-Id') or ''
    ts = h.get(f'{prefix}Message-Timestamp') or ''
    given = h.get(f'{prefix}Message-Signature') or ''
    if not message_id or not ts or not given:
        return f'missing {prefix}* headers'
    at = seconds(ts)
    if at is None:
        return 'timestamp is not RFC 3339'
    if check_time and time.time() - at > WINDOW:
        return 'stale'
    expected = 'sha256=' + hmac.new(secret, message_id.encode() + ts.encode() + body, hashlib.sha256).hexdigest()
    return None if hmac.compare_digest(expected, given) else 'no match'


def identify(h, event):
    """(Message-Id, the subscription's type): the message id is the same on every resend of a message."""
    sub = event.get('subscription') if isinstance(event, dict) else None
    return h.get('Twitch-Eventsub-Message-Id'), (sub or {}).get('type') if isinstance(sub, dict) else None


def challenge_of(h, event):
    """The challenge of a webhook_callback_verification, else None."""
    if (h.get('Twitch-Eventsub-Message-Type') or '') != 'webhook_callback_verification' or not isinstance(event, dict):
        return None
    c = event.get('challenge')
    return c if isinstance(c, str) else None


def challenge_answer(challenge, flaw):
    """(body, content type) answering the challenge, as the flaw has it."""
    if flaw == 'json-challenge':
        return json.dumps({'challenge': challenge}).encode(), 'application/json'
    if flaw == 'no-challenge':
        return b'ok', 'text/plain'
    return challenge.encode(), 'text/plain'
