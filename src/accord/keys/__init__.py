"""Keys: the server's own signing keys (KeyStore), card signatures, and other parties' JWKS."""

from accord.keys.cards import CardSignatureError, StaticKeys, TrustedKeys, sign_card, verify_card
from accord.keys.jwks_client import JwksClient, JwksError, KeySetUnavailable
from accord.keys.store import DEFAULT_KEYS_DIR, KeyStore, KeyStoreError, SigningKey

__all__ = [
    "DEFAULT_KEYS_DIR",
    "CardSignatureError",
    "JwksClient",
    "JwksError",
    "KeySetUnavailable",
    "KeyStore",
    "KeyStoreError",
    "SigningKey",
    "StaticKeys",
    "TrustedKeys",
    "sign_card",
    "verify_card",
]
