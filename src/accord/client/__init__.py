"""The A2A client: find an agent by its card and talk to it over JSON-RPC (async and sync)."""

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
