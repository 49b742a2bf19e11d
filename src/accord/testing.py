"""An agent's tests: a client talking to it in this process, through no port and no socket."""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import Any

import httpx

from accord.agents import Agent
from accord.client import Client, Credential, Credentials
from accord.server import create_app

LOCAL_URL = "http://127.0.0.1"
"""The URL the agent is called at in-process (one of the names its app answers by default)."""


@asynccontextmanager
async def agent_client(
    agent: Agent,
    *,
    headers: Mapping[str, str] | None = None,
    credentials: Credentials | Sequence[Credential] | None = None,
    transport: str | None = None,
    version: str | None = None,
    extensions: Sequence[str] = (),
    **app_options: Any,
) -> AsyncIterator[Client]:
    """A `Client` for `agent`, served by `create_app(agent, **app_options)` in this process.

    The app starts (its store opened: memory unless `store=` says) and stops with the
    block. Calls go through httpx's ASGI transport: a stream's events arrive once the
    stream ends (the task finished or waits for input), not one by one.
    """
    app = create_app(agent, **app_options)
    async with (
        app.router.lifespan_context(app),
        Client(
            LOCAL_URL,
            headers=headers,
            credentials=credentials,
            transport=transport,
            version=version,
            extensions=extensions,
            http_transport=httpx.ASGITransport(app=app),
        ) as client,
    ):
        yield client
