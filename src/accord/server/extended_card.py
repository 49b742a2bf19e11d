"""The extended card by HTTP GET (A2A 0.2's path), through the request pipeline like any call."""

from __future__ import annotations

import hashlib

from pydantic_core import to_json
from starlette.requests import Request
from starlette.responses import Response

from accord.codecs import ProtocolVersion
from accord.codecs.base import Method, no_params
from accord.codecs.card import union_card
from accord.codecs.rest import http_status
from accord.core import Inbound
from accord.server.card_endpoint import CACHE_CONTROL, etag_matches
from accord.server.http_request import JSON, error_headers, peer_address
from accord.server.pipeline import RequestPipeline, Target
from accord.server.tls import client_certificate

TARGET = Target(
    Method(lambda s: s.get_extended_card, no_params, lambda card: to_json(union_card(card))),
    ProtocolVersion.V0_3,
    versioned=False,
)
"""The card in the shape every version reads, as the public card is served."""


class ExtendedCardRoute:
    """GET `/agent/authenticatedExtendedCard`: authenticated (and limited, audited) by the
    pipeline as every operation is; errors as `{"error": ...}` with their HTTP status."""

    def __init__(self, pipeline: RequestPipeline) -> None:
        self.pipeline = pipeline

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
            status = 404 if reply.error.code == -32007 else http_status(reply.error)[0]
            return Response(body, status, error_headers(reply.error), media_type=JSON)
        assert reply.body is not None
        etag = '"' + hashlib.sha256(reply.body).hexdigest()[:32] + '"'
        headers = {"ETag": etag, "Cache-Control": CACHE_CONTROL["extended"]}
        if etag_matches(request.headers.get("if-none-match"), etag):
            return Response(status_code=304, headers=headers)
        return Response(reply.body, media_type=JSON, headers=headers)
