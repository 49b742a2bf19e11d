"""Inbound: the transport-neutral facts of one request, as a binding hands them on."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class ClientCertificate:
    """The certificate a client presented on a TLS connection (mutual TLS)."""

    der: bytes = field(repr=False)
    subject: str
    """The subject as an RFC 4514 string (`CN=alice,O=Example`)."""


@dataclass(slots=True)
class Inbound:
    """What a binding knows about a request before the protocol layer reads it.

    `binding` is the transport (`JSONRPC`, `HTTP+JSON`, `GRPC`); `method` the operation the
    request names in that binding's terms (a JSON-RPC method, `POST /message:send`, an RPC);
    `headers` the HTTP headers or gRPC metadata (case-insensitive lookups); `query` the URL's
    query parameters; `peer` the client's address; `certificate` the client certificate of a
    mutual-TLS connection; `tenant` the tenant the request names, if any.
    """

    binding: str
    method: str
    headers: Mapping[str, str]
    query: Mapping[str, str] = field(default_factory=dict)
    peer: str | None = None
    certificate: ClientCertificate | None = None
    tenant: str | None = None


def tenant_field(fields: Any) -> str | None:
    """The `tenant` member of a request message (A2A 1.0), if it names one."""
    tenant = fields.get("tenant") if isinstance(fields, Mapping) else None
    return tenant if isinstance(tenant, str) and tenant else None
