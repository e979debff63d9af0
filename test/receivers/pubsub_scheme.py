"""Google Cloud Pub/Sub push's authentication, for webhook_receiver.py: the OIDC ID token in
`Authorization: Bearer <JWT>` verified as Google's docs ask (cloud.google.com/pubsub/docs/
authenticate-push-subscriptions) — the RS256 signature with the key its `kid` names, fetched from
the JWKS Google serves (here hookdrill's local stand-in: $PUBSUB_JWKS_URL, else
http://127.0.0.1:$HOOKDRILL_JWKS_PORT/oauth2/v3/certs, port 9477 by default), the issuer
(accounts.google.com), the expiry (300 s of clock skew, as google-auth-library allows) and the
audience (the push endpoint's URL). Python's standard library has no JWT: the signature is checked
with `cryptography` (RSA PKCS#1 v1.5, SHA-256), as a user without a JWT library would.

Flaws, each one check left out:
  jwt-any-audience  aud not checked (any token the key signed, for any service, is taken)
  jwt-no-expiry     exp and iat not checked (a captured request replays for ever)
  jwt-no-iat        exp checked, iat not (a token issued in the future is taken)
  jwt-any-issuer    iss not checked
  jwt-unverified    the token decoded and its claims checked, its signature never verified
"""
import base64, binascii, json, os, time, urllib.request

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

ISSUERS = ('accounts.google.com', 'https://accounts.google.com')
SKEW = 300
_keys = {}


def jwks_url():
    return os.environ.get('PUBSUB_JWKS_URL') or f"http://127.0.0.1:{os.environ.get('HOOKDRILL_JWKS_PORT') or 9477}/oauth2/v3/certs"


def b64url(text):
    return base64.urlsafe_b64decode(text + '=' * (-len(text) % 4))


def key_for(kid):
    """The public key a kid names; the JWKS fetched again for a kid not seen (keys rotate)."""
    if kid not in _keys:
        try:
            with urllib.request.urlopen(jwks_url(), timeout=5) as r:
                for k in json.load(r).get('keys', []):
                    # Only RSA keys can sign RS256: another kind in the set (an EC key the key
                    # server holds for Plaid) is not Google's, and is passed over, as verifiers do.
                    if k.get('kty') != 'RSA':
                        continue
                    n, e = int.from_bytes(b64url(k['n']), 'big'), int.from_bytes(b64url(k['e']), 'big')
                    _keys[k.get('kid')] = rsa.RSAPublicNumbers(e, n).public_key()
        except (OSError, ValueError, KeyError):
            # No keys to be had: every token is refused, as a verifier that cannot fetch them does.
            return None
    return _keys.get(kid)


def verify(authorization, audience, flaw=''):
    """None when the token is Google's, for this endpoint, in time; otherwise why not."""
    parts = authorization.split(None, 1)
    if len(parts) != 2 or parts[0].lower() != 'bearer':
        return 'no Bearer token'
    segments = parts[1].strip().split('.')
    if len(segments) != 3:
        return 'not a JWT'
    try:
        header, claims = json.loads(b64url(segments[0])), json.loads(b64url(segments[1]))
        signature = b64url(segments[2])
    except (ValueError, binascii.Error):
        return 'not a JWT'
    if not isinstance(header, dict) or not isinstance(claims, dict) or header.get('alg') != 'RS256':
        return 'not an RS256 JWT'
    key = key_for(header.get('kid'))
    if key is None:
        return 'signed by an unknown key'
    if flaw != 'jwt-unverified':
        try:
            key.verify(signature, f'{segments[0]}.{segments[1]}'.encode(), padding.PKCS1v15(), hashes.SHA256())
        except InvalidSignature:
            return 'bad signature'
    now = time.time()
    if flaw != 'jwt-any-issuer' and claims.get('iss') not in ISSUERS:
        return 'wrong issuer'
    if flaw != 'jwt-no-expiry':
        exp, iat = claims.get('exp'), claims.get('iat')
        if not isinstance(exp, (int, float)) or now > exp + SKEW:
            return 'expired'
        if flaw != 'jwt-no-iat' and (not isinstance(iat, (int, float)) or iat > now + SKEW):
            return 'issued in the future'
    if flaw != 'jwt-any-audience':
        aud = claims.get('aud')
        if audience not in (aud if isinstance(aud, list) else [aud]):
            return 'wrong audience'
    return None
