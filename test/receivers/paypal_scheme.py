"""PayPal's webhook signature for webhook_receiver.py, as PayPal's docs tell a receiver to verify one
offline (developer.paypal.com/api/rest/webhooks/rest/, "Verify the signature"): the certificate
fetched from PAYPAL-CERT-URL only when that URL is https on PayPal's host — in hookdrill's test
mode the host HOOKDRILL_CERT_HOST names (hookdrill serves it; trusted through SSL_CERT_FILE) — then
an RSA SHA-256 signature (PAYPAL-AUTH-ALGO SHA256withRSA, PKCS#1 v1.5) over
`<transmission id>|<transmission time>|<webhook id>|<CRC-32 of the raw body, decimal unsigned>`,
checked with Python's `cryptography` package. A receiver dedupes on the event's id (WH-…), the same
on every retry; the transmission id is new for every attempt.

Flaws:
  paypal-any-cert-host   fetches the certificate from any https URL: a delivery signed with an
                         attacker's key whose PAYPAL-CERT-URL is on the attacker's host verifies
  paypal-crc-reserialized  computes the CRC-32 over the body parsed and written again (json.dumps),
                         not the bytes that came: no PayPal body comes out the same, nothing verifies
  paypal-transmission-key  keys its store on PAYPAL-TRANSMISSION-ID, which PayPal makes new for every
                         attempt: a retried event is stored again
"""
import base64, json, os, urllib.parse, urllib.request, zlib

CERTS = {}


def pinned_host():
    # In production: api.paypal.com (api.sandbox.paypal.com). In hookdrill's test mode: the host it serves.
    return (os.environ.get('HOOKDRILL_CERT_HOST') or '127.0.0.1:9444').lower()


def on_pinned_host(url, flaw=''):
    u = urllib.parse.urlsplit(url or '')
    if u.scheme != 'https':
        return False
    if flaw == 'paypal-any-cert-host':
        return True
    return u.netloc.lower() == pinned_host() and not u.username


def certificate(url):
    if url not in CERTS:
        with urllib.request.urlopen(url, timeout=5) as res:
            CERTS[url] = res.read()
    return CERTS[url]


def verify(h, body, webhook_id, flaw=''):
    """None when the delivery is PayPal's; otherwise why not. webhook_id: the receiver's own (bytes)."""
    from cryptography import x509
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding
    tid, time, sig = list((h.get('PAYPAL-TRANSMISSION-ID'), h.get('PAYPAL-TRANSMISSION-TIME'), h.get('PAYPAL-TRANSMISSION-SIG')))
    url = h.get('PAYPAL-CERT-URL')
    if not (tid and time and sig and url):
        return 'missing PAYPAL-* headers'
    if (h.get('PAYPAL-AUTH-ALGO') or 'SHA256withRSA') != 'SHA256withRSA':
        return 'unknown PAYPAL-AUTH-ALGO'
    if not on_pinned_host(url, flaw):
        return 'PAYPAL-CERT-URL is not on PayPal\'s host'
    signed = body
    if flaw == 'paypal-crc-reserialized':
        try:
            signed = json.dumps(json.loads(body)).encode()
        except ValueError:
            return 'not JSON'
    crc = zlib.crc32(signed) & 0xffffffff
    text = f'{tid}|{time}|{webhook_id.decode()}|{crc}'.encode()
    try:
        cert = x509.load_pem_x509_certificate(certificate(url))
        cert.public_key().verify(base64.b64decode(sig, validate=True), text, padding.PKCS1v15(), hashes.SHA256())
    except (InvalidSignature, ValueError, OSError):
        return 'invalid signature'
    return None


def identify(h, event, flaw=''):
    """The event's id (WH-…), the same on every retry; its type."""
    if flaw == 'paypal-transmission-key':
        return h.get('PAYPAL-TRANSMISSION-ID'), event.get('event_type')
    return event.get('id'), event.get('event_type')
