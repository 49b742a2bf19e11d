"""Security schemes an agent card declares (the OpenAPI 3 security scheme objects)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from accord.types._base import A2AModel


class SecuritySchemeBase(A2AModel):
    """What every security scheme carries."""

    description: str | None = None


class APIKeySecurityScheme(SecuritySchemeBase):
    """An API key in a header, query parameter or cookie."""

    type: Literal["apiKey"] = "apiKey"
    name: str
    in_: Literal["cookie", "header", "query"] = Field(alias="in")


class HTTPAuthSecurityScheme(SecuritySchemeBase):
    """HTTP authentication such as Basic or Bearer."""

    type: Literal["http"] = "http"
    scheme: str
    bearer_format: str | None = None


class AuthorizationCodeOAuthFlow(A2AModel):
    """OAuth 2.0 authorization code flow."""

    authorization_url: str
    token_url: str
    scopes: dict[str, str]
    refresh_url: str | None = None


class ClientCredentialsOAuthFlow(A2AModel):
    """OAuth 2.0 client credentials flow."""

    token_url: str
    scopes: dict[str, str]
    refresh_url: str | None = None


class ImplicitOAuthFlow(A2AModel):
    """OAuth 2.0 implicit flow."""

    authorization_url: str
    scopes: dict[str, str]
    refresh_url: str | None = None


class PasswordOAuthFlow(A2AModel):
    """OAuth 2.0 resource owner password flow."""

    token_url: str
    scopes: dict[str, str]
    refresh_url: str | None = None


class OAuthFlows(A2AModel):
    """The OAuth 2.0 flows a scheme supports."""

    authorization_code: AuthorizationCodeOAuthFlow | None = None
    client_credentials: ClientCredentialsOAuthFlow | None = None
    implicit: ImplicitOAuthFlow | None = None
    password: PasswordOAuthFlow | None = None


class OAuth2SecurityScheme(SecuritySchemeBase):
    """OAuth 2.0."""

    type: Literal["oauth2"] = "oauth2"
    flows: OAuthFlows
    oauth2_metadata_url: str | None = None


class OpenIdConnectSecurityScheme(SecuritySchemeBase):
    """OpenID Connect discovery."""

    type: Literal["openIdConnect"] = "openIdConnect"
    open_id_connect_url: str


class MutualTLSSecurityScheme(SecuritySchemeBase):
    """Mutual TLS client certificates."""

    type: Literal["mutualTLS"] = "mutualTLS"


SecurityScheme = Annotated[
    APIKeySecurityScheme
    | HTTPAuthSecurityScheme
    | OAuth2SecurityScheme
    | OpenIdConnectSecurityScheme
    | MutualTLSSecurityScheme,
    Field(discriminator="type"),
]
