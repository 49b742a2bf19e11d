"""The extended card by HTTP GET (A2A 0.2's path), through the request pipeline like any call."""

from __future__ import annotations

from pydantic_core import to_json
from starlette.requests import Request
from starlette.responses import Response

from accord.codecs import ProtocolVersion
from accord.codecs.base import Method, no_params
from accord.codecs.rest import http_status
from accord.core import Inbound
from accord.errors import AuthenticatedExtendedCardNotConfigured
from accord.server.card_endpoint import AgentCardEndpoint
from accord.server.http_request import JSON, error_headers, peer_address
from accord.server.pipeline import RequestPipeline, Target
from accord.server.tls import client_certificate

TARGET = Target(
    Method(lambda s: s.get_extended_card, no_params, lambda card: b""),
    ProtocolVersion.V0_3,
    versioned=False,
)
"""The extended card operation; the card endpoint renders the card once it succeeded."""


class ExtendedCardRoute:
    """GET `/agent/authenticatedExtendedCard`: authenticated (and limited, audited) by the
    pipeline as every operation is, then rendered by the card endpoint (its shapes, ETag and
    Last-Modified); a refusal is `{"error": ...}` with its HTTP status."""

    def __init__(self, pipeline: RequestPipeline, cards: AgentCardEndpoint) -> None:
        self.pipeline = pipeline
        self.cards = cards

    async def endpoint(self, request: Request) -> Response:
        inbound = Inbound(
            "HTTP",
            f"GET {request.url.path}",
            request.headers,
            request.query_params,
            peer=peer_address(request.scope),
            certificate=client_certificate(request.scope),
        )
        reply = await self.pipeline.run(inbound, TARGET, None, base_url=str(request.base_url))
        if reply.error is not None:
            body = to_json({"error": reply.error.to_error_object().to_wire()})
            status = http_status(reply.error)[0]
            if isinstance(reply.error, AuthenticatedExtendedCardNotConfigured):
                status = 404  # a GET of a card that is not there
            return Response(body, status, error_headers(reply.error), media_type=JSON)
        return await self.cards.extended(request)
