"""Helpers of the UI tests: serving agents and a UI knowing them, and talking to them in a page."""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

import httpx
from playwright.sync_api import Page, expect

from accord import Agent, create_app
from accord.ui import create_ui_app
from accord.ui.agents import HostLink
from agents_for_tests import HOST_TOKEN
from live_server import serve_app


def serve_ui(
    stack: ExitStack, *agents: Agent | str, host: Agent | str | None = None, **options: Any
) -> str:
    """Serve each agent (or use the URL given) and a UI knowing them, and the `host` it
    registers agents with (given the token HOST_TOKEN); the UI's URL. `options` go to
    create_ui_app."""
    urls = [serve_agent(stack, agent) for agent in agents]
    if host is not None:
        options["host"] = HostLink(serve_agent(stack, host), HOST_TOKEN)
    return stack.enter_context(serve_app(create_ui_app(urls, **options)))


def serve_agent(stack: ExitStack, agent: Agent | str) -> str:
    """The URL of `agent`, served until `stack` closes (a URL given is used as it is)."""
    return agent if isinstance(agent, str) else stack.enter_context(serve_app(create_app(agent)))


def ui_client(ui: str, timeout: float = 10.0) -> httpx.Client:
    """A client of the UI's JSON API as a script uses it: with the session token it asks for."""
    session = httpx.get(ui + "/api/session").json()["session"]
    return httpx.Client(base_url=ui, headers={"X-Accord-Session": session}, timeout=timeout)


def start_conversation(page: Page, ui: str, text: str, agent: str = "") -> None:
    """Say `text` in a new conversation, with the UI's first agent or the one at `agent`."""
    page.goto(ui + "/" + (f"?agent={agent}" if agent else ""))
    expect(page.locator("[name=agent] option")).not_to_have_count(0)
    page.fill("[name=message]", text)
    page.click("form.composer button")


def turns(page: Page) -> Any:
    return page.locator("[data-turn]")
