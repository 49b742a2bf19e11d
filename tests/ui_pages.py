"""Helpers of the UI tests: serving agents and a UI knowing them, and talking to them in a page."""

from __future__ import annotations

from contextlib import ExitStack
from typing import Any

from playwright.sync_api import Page, expect

from accord import Agent, create_app
from accord.ui import create_ui_app
from live_server import serve_app


def serve_ui(stack: ExitStack, *agents: Agent | str) -> str:
    """Serve each agent (or use the URL given) and a UI knowing them; the UI's URL."""
    urls = [
        a if isinstance(a, str) else stack.enter_context(serve_app(create_app(a))) for a in agents
    ]
    return stack.enter_context(serve_app(create_ui_app(urls)))


def start_conversation(page: Page, ui: str, text: str) -> None:
    page.goto(ui + "/")
    expect(page.locator("[name=agent] option")).not_to_have_count(0)
    page.fill("[name=message]", text)
    page.click("form.composer button")


def turns(page: Page) -> Any:
    return page.locator("[data-turn]")
