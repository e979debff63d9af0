"""Contentful's request verification for webhook_receiver.py, as @contentful/node-apps-toolkit's
verifyRequest does it (3.16.1, lib/requests): the hex HMAC-SHA256, keyed with the signing secret's
UTF-8 bytes, of "METHOD\\nPATH\\nHEADERS\\nBODY", HEADERS being each header named in
X-Contentful-Signed-Headers that the request carries, "name:value" (value trimmed), sorted by name,
joined by ";"; the signed-headers header and the timestamp always among them; the timestamp
(Unix ms) refused once 30 s old (the toolkit's default time to live), a future one accepted.
https://www.contentful.com/developers/docs/webhooks/request-verification/

A declared platform signing the same way (folio's, in test/declared-canonical-request.test.ts)
passes two_sided: a declaration's window holds both ways; another prefix, its own header names.
Flaws: signed-headers-ignored (the HMAC of the body alone, as a body-signing scheme would),
accepts-stale (no timestamp check), url-from-host (the path as it arrived here, behind a proxy that
rewrote it, not the one the sender posted to: webhook_receiver.py's notification_url).
"""
import hashlib, hmac, time, urllib.parse


def signed_path(url):
    """The path and query as the toolkit normalises them: the query escaped whole, then encodeURI."""
    parts = urllib.parse.urlsplit(url)
    path = parts.path or '/'
    if parts.query:
        path += '?' + urllib.parse.quote(parts.query, safe="-_.!~*'()")
    return urllib.parse.quote(path, safe=";,/?:@&=+$-_.!~*'()#")


def verify(secret, h, body, url, check_time=True, flaw='', prefix='X-Contentful-', ttl=30, method='POST', two_sided=False):
    """None when the request is the sender's; otherwise why not. two_sided: a timestamp further
    ahead than the window refused too (a declaration's window is both ways; the toolkit's is not)."""
    given = (h.get(prefix + 'Signature') or '').strip()
    listed = h.get(prefix + 'Signed-Headers') or ''
    ts = (h.get(prefix + 'Timestamp') or '').strip()
    if not given or not listed or not ts:
        return f'no {prefix}Signature, -Signed-Headers or -Timestamp'
    if not ts.isdigit():
        return 'timestamp not Unix ms'
    if check_time and time.time() * 1000 - int(ts) >= ttl * 1000:
        return 'stale'
    if check_time and two_sided and int(ts) - time.time() * 1000 > ttl * 1000:
        return 'too new'
    if flaw == 'signed-headers-ignored':
        expected = hmac.new(secret, body, hashlib.sha256).hexdigest()
        return None if hmac.compare_digest(expected, given) else 'no match over the body'
    lower = {}
    for k, v in h.items():
        lower.setdefault(k.lower(), v.strip())
    names = [n for n in listed.split(',') if n in lower]
    for always in ((prefix + 'Signed-Headers').lower(), (prefix + 'Timestamp').lower()):
        if always not in names:
            names.append(always)
    names.sort()
    values = {n: lower.get(n, '') for n in names}
    values[(prefix + 'Signed-Headers').lower()] = ','.join(names)
    headers = ';'.join(f'{n}:{values[n]}' for n in names)
    canonical = f'{method}\n{signed_path(url)}\n{headers}\n'.encode() + body
    expected = hmac.new(secret, canonical, hashlib.sha256).hexdigest()
    return None if hmac.compare_digest(expected, given) else f'no match over {signed_path(url)}'
