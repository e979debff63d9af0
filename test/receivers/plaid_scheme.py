"""Plaid's webhook verification, for webhook_receiver.py, as Plaid's docs write it
(plaid.com/docs/api/webhooks/webhook-verification/): the Plaid-Verification header is a JWT; its
header is decoded unverified and its alg must be ES256; the key its kid names is fetched with
POST /webhook_verification_key/get {client_id, secret, key_id} (here hookdrill's local stand-in:
$PLAID_KEY_URL, else http://127.0.0.1:$HOOKDRILL_JWKS_PORT/webhook_verification_key/get, port 9477
by default) and kept by kid; the JWT's ES256 signature is verified with it; a token whose iat is
more than 5 minutes old is refused; request_body_sha256 is compared with the SHA-256 of the raw
body in constant time. Python's standard library has no JWT: the signature is checked with
`cryptography` (ECDSA P-256, SHA-256; a JWS signature is r || s, 32 bytes each).

Flaws, each one step of the docs left out:
  plaid-no-body-hash  request_body_sha256 never compared (a body changed under a valid token is taken)
  plaid-no-iat        iat never checked (a captured request replays for ever)
  plaid-any-alg       the algorithm taken from the token's header: `none` skips the signature, HS256
                      is an HMAC keyed by the public key's PEM (the classic confusion)
"""
import base64, binascii, hashlib, hmac, json, os, time, urllib.request

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, utils

MAX_AGE = 5 * 60
_keys = {}


def key_url():
    return os.environ.get('PLAID_KEY_URL') or f"http://127.0.0.1:{os.environ.get('HOOKDRILL_JWKS_PORT') or 9477}/webhook_verification_key/get"


def b64url(text):
    return base64.urlsafe_b64decode(text + '=' * (-len(text) % 4))


def key_for(kid):
    """The public key a kid names, fetched from Plaid's API once and kept (the docs: cache by kid)."""
    if kid not in _keys:
        ask = json.dumps({'client_id': os.environ.get('PLAID_CLIENT_ID') or 'hookdrill-client',
                          'secret': os.environ.get('PLAID_SECRET') or 'hookdrill-secret', 'key_id': kid}).encode()
        req = urllib.request.Request(key_url(), data=ask, headers={'Content-Type': 'application/json'}, method='POST')
        try:
            with urllib.request.urlopen(req, timeout=5) as r:
                jwk = json.load(r)['key']
            x, y = int.from_bytes(b64url(jwk['x']), 'big'), int.from_bytes(b64url(jwk['y']), 'big')
            _keys[kid] = ec.EllipticCurvePublicNumbers(x, y, ec.SECP256R1()).public_key()
        except (OSError, ValueError, KeyError, TypeError):
            # An unknown kid (Plaid answers 400) or no key server: the token is refused.
            return None
    return _keys.get(kid)


def verify(token, body, flaw=''):
    """None when the webhook is Plaid's, fresh and of this very body; otherwise why not."""
    segments = (token or '').strip().split('.')
    if len(segments) != 3:
        return 'not a JWT'
    try:
        header, claims = json.loads(b64url(segments[0])), json.loads(b64url(segments[1]))
        signature = b64url(segments[2])
    except (ValueError, binascii.Error):
        return 'not a JWT'
    if not isinstance(header, dict) or not isinstance(claims, dict):
        return 'not a JWT'
    alg = header.get('alg')
    if flaw != 'plaid-any-alg' and alg != 'ES256':
        return 'not ES256'
    key = key_for(header.get('kid'))
    if key is None:
        return 'signed by an unknown key'
    signed = f'{segments[0]}.{segments[1]}'.encode()
    if alg == 'HS256':  # reached with plaid-any-alg only
        pem = key.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        if not hmac.compare_digest(hmac.new(pem, signed, hashlib.sha256).digest(), signature):
            return 'bad signature'
    elif alg != 'none' or flaw != 'plaid-any-alg':
        if len(signature) != 64:
            return 'bad signature'
        der = utils.encode_dss_signature(int.from_bytes(signature[:32], 'big'), int.from_bytes(signature[32:], 'big'))
        try:
            key.verify(der, signed, ec.ECDSA(hashes.SHA256()))
        except InvalidSignature:
            return 'bad signature'
    if flaw != 'plaid-no-iat':
        iat = claims.get('iat')
        if not isinstance(iat, (int, float)) or time.time() - iat > MAX_AGE:
            return 'too old'
    if flaw != 'plaid-no-body-hash':
        said = claims.get('request_body_sha256')
        if not isinstance(said, str) or not hmac.compare_digest(said, hashlib.sha256(body).hexdigest()):
            return 'body hash mismatch'
    return None
