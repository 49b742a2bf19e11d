"""accord's gateway: any A2A agent served by accord, in every version and binding it speaks.

`accord.gateway(upstream_url)` is an `Agent` whose executor relays each call to the agent at
`upstream_url` with accord's client (docs/gateway.md); the server it is served by gives it
the rest: every version and binding, the task store (resubscribing with replay), push
notifications, `Security` and limits. `accord.gateway.several(urls)` is one in front of
several agents, routing each call by skill (`SkillRouter`).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from types import ModuleType
from typing import Any

from accord.agents import Agent
from accord.agents.agent import DeclaresSecurity
from accord.client import SyncClient
from accord.client.credentials import Credential, Credentials
from accord.gateway.card import gateway_agent
from accord.gateway.executor import GatewayExecutor
from accord.gateway.several import several
from accord.gateway.upstream import Upstream
from accord.types import AgentCard


def gateway(
    upstream_url: str,
    *,
    card: AgentCard | None = None,
    name: str | None = None,
    credentials: Credentials | Sequence[Credential] | None = None,
    transport: str | None = None,
    version: str | None = None,
    security: DeclaresSecurity | None = None,
    push_notifications: bool = True,
) -> Agent:
    """An `Agent` relaying every call to the agent at `upstream_url`.

    Its card takes the upstream's name (or `name`), skills, modes and extensions from the
    upstream's `card` (fetched now when not given); the upstream is called with the gateway's
    own `credentials`, over its interface of `transport` and `version` (by default the first
    its card offers that accord speaks). `security` (`accord.auth.Security`) is what callers
    of the gateway present; `push_notifications` whether the gateway sends webhooks.
    """
    if card is None:
        with SyncClient(upstream_url, credentials=credentials) as client:
            card = client.get_card()
    upstream = Upstream(
        upstream_url, card, credentials=credentials, transport=transport, version=version
    )
    return gateway_agent(
        GatewayExecutor(upstream),
        card,
        name=name,
        security=security,
        push_notifications=push_notifications,
    )


class _Gateway(ModuleType):
    """`accord.gateway` is this package and, called, `gateway`."""

    def __call__(self, upstream_url: str, **options: Any) -> Agent:
        return gateway(upstream_url, **options)


sys.modules[__name__].__class__ = _Gateway

__all__ = ["GatewayExecutor", "Upstream", "gateway", "gateway_agent", "several"]
