"""The browser fixtures of the UI tests, as a pytest plugin (a test module names it in
`pytest_plugins`): headless Chromium, and a page per test whose screenshot is saved under
test-artifacts/ui/, and the servers it talks to (`stack`); pages of other sizes, and axe-core
run in them."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

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
AXE = Path(__file__).resolve().parent / "js" / "node_modules" / "axe-core" / "axe.min.js"


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


@contextmanager
def opened_page(
    browser: Browser, name: str, width: int = 1200, height: int = 900, **options: Any
) -> Iterator[Page]:
    """A fresh page of `width` x `height` (`options` go to the browser context, e.g. a
    phone's `is_mobile`, `has_touch`); its screenshot is saved as `name` when it closes. It
    fails when the page's script failed or broke its Content-Security-Policy."""
    context = browser.new_context(viewport={"width": width, "height": height}, **options)
    opened = context.new_page()
    opened.set_default_timeout(WAIT_MS)
    errors: list[str] = []
    opened.on("pageerror", lambda error: errors.append(str(error)))
    # The UI's Content-Security-Policy holds: every flow runs without one violation.
    opened.on(
        "console", lambda m: errors.append(m.text) if "Content Security Policy" in m.text else None
    )
    try:
        yield opened
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        opened.screenshot(path=str(ARTIFACTS / f"{name}.png"), full_page=True)
    finally:
        context.close()
    assert not errors, f"the page's script failed or broke the CSP: {errors}"


def with_axe(page: Page) -> None:
    """Load axe-core (tests/js, `npm ci --prefix tests/js`) into every document `page` opens
    from now on (an init script, which the UI's Content-Security-Policy does not stop)."""
    if not AXE.exists():
        pytest.fail(f"{AXE} is missing: `npm ci --prefix tests/js` installs axe-core")
    page.add_init_script(path=str(AXE))


def serious_violations(page: Page) -> list[str]:
    """What axe-core finds serious or critical on the page as it stands (see `with_axe`)."""
    found: list[str] = page.evaluate(
        """async () => (await axe.run(document, { resultTypes: ["violations"] })).violations
            .filter((v) => v.impact === "serious" || v.impact === "critical")
            .map((v) => `${v.id} (${v.help}): ` + v.nodes.map((n) => n.target.join(" ")))"""
    )
    return found
