"""Amazon SNS for webhook_receiver.py, as AWS's docs tell a receiver to verify a message
(docs.aws.amazon.com/sns/latest/dg/sns-verify-signature-of-message.html): the certificate fetched
from SigningCertURL only when that URL is https, ends in .pem and is on SNS's host — which in
hookdrill's test mode is the host HOOKDRILL_SNS_HOST names (hookdrill serves it; trusted through
SSL_CERT_FILE, hookdrill's certificate) — then the RSA signature (SHA1 for SignatureVersion 1,
SHA256 for 2) over the named fields, checked with Python's `cryptography` package. A
SubscriptionConfirmation is confirmed by a GET of its SubscribeURL, on the same pinned host.

Flaws:
  sns-any-cert-host  fetches the certificate from any https .pem URL: a message signed with an
                     attacker's key whose SigningCertURL is on the attacker's host verifies
  sns-no-confirm     verifies a SubscriptionConfirmation and answers it 200, but never visits its
                     SubscribeURL: the subscription stays pending
  sns-confirm-first  visits a SubscriptionConfirmation's SubscribeURL as soon as it arrives, before
                     verifying it (then verifies, and refuses a forged one — too late)
"""
import base64, json, os, urllib.parse, urllib.request

CERTS = {}
NOTIFICATION = ['Message', 'MessageId', 'Subject', 'Timestamp', 'TopicArn', 'Type']
CONFIRMATION = ['Message', 'MessageId', 'SubscribeURL', 'Timestamp', 'Token', 'TopicArn', 'Type']


def pinned_host():
    # In production: sns.<region>.amazonaws.com. In hookdrill's test mode: the host it serves.
    return (os.environ.get('HOOKDRILL_SNS_HOST') or '127.0.0.1:9443').lower()


def on_pinned_host(url, flaw=''):
    u = urllib.parse.urlsplit(url if isinstance(url, str) else '')
    if u.scheme != 'https':
        return False
    if flaw == 'sns-any-cert-host':
        return True
    return u.netloc.lower() == pinned_host() and not u.username


def string_to_sign(message):
    keys = CONFIRMATION if message.get('Type') in ('SubscriptionConfirmation', 'UnsubscribeConfirmation') else NOTIFICATION
    return ''.join(f'{k}\n{message[k]}\n' for k in keys if message.get(k) is not None).encode()


def certificate(url):
    if url not in CERTS:
        with urllib.request.urlopen(url, timeout=5) as res:
            CERTS[url] = res.read()
    return CERTS[url]


def verify(body, flaw=''):
    """None when the message is SNS's; otherwise why not."""
    from cryptography import x509
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import padding
    try:
        message = json.loads(body)
    except ValueError:
        return 'not JSON'
    if not isinstance(message, dict) or not isinstance(message.get('Signature'), str):
        return 'no Signature'
    digest = {'1': hashes.SHA1(), '2': hashes.SHA256()}.get(message.get('SignatureVersion'))
    if digest is None:
        return 'unknown SignatureVersion'
    url = message.get('SigningCertURL')
    if not on_pinned_host(url, flaw) or not urllib.parse.urlsplit(url).path.endswith('.pem'):
        return 'SigningCertURL is not on the SNS host'
    try:
        cert = x509.load_pem_x509_certificate(certificate(url))
        cert.public_key().verify(base64.b64decode(message['Signature']), string_to_sign(message), padding.PKCS1v15(), digest)
    except (InvalidSignature, ValueError, OSError):
        return 'invalid signature'
    return None


def confirm_early(body, flaw=''):
    """sns-confirm-first: the SubscribeURL of anything that looks like a confirmation, visited unverified."""
    if flaw != 'sns-confirm-first':
        return
    try:
        message = json.loads(body)
        if message.get('Type') == 'SubscriptionConfirmation':
            urllib.request.urlopen(message['SubscribeURL'], timeout=5).close()
    except (ValueError, KeyError, AttributeError, OSError):
        pass


def confirm(message, flaw=''):
    """A verified SubscriptionConfirmation: its SubscribeURL visited (on the pinned host). True when done."""
    if flaw == 'sns-no-confirm':
        return True
    url = message.get('SubscribeURL')
    if not on_pinned_host(url):
        return False
    with urllib.request.urlopen(url, timeout=5) as res:
        return 200 <= res.status < 300
