"""Credentials written as a JSON object (a host's registry entry, the web UI's form)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from accord.client.credentials import (
    ApiKey,
    BasicAuth,
    BearerToken,
    ClientCertificate,
    ClientCredentials,
    Credential,
    Credentials,
)

SETTINGS = (
    "apiKey",
    "bearer",
    "basic",
    "clientId",
    "clientSecret",
    "tokenUrl",
    "scopes",
    "cert",
    "key",
    "ca",
)
"""The keys of a credentials object: `{"apiKey": KEY}`, `{"bearer": TOKEN}`,
`{"basic": "USER:PASSWORD"}` (or `{"user": ..., "password": ...}`), `{"clientId": ID,
"clientSecret": SECRET, "tokenUrl"?: URL, "scopes"?: "a b"}`, `{"cert": PEM, "key"?: PEM}`,
`{"ca": PEM}`; several may be given, and the card says which are sent."""


class CredentialSettingsError(ValueError):
    """A credentials object that cannot be used; the message says why, in words."""


def credential_settings(data: object) -> dict[str, str]:
    """`data` checked as a credentials object (see `SETTINGS`): its non-empty settings;
    CredentialSettingsError naming what is wrong."""
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise CredentialSettingsError(
            'give credentials as a JSON object, e.g. {"apiKey": "..."} or {"bearer": "..."}'
        )
    unknown = [key for key in data if key not in SETTINGS]
    if unknown:
        raise CredentialSettingsError(
            f"unknown credential setting {unknown[0]!r}; known: {', '.join(SETTINGS)}"
        )
    settings: dict[str, str] = {}
    for key, value in data.items():
        if isinstance(value, Mapping) and key == "basic":
            value = _basic_pair(value)
        if not isinstance(value, str):
            raise CredentialSettingsError(f"the credential setting {key!r} must be text")
        if value:
            settings[key] = value
    if ("clientId" in settings) != ("clientSecret" in settings):
        raise CredentialSettingsError("give clientId and clientSecret together")
    if "basic" in settings and ":" not in settings["basic"]:
        raise CredentialSettingsError('give basic as "USER:PASSWORD"')
    if "key" in settings and "cert" not in settings:
        raise CredentialSettingsError("a key goes with a client certificate: give cert too")
    return settings


def credentials_from_settings(data: object) -> Credentials | None:
    """The `Credentials` a credentials object gives (None when it gives none);
    CredentialSettingsError when it cannot be used."""
    settings = credential_settings(data)
    given: list[Credential] = []
    if "apiKey" in settings:
        given.append(ApiKey(settings["apiKey"]))
    if "bearer" in settings:
        given.append(BearerToken(settings["bearer"]))
    if "basic" in settings:
        user, _, password = settings["basic"].partition(":")
        given.append(BasicAuth(user, password))
    if "clientId" in settings:
        scopes = settings.get("scopes")
        given.append(
            ClientCredentials(
                settings["clientId"],
                settings["clientSecret"],
                token_url=settings.get("tokenUrl"),
                scopes=scopes.split() if scopes else None,
            )
        )
    if "cert" in settings:
        given.append(ClientCertificate(settings["cert"], settings.get("key")))
    if not given and "ca" not in settings:
        return None
    return Credentials(*given, ca=settings.get("ca"))


def described(settings: Mapping[str, Any]) -> list[str]:
    """Which settings a credentials object holds, never their values (for lists shown back)."""
    return [key for key in SETTINGS if settings.get(key)]


def _basic_pair(value: Mapping[str, Any]) -> object:
    user, password = value.get("user"), value.get("password")
    if not isinstance(user, str) or not isinstance(password, str):
        raise CredentialSettingsError('give basic as {"user": "...", "password": "..."}')
    return f"{user}:{password}"
