"""The UI's Agents page with a registry (`accord ui --registry URL`), in headless Chromium: the
registry's agents shown, searched, and one added to the UI."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import httpx
from playwright.sync_api import Page, expect

from accord.registry import Registry, create_registry_app, open_catalog
from accord.samples import currency, movies
from live_server import serve_app
from registry_cards import CURATOR, security
from ui_pages import serve_agent, serve_ui, ui_client

pytest_plugins = ["ui_browser"]


def registry_of(stack: ExitStack, tmp_path: Path, *agents: str) -> str:
    catalog = open_catalog(f"sqlite:///{tmp_path / 'registry.db'}")
    app = create_registry_app(Registry(catalog), security=security(), checks=False)
    url = stack.enter_context(serve_app(app))
    for agent in agents:
        added = httpx.post(url + "/registry/agents", json={"url": agent}, headers=CURATOR)
        assert added.status_code == 201, added.text
    return url


def test_the_agents_page_shows_searches_and_adds_from_the_registry(
    stack: ExitStack, page: Page, tmp_path: Path
) -> None:
    money, films = serve_agent(stack, currency.agent), serve_agent(stack, movies.agent)
    ui = serve_ui(stack, registry=registry_of(stack, tmp_path, money, films))

    page.goto(ui + "/agents")
    found = page.locator("[data-registry-agent]")
    expect(found).to_have_count(2)
    page.fill("[name=registry-query]", "films")
    page.locator("#registry button[type=submit]").click()
    expect(found).to_have_count(1)
    expect(found.first).to_contain_text("Movies")

    found.first.get_by_role("button", name="add").click()
    expect(page.locator("#agents [data-agent]")).to_contain_text("Movies")


def test_without_a_registry_the_page_has_no_registry_section(stack: ExitStack) -> None:
    ui = serve_ui(stack)
    with ui_client(ui) as client:
        answer = client.get("/api/registry", params={"q": "anything"}).json()
    assert answer == {"registry": None, "agents": [], "total": 0}


def test_a_registry_that_does_not_answer_is_said_so(stack: ExitStack) -> None:
    ui = serve_ui(stack, registry="http://127.0.0.1:9")
    with ui_client(ui) as client:
        answer = client.get("/api/registry")
    assert answer.status_code == 502 and "cannot connect" in answer.json()["error"]
