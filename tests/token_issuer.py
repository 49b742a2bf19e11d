"""A real OAuth 2.0 / OpenID Connect token issuer for tests: keys generated at test time, its
discovery document, JWKS and token endpoint (client credentials) served on loopback."""

from __future__ import annotations

import base64
import json
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import parse_qs

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from jwt.algorithms import ECAlgorithm, RSAAlgorithm
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from live_server import serve_app

AUDIENCE = "https://agent.example.com"


class TokenIssuer:
    """Signs tokens with an EC (ES256) or RSA (RS256) key it made; `url` is its issuer URL.

    Its token endpoint grants the client `clients` names (id -> secret) a token for the
    scopes asked, valid `token_lifetime` seconds, and counts what it issued.
    """

    def __init__(self) -> None:
        self.url = ""
        self.keys: dict[str, tuple[Any, str]] = {
            "ec-1": (ec.generate_private_key(ec.SECP256R1()), "ES256"),
            "rsa-1": (rsa.generate_private_key(public_exponent=65537, key_size=2048), "RS256"),
        }
        self.published = set(self.keys)
        self.clients = {"robot": "robot-secret"}
        self.token_lifetime = 300
        self.issued = 0
        self.active: set[str] = set()
        """The tokens the token endpoint issued and nobody revoked."""
        self.jwks_fetches = 0
        self.discovery_fetches = 0

    @property
    def discovery_url(self) -> str:
        return f"{self.url}/.well-known/openid-configuration"

    @property
    def jwks_url(self) -> str:
        return f"{self.url}/jwks.json"

    @property
    def token_url(self) -> str:
        return f"{self.url}/token"

    def add_key(self, kid: str) -> None:
        """A new EC key, published from now on (a rotation)."""
        self.keys[kid] = (ec.generate_private_key(ec.SECP256R1()), "ES256")
        self.published.add(kid)

    def token(
        self,
        subject: str = "alice",
        *,
        audience: str | None = AUDIENCE,
        scopes: tuple[str, ...] = ("a2a",),
        expires_in: float = 300,
        kid: str = "ec-1",
        issuer: str | None = None,
        **claims: Any,
    ) -> str:
        """A signed access token (`expires_in` < 0: already expired)."""
        now = int(time.time())
        payload: dict[str, Any] = {
            "iss": issuer or self.url,
            "sub": subject,
            "iat": now,
            "exp": now + int(expires_in),
            "scope": " ".join(scopes),
            **claims,
        }
        if audience is not None:
            payload["aud"] = audience
        key, algorithm = self.keys[kid]
        return jwt.encode(payload, key, algorithm=algorithm, headers={"kid": kid})

    def app(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/.well-known/openid-configuration", self._discovery),
                Route("/jwks.json", self._jwks),
                Route("/token", self._token, methods=["POST"]),
            ]
        )

    async def _discovery(self, request: Request) -> Response:
        self.discovery_fetches += 1
        return JSONResponse(
            {
                "issuer": self.url,
                "jwks_uri": self.jwks_url,
                "token_endpoint": self.token_url,
                "grant_types_supported": ["client_credentials"],
            }
        )

    async def _jwks(self, request: Request) -> Response:
        self.jwks_fetches += 1
        keys = []
        for kid in sorted(self.published):
            key, algorithm = self.keys[kid]
            codec = ECAlgorithm if algorithm == "ES256" else RSAAlgorithm
            jwk = json.loads(codec.to_jwk(key.public_key()))
            keys.append({**jwk, "kid": kid, "use": "sig", "alg": algorithm})
        return JSONResponse({"keys": keys})

    async def _token(self, request: Request) -> Response:
        form = {k: v[0] for k, v in parse_qs((await request.body()).decode()).items()}
        client_id, secret = str(form.get("client_id", "")), str(form.get("client_secret", ""))
        if request.headers.get("authorization", "").startswith("Basic "):
            decoded = base64.b64decode(request.headers["authorization"][6:]).decode()
            client_id, _, secret = decoded.partition(":")
        if form.get("grant_type") != "client_credentials":
            return JSONResponse({"error": "unsupported_grant_type"}, 400)
        if self.clients.get(client_id) != secret:
            return JSONResponse({"error": "invalid_client"}, 401)
        scopes = tuple(str(form.get("scope", "")).split())
        self.issued += 1
        token = self.token(client_id, scopes=scopes, expires_in=self.token_lifetime)
        self.active.add(token)
        return JSONResponse(
            {"access_token": token, "token_type": "Bearer", "expires_in": self.token_lifetime}
        )


@contextmanager
def running_issuer() -> Iterator[TokenIssuer]:
    """A TokenIssuer served on loopback."""
    issuer = TokenIssuer()
    with serve_app(issuer.app()) as url:
        issuer.url = url
        yield issuer
