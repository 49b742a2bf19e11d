"""The credentials the CLI presents to agents: global options and ACCORD_* variables."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from accord.client import Credentials

HINT = (
    "give credentials before the command: accord --api-key KEY | --bearer TOKEN |"
    " --basic USER:PASS | --client-id ID --client-secret SECRET | --cert FILE [--key FILE]"
    " (or ACCORD_API_KEY, ACCORD_BEARER, ACCORD_BASIC, ACCORD_CLIENT_ID, ACCORD_CLIENT_SECRET,"
    " ACCORD_CERT, ACCORD_KEY); `accord card URL --json` shows the agent's securitySchemes"
)

# None until an option names one: a command that talks to no agent never loads the client.
_given: Credentials | None = None


def given() -> Credentials:
    """The credentials the options named (none: the CLI still reads what the card asks for,
    and says so before sending anything)."""
    from accord.client import Credentials

    return _given if _given is not None else Credentials()


def _option(name: str, env: str, help: str) -> Any:
    return typer.Option(name, envvar=env, help=help, show_default=False)


# The root command's options (before the command: `accord --api-key KEY send ...`).
ApiKeyOption = Annotated[
    str | None, _option("--api-key", "ACCORD_API_KEY", "API key (sent where the card says).")
]
BearerOption = Annotated[
    str | None, _option("--bearer", "ACCORD_BEARER", "Bearer token (opaque or a JWT).")
]
BasicOption = Annotated[
    str | None, _option("--basic", "ACCORD_BASIC", "USER:PASSWORD for HTTP Basic.")
]
ClientIdOption = Annotated[
    str | None,
    _option("--client-id", "ACCORD_CLIENT_ID", "OAuth 2.0 client id (client credentials)."),
]
ClientSecretOption = Annotated[
    str | None, _option("--client-secret", "ACCORD_CLIENT_SECRET", "OAuth 2.0 client secret.")
]
ScopeOption = Annotated[
    str | None,
    _option("--scope", "ACCORD_SCOPE", "OAuth 2.0 scopes to ask for (space-separated)."),
]
CertOption = Annotated[
    str | None, _option("--cert", "ACCORD_CERT", "Client certificate (PEM) for mutual TLS.")
]
KeyOption = Annotated[
    str | None, _option("--key", "ACCORD_KEY", "The client certificate's key (PEM).")
]
CaOption = Annotated[
    str | None, _option("--ca", "ACCORD_CA", "CA bundle (PEM) to verify the agent's TLS.")
]


def remember(
    api_key: str | None = None,
    bearer: str | None = None,
    basic: str | None = None,
    client_id: str | None = None,
    client_secret: str | None = None,
    scope: str | None = None,
    cert: str | None = None,
    key: str | None = None,
    ca: str | None = None,
) -> None:
    """Keep the credentials the root options named for the command that follows."""
    global _given
    _given = None
    if not any((api_key, bearer, basic, client_id, client_secret, cert, key, ca)):
        return
    from accord.client import (
        ApiKey,
        BasicAuth,
        BearerToken,
        ClientCertificate,
        ClientCredentials,
        Credential,
        Credentials,
    )

    found: list[Credential] = []
    if api_key:
        found.append(ApiKey(api_key))
    if bearer:
        found.append(BearerToken(bearer))
    if basic:
        user, colon, password = basic.partition(":")
        if not colon:
            raise typer.BadParameter("expected USER:PASSWORD", param_hint="--basic")
        found.append(BasicAuth(user, password))
    if client_id or client_secret:
        if not (client_id and client_secret):
            raise typer.BadParameter("give both --client-id and --client-secret")
        scopes = scope.split() if scope else None
        found.append(ClientCredentials(client_id, client_secret, scopes=scopes))
    if cert:
        found.append(ClientCertificate(cert, key))
    elif key:
        raise typer.BadParameter("--key goes with --cert")
    _given = Credentials(*found, ca=ca)
