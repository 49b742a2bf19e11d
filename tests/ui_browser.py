"""The browser fixtures of the UI tests, as a pytest plugin (a test module names it in
`pytest_plugins`): headless Chromium, and a page per test whose screenshot is saved under
test-artifacts/ui/, and the servers it talks to (`stack`)."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import ExitStack
from pathlib import Path

import pytest
from playwright.sync_api import Browser, Page, sync_playwright

from ui_chromium import opened_page

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if shutil.which("chromium") is None and not Path(CHROMIUM).exists():
        pytest.fail(
            "chromium is not installed: `make pytest` installs it (apt-get install chromium)"
        )
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield launched
        launched.close()


@pytest.fixture
def stack() -> Iterator[ExitStack]:
    """The servers of a test: they stop after its page is closed (no stream left open)."""
    with ExitStack() as servers:
        yield servers


@pytest.fixture
def page(browser: Browser, stack: ExitStack, request: pytest.FixtureRequest) -> Iterator[Page]:
    """A fresh page; its screenshot is saved when the test ends, whatever the outcome."""
    with opened_page(browser, request.node.name) as opened:
        yield opened
