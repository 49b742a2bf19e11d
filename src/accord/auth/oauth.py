"""OAuth 2.0 and OpenID Connect schemes: JWT access tokens, their keys published or discovered."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from accord.auth.discovery import Discovery
from accord.auth.http import authorization, bearer_challenge
from accord.auth.scheme import Scheme, not_empty
from accord.auth.tokens import ASYMMETRIC_ALGORITHMS, JwtCheck
from accord.core import Inbound, Principal
from accord.types import (
    ClientCredentialsOAuthFlow,
    OAuth2SecurityScheme,
    OAuthFlows,
    OpenIdConnectSecurityScheme,
    SecurityScheme,
)


class _BearerJwt(Scheme):
    """A scheme whose credential is a JWT sent as a Bearer token."""

    check: JwtCheck

    def challenge(self, error: str | None = None) -> str:
        return bearer_challenge(error)

    async def authenticate(self, inbound: Inbound) -> Principal | None:
        token = authorization(inbound, "Bearer")
        return None if token is None else await self.check.principal(token, self.name)


class OAuth2(_BearerJwt):
    """OAuth 2.0 with JWT access tokens, sent as Bearer tokens.

    The card declares the client-credentials flow at `token_url` with `scopes` (name ->
    what it allows), or the `flows` given. Tokens are verified against the keys at
    `jwks_url` or, with `metadata_url` (RFC 8414), the keys and issuer it names; `issuer`
    is checked when set, `audience` (this agent's resource identifier) unless None. The
    caller's scopes are the token's.
    """

    def __init__(
        self,
        *,
        token_url: str | None = None,
        scopes: Mapping[str, str] | None = None,
        flows: OAuthFlows | None = None,
        jwks_url: str | None = None,
        metadata_url: str | None = None,
        issuer: str | None = None,
        audience: str | Sequence[str] | None,
        leeway: float = 30.0,
        algorithms: Sequence[str] = ASYMMETRIC_ALGORITHMS,
        name: str = "oauth2",
        description: str | None = None,
    ) -> None:
        if (jwks_url is None) == (metadata_url is None):
            raise ValueError("give OAuth2 either jwks_url or metadata_url")
        if (flows is None) == (token_url is None):
            raise ValueError("give OAuth2 either a token_url (client credentials) or its flows")
        self.name = name
        self.description = description
        self.metadata_url = metadata_url
        self.flows = flows or OAuthFlows(
            client_credentials=ClientCredentialsOAuthFlow(
                token_url=not_empty(str(token_url), "OAuth2's token_url"),
                scopes=dict(scopes or {}),
            )
        )
        keys: str | Discovery
        expected: str | Discovery | None = issuer
        if metadata_url is not None:
            keys = Discovery(metadata_url)
            expected = issuer if issuer is not None else keys
        else:
            assert jwks_url is not None
            keys = jwks_url
        self.check = JwtCheck(
            keys, issuer=expected, audience=audience, leeway=leeway, algorithms=algorithms
        )

    def card_entry(self) -> SecurityScheme:
        return OAuth2SecurityScheme(
            flows=self.flows, oauth2_metadata_url=self.metadata_url, description=self.description
        )


class OpenIdConnect(_BearerJwt):
    """OpenID Connect: Bearer JWTs from the provider whose discovery document is at `url`
    (its `jwks_uri` gives the keys, cached and refetched for an unknown key id; its `issuer`
    the issuer tokens must name). `audience` is this agent's client id or resource. A token
    naming an unknown key refetches the keys at most once per `key_refresh_interval` s."""

    def __init__(
        self,
        url: str,
        *,
        audience: str | Sequence[str] | None,
        leeway: float = 30.0,
        key_refresh_interval: float = 30.0,
        algorithms: Sequence[str] = ASYMMETRIC_ALGORITHMS,
        name: str = "oidc",
        description: str | None = None,
    ) -> None:
        self.name = name
        self.description = description
        self.url = url
        discovery = Discovery(url, key_refresh_interval=key_refresh_interval)
        self.check = JwtCheck(
            discovery, issuer=discovery, audience=audience, leeway=leeway, algorithms=algorithms
        )

    def card_entry(self) -> SecurityScheme:
        return OpenIdConnectSecurityScheme(
            open_id_connect_url=self.url, description=self.description
        )
