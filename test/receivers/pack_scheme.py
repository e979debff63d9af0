"""The senders of hookdrill's pack (src/providers/pack.ts), verified as each one's docs say, written
here apart from the declarations so that a declaration wrong about its sender fails against them:

  bitbucket  X-Hub-Signature: sha256=<hex HMAC-SHA256 of the raw body>; keyed on X-Request-UUID
  pagerduty  X-PagerDuty-Signature: v1=<hex>[,v1=<hex>…] (any entry); keyed on event.id
  mux        Mux-Signature: t=<ts>,v1=<hex HMAC-SHA256 of "t.body">, a t over 300 s old refused (only old:
             @mux/mux-node's check is one-sided); keyed on id
  vercel     x-vercel-signature: <hex HMAC-SHA1 of the raw body>; keyed on id
  calendly   Calendly-Webhook-Signature: t=<ts>,v1=<hex of "t.body">, 3 minutes; keyed on payload.uri
  typeform   Typeform-Signature: sha256=<base64 HMAC-SHA256 of the raw body>; keyed on event_id
  sentry     Sentry-Hook-Signature: <hex HMAC-SHA256 of the raw body>; keyed on Request-ID
  coinbase   X-CC-Webhook-Signature: <hex HMAC-SHA256 of the raw body>; keyed on event.id
  notion     X-Notion-Signature: sha256=<hex HMAC-SHA256 of the raw body>; keyed on id

Flaws: webhook_receiver.py's shared ones (reserialize-json, no-dedupe, …), and first-v1-only here
(PagerDuty: only the first v1= entry compared, which breaks while a secret is rotated).
"""
import base64, hashlib, hmac, json, re, time

SENDERS = ('bitbucket', 'pagerduty', 'mux', 'vercel', 'calendly', 'typeform', 'sentry', 'coinbase', 'notion')


def _mac(secret, data, algo=hashlib.sha256, enc='hex'):
    m = hmac.new(secret, data, algo)
    return m.hexdigest() if enc == 'hex' else base64.b64encode(m.digest()).decode()


def _timed(value, secret, body, tolerance, check_time, two_sided=True):
    m = re.match(r'^t=(\d+),v1=([0-9a-f]{64})$', value or '')
    if not m:
        return 'no t=,v1= signature'
    age = time.time() - int(m.group(1))
    if check_time and (age > tolerance or (two_sided and -age > tolerance)):
        return 'stale'
    expected = _mac(secret, m.group(1).encode() + b'.' + body)
    return None if hmac.compare_digest(expected, m.group(2)) else 'no match'


def verify(provider, h, body, secret, flaw, check_time):
    """None when the request is authentic; otherwise why not."""
    if provider == 'bitbucket':
        return None if hmac.compare_digest('sha256=' + _mac(secret, body), h.get('X-Hub-Signature') or '') else 'no match'
    if provider == 'pagerduty':
        entries = [e.strip()[3:] for e in (h.get('X-PagerDuty-Signature') or '').split(',') if e.strip().startswith('v1=')]
        if flaw == 'first-v1-only':
            entries = entries[:1]
        if not entries:
            return 'no v1= signature'
        expected = _mac(secret, body)
        return None if any(hmac.compare_digest(expected, e) for e in entries) else 'no match'
    if provider == 'mux':
        return _timed(h.get('Mux-Signature'), secret, body, 300, check_time, two_sided=False)
    if provider == 'calendly':
        return _timed(h.get('Calendly-Webhook-Signature'), secret, body, 180, check_time)
    if provider == 'vercel':
        return None if hmac.compare_digest(_mac(secret, body, hashlib.sha1), h.get('x-vercel-signature') or '') else 'no match'
    if provider == 'typeform':
        expected = 'sha256=' + _mac(secret, body, enc='base64')
        return None if hmac.compare_digest(expected, h.get('Typeform-Signature') or '') else 'no match'
    if provider == 'sentry':
        return None if hmac.compare_digest(_mac(secret, body), h.get('Sentry-Hook-Signature') or '') else 'no match'
    if provider == 'coinbase':
        return None if hmac.compare_digest(_mac(secret, body), h.get('X-CC-Webhook-Signature') or '') else 'no match'
    if provider == 'notion':
        return None if hmac.compare_digest('sha256=' + _mac(secret, body), h.get('X-Notion-Signature') or '') else 'no match'
    return 'unknown provider'


def identify(provider, h, event):
    """(delivery id, event type) as each sender carries them."""
    inner = event.get('event') if isinstance(event.get('event'), dict) else {}
    if provider == 'bitbucket':
        return h.get('X-Request-UUID'), h.get('X-Event-Key')
    if provider == 'pagerduty':
        return inner.get('id'), inner.get('event_type')
    if provider == 'coinbase':
        return inner.get('id'), inner.get('type')
    if provider == 'sentry':
        return h.get('Request-ID'), h.get('Sentry-Hook-Resource')
    if provider == 'calendly':
        payload = event.get('payload') if isinstance(event.get('payload'), dict) else {}
        return payload.get('uri'), event.get('event')
    if provider == 'typeform':
        return event.get('event_id'), event.get('event_type')
    return event.get('id'), event.get('type')
