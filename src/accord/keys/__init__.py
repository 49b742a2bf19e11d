"""Keys: fetching and caching the public keys other parties publish as a JWKS."""

from accord.keys.jwks_client import JwksClient, JwksError

__all__ = ["JwksClient", "JwksError"]
