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

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "ui"
WAIT_MS = 15_000


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
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    opened = context.new_page()
    opened.set_default_timeout(WAIT_MS)
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    # The UI's Content-Security-Policy holds: every flow runs without one violation.
    opened.on(
        "console", lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None
    )
    yield opened
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    opened.screenshot(path=str(ARTIFACTS / f"{request.node.name}.png"), full_page=True)
    context.close()
    assert not errors, f"the page's script failed or broke the CSP: {errors}"
