"""Screenshots of the UI's pages compared with the baselines stored in tests/ui_baselines/.

A screenshot passes when it has the baseline's size (within a few pixels: a font's rounding)
and at most TOLERANCE of its pixels differ visibly from it. Times and ids change from run to
run, so the tests mask them. After a change of layout, `make ui-baselines` (which runs the
screenshot tests with ACCORD_UI_BASELINES=update) writes the new baselines, to be looked at
and committed; a failing comparison leaves the screenshot and the difference under
test-artifacts/ui/.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PIL import Image, ImageChops
from playwright.sync_api import Page

from ui_chromium import ARTIFACTS

BASELINES = Path(__file__).resolve().parent / "ui_baselines"
TOLERANCE = 0.02
"""The share of pixels that may differ from the baseline."""
SIZE_SLACK = 8
"""How many pixels the height may differ by (text rounding); the width must be the same."""
VISIBLE = 48
"""A pixel differs when one of its channels is this far from the baseline's (of 255)."""


def updating() -> bool:
    return os.environ.get("ACCORD_UI_BASELINES") == "update"


def assert_looks_like_baseline(page: Page, name: str, mask: list[Any] | None = None) -> None:
    """The full page as the baseline `name`.png shows it (written anew when updating)."""
    BASELINES.mkdir(exist_ok=True)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    baseline = BASELINES / f"{name}.png"
    taken = ARTIFACTS / f"screen-{name}.png"
    page.screenshot(path=str(taken), full_page=True, mask=mask or [], animations="disabled")
    if updating():
        baseline.write_bytes(taken.read_bytes())
        return
    assert baseline.exists(), f"no baseline {baseline}: `make ui-baselines` writes it"
    with Image.open(baseline) as expected_file, Image.open(taken) as actual_file:
        expected, actual = expected_file.convert("RGB"), actual_file.convert("RGB")
    assert actual.width == expected.width, f"{name}: {actual.width} px wide, not {expected.width}"
    assert abs(actual.height - expected.height) <= SIZE_SLACK, (
        f"{name}: {actual.height} px high, the baseline {expected.height}"
    )
    height = min(actual.height, expected.height)
    box = (0, 0, actual.width, height)
    difference = ImageChops.difference(actual.crop(box), expected.crop(box))
    seen = difference.point(lambda value: 255 if value >= VISIBLE else 0).convert("L")
    changed = 1 - seen.histogram()[0] / (actual.width * height)
    if changed > TOLERANCE:
        seen.save(ARTIFACTS / f"screen-{name}-difference.png")
    assert changed <= TOLERANCE, f"{name}: {changed:.1%} of the pixels differ from the baseline"
