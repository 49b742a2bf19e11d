"""The A2A client: find an agent by its card and talk to it over JSON-RPC (async and sync)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from accord.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from accord.client.activated import activated_extensions
    from accord.client.card_resolver import WELL_KNOWN_PATHS, card_urls, fetch_card, parse_card
    from accord.client.client import DEFAULT_TIMEOUT, Client
    from accord.client.credentials import (
        ApiKey,
        BasicAuth,
        BearerToken,
        ClientCertificate,
        ClientCredentials,
        Credential,
        Credentials,
    )
    from accord.client.event_stream import EventStream, SyncEventStream
    from accord.client.registry import RegistryClient
    from accord.client.sync_client import SyncClient

# Each name is imported from its module on first use, so that importing one module of the
# package (`accord.client.credentials`, as the server's CLI does) loads only that module.
_WHERE = {
    "DEFAULT_TIMEOUT": "accord.client.client",
    "WELL_KNOWN_PATHS": "accord.client.card_resolver",
    "ApiKey": "accord.client.credentials",
    "BasicAuth": "accord.client.credentials",
    "BearerToken": "accord.client.credentials",
    "Client": "accord.client.client",
    "ClientCertificate": "accord.client.credentials",
    "ClientCredentials": "accord.client.credentials",
    "Credential": "accord.client.credentials",
    "Credentials": "accord.client.credentials",
    "EventStream": "accord.client.event_stream",
    "RegistryClient": "accord.client.registry",
    "SyncClient": "accord.client.sync_client",
    "SyncEventStream": "accord.client.event_stream",
    "activated_extensions": "accord.client.activated",
    "card_urls": "accord.client.card_resolver",
    "fetch_card": "accord.client.card_resolver",
    "parse_card": "accord.client.card_resolver",
}

__all__ = [
    "DEFAULT_TIMEOUT",
    "WELL_KNOWN_PATHS",
    "ApiKey",
    "BasicAuth",
    "BearerToken",
    "Client",
    "ClientCertificate",
    "ClientCredentials",
    "Credential",
    "Credentials",
    "EventStream",
    "RegistryClient",
    "SyncClient",
    "SyncEventStream",
    "activated_extensions",
    "card_urls",
    "fetch_card",
    "parse_card",
]


__getattr__ = lazy_exports(__name__, _WHERE)


def __dir__() -> list[str]:
    return __all__
