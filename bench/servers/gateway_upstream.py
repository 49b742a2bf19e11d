"""The official a2a-sdk's echo agent (bench/servers/peer_echo.py) as a gateway's upstream: its
card lists one interface only, A2A 0.3 over JSON-RPC at `UPSTREAM_URL`."""

import os

from a2a.server.request_handlers import DefaultRequestHandler
from a2a.server.routes import create_agent_card_routes, create_jsonrpc_routes
from a2a.server.tasks import InMemoryTaskStore
from a2a.types import AgentCapabilities, AgentCard, AgentInterface, AgentSkill
from peer_echo import EchoTaskExecutor
from starlette.applications import Starlette

card = AgentCard(
    name="Echo",
    description="Repeats what you say.",
    version="1.0.0",
    default_input_modes=["text/plain"],
    default_output_modes=["text/plain"],
    capabilities=AgentCapabilities(streaming=True),
    supported_interfaces=[
        AgentInterface(
            protocol_binding="JSONRPC", protocol_version="0.3", url=os.environ["UPSTREAM_URL"]
        )
    ],
    skills=[AgentSkill(id="echo", name="Echo", description="Repeats.", tags=["echo"])],
)
handler = DefaultRequestHandler(
    agent_executor=EchoTaskExecutor(), task_store=InMemoryTaskStore(), agent_card=card
)
app = Starlette(
    routes=[
        *create_agent_card_routes(card),
        *create_jsonrpc_routes(handler, "/", enable_v0_3_compat=True),
    ]
)
