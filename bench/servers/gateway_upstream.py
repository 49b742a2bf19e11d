"""The official a2a-sdk's echo agent (bench/servers/peer_echo.py) as a gateway's upstream: its
card lists one interface only, A2A 0.3 over JSON-RPC at `UPSTREAM_URL`."""

import os

from a2a.types import AgentInterface
from peer_echo import EchoTaskExecutor, build_app

only_0_3 = AgentInterface(
    protocol_binding="JSONRPC", protocol_version="0.3", url=os.environ["UPSTREAM_URL"]
)
app = build_app(EchoTaskExecutor(), "Echo", only_0_3)
