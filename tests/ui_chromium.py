"""Pages of the UI tests in Chromium: opened at any size (a phone's too), failing on a script
error or a broken Content-Security-Policy, their screenshots saved under test-artifacts/ui/;
axe-core run in them."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Browser, Page, expect

ARTIFACTS = Path(__file__).resolve().parent.parent / "test-artifacts" / "ui"
WAIT_MS = 15_000
expect.set_options(timeout=WAIT_MS)  # assertions wait as long as actions: a loaded machine
AXE = Path(__file__).resolve().parent / "js" / "node_modules" / "axe-core" / "axe.min.js"


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
