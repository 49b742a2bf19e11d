"""The credentials the CLI presents to agents: global options and ACCORD_* variables."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Annotated, Any

import typer

if TYPE_CHECKING:
    from accord.client import Credentials

HINT = (
    "give credentials, before or after the command: --api-key KEY | --bearer TOKEN |"
    " --basic USER:PASS | --client-id ID --client-secret SECRET | --cert FILE [--key FILE]"
    " (or ACCORD_API_KEY, ACCORD_BEARER, ACCORD_BASIC, ACCORD_CLIENT_ID, ACCORD_CLIENT_SECRET,"
    " ACCORD_CERT, ACCORD_KEY); `accord card URL` shows what the agent asks for"
)

# The credentials the options named, by option (the root's, then the command's over them);
# none named: a command that talks to no agent never loads the client.
_values: dict[str, str] = {}

NAMES = ("api_key", "bearer", "basic", "client_id", "client_secret", "scope", "cert", "key", "ca")
"""The credential options, as parameters."""


def given() -> Credentials:
    """The credentials the options named (none: the CLI still reads what the card asks for,
    and says so before sending anything). Named ones go to the agent even when its card
    declares no scheme (`Credentials(undeclared=True)`)."""
    from accord.client import Credentials

    return _credentials(_values) if _values else Credentials()


def _option(name: str, env: str, help: str, metavar: str) -> Any:
    return typer.Option(name, envvar=env, help=help, show_default=False, metavar=metavar)


# The root command's options (before the command: `accord --api-key KEY send ...`); every
# command that talks to an agent takes them too (`accord send URL hi --api-key KEY`).
ApiKeyOption = Annotated[
    str | None,
    _option(
        "--api-key",
        "ACCORD_API_KEY",
        "API key (sent where the card says; in X-API-Key if it says nothing).",
        "KEY",
    ),
]
BearerOption = Annotated[
    str | None, _option("--bearer", "ACCORD_BEARER", "Bearer token (opaque or a JWT).", "TOKEN")
]
BasicOption = Annotated[
    str | None, _option("--basic", "ACCORD_BASIC", "USER:PASSWORD for HTTP Basic.", "USER:PASSWORD")
]
ClientIdOption = Annotated[
    str | None,
    _option("--client-id", "ACCORD_CLIENT_ID", "OAuth 2.0 client id (client credentials).", "ID"),
]
ClientSecretOption = Annotated[
    str | None,
    _option("--client-secret", "ACCORD_CLIENT_SECRET", "OAuth 2.0 client secret.", "SECRET"),
]
ScopeOption = Annotated[
    str | None,
    _option("--scope", "ACCORD_SCOPE", "OAuth 2.0 scopes to ask for (space-separated).", "SCOPES"),
]
CertOption = Annotated[
    str | None, _option("--cert", "ACCORD_CERT", "Client certificate (PEM) for mutual TLS.", "FILE")
]
KeyOption = Annotated[
    str | None, _option("--key", "ACCORD_KEY", "The client certificate's key (PEM).", "FILE")
]
CaOption = Annotated[
    str | None, _option("--ca", "ACCORD_CA", "CA bundle (PEM) to verify the agent's TLS.", "FILE")
]


def remember(values: Mapping[str, str | None], *, over: bool = False) -> None:
    """Keep the credentials the options named, by option: the root's for the command that
    follows, or with `over` the command's own (after the command), over the root's."""
    global _values
    named = {name: value for name, value in values.items() if value}
    _values = {**_values, **named} if over else named


def _credentials(values: Mapping[str, str]) -> Credentials:
    from accord.client import (
        ApiKey,
        BasicAuth,
        BearerToken,
        ClientCertificate,
        ClientCredentials,
        Credential,
        Credentials,
    )

    api_key, bearer, basic = values.get("api_key"), values.get("bearer"), values.get("basic")
    client_id, client_secret = values.get("client_id"), values.get("client_secret")
    scope, cert, key, ca = (values.get(name) for name in ("scope", "cert", "key", "ca"))
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
    return Credentials(*found, ca=ca, undeclared=True)
